#ifndef PLACEMENT_SERVICES_API_RUN_VALIDATION_H_
#define PLACEMENT_SERVICES_API_RUN_VALIDATION_H_

#include <vector>

#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "core/field_violation.h"
#include "core/pool.h"
#include "core/sku.h"
#include "placement/v1/telemetry.pb.h"

namespace placement::services {

// Bounds on uploaded telemetry; a value past one is refused, never clipped.
inline constexpr size_t kMaxIdLength = 128;
inline constexpr size_t kMaxNodeNames = 512;
inline constexpr size_t kMaxNodeNameLength = 253;
inline constexpr size_t kMaxFailureReasonLength = 4096;
inline constexpr size_t kMaxEvals = 64;
inline constexpr int kMaxRetries = 10000;
inline constexpr int64_t kMaxSteps = 1'000'000'000'000;
inline constexpr double kMaxStepTimeSeconds = 7 * 24 * 3600.0;
inline constexpr double kMaxTokensPerSecond = 1e9;
inline constexpr int kMaxSamplesPerMessage = 10000;
// Peak memory may exceed the nominal capacity by this share (GB vs GiB
// rounding in tools) before it is absurd, unless offload is reported.
inline constexpr double kPeakMemoryTolerance = 0.02;

// Whether `text` is a UUID in canonical 8-4-4-4-12 hex form.
bool IsUuid(absl::string_view text);

// Every check of an uploaded run that needs no database: identifiers,
// figures (finite, positive, in bounds, consistent with each other and with
// the wall time), enums, the recipe, the evals' shape. Field paths start with
// "run.". `now` bounds timestamps from the future.
core::FieldViolations ValidateRunFields(const v1::BenchmarkRun& run,
                                        absl::Time now);

// The checks against the catalog: the SKU is named exactly and is the pool's
// SKU; the GPU count fits the pool; the peak memory is possible on the card
// unless offload was reported; the evals' serving SKUs are exact. `pool` is
// null when no pool has the run's pool name.
core::FieldViolations ValidateRunAgainstCatalog(
    const v1::BenchmarkRun& run, const core::Pool* pool,
    const std::vector<core::GpuSku>& catalog);

// Checks one message of a sample stream; paths like "samples[3].step".
core::FieldViolations ValidateSampleBatch(
    const v1::StreamStepSamplesRequest& request, absl::Time now);

}  // namespace placement::services

#endif  // PLACEMENT_SERVICES_API_RUN_VALIDATION_H_
