#ifndef PLACEMENT_SERVICES_API_RUN_VALIDATION_H_
#define PLACEMENT_SERVICES_API_RUN_VALIDATION_H_

#include <vector>

#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "core/field_violation.h"
#include "core/pool.h"
#include "core/sku.h"
#include "placement/v1/telemetry.pb.h"
#include "services/api/run_convert.h"

namespace placement::services {

// Bounds on uploaded telemetry; a value past one is refused, never clipped.
inline constexpr size_t kMaxIdLength = 128;
inline constexpr size_t kMaxNodeNames = 512;
inline constexpr size_t kMaxNodeNameLength = 253;
inline constexpr size_t kMaxFailureReasonLength = 4096;
inline constexpr size_t kMaxEvals = 64;
inline constexpr double kMaxTokensPerSecond = 1e9;
inline constexpr int kMaxSamplesPerMessage = 10000;
// The bounds of a run's figures are core's (core/evidence/measured_run.h).

// Whether `text` is a UUID in canonical 8-4-4-4-12 hex form.
bool IsUuid(absl::string_view text);

// An upload is converted once (UploadedRunFromProto); `converted` is that
// conversion of `run`, and the same object goes on to storage
// (RunToStoreFromProto).
//
// Every check of an uploaded run that needs no database: its shape here
// (identifiers, lengths, required fields, enum ranges, timestamps, the evals'
// shape) and the domain rules of core on the converted run
// (core::ValidateRecipe, core::ValidateMeasuredRun: figures finite and in
// bounds, consistent with each other and with the wall time). Field paths
// start with "run.". `now` bounds timestamps from the future.
core::FieldViolations ValidateRunFields(const v1::BenchmarkRun& run,
                                        const UploadedRun& converted,
                                        absl::Time now);

// The checks against the catalog: the SKU and the evals' serving SKUs are
// named exactly, the pool exists, and core's rules of a run in its pool and
// on its card hold (core::ValidateMeasuredRunInPool, ...OnSku). `pool` is
// null when no pool has the run's pool name.
core::FieldViolations ValidateRunAgainstCatalog(
    const v1::BenchmarkRun& run, const UploadedRun& converted,
    const core::Pool* pool, const std::vector<core::GpuSku>& catalog);

// The same checks for a caller that holds only the proto (the fuzz
// targets): they convert `run` themselves.
core::FieldViolations ValidateRunFields(const v1::BenchmarkRun& run,
                                        absl::Time now);
core::FieldViolations ValidateRunAgainstCatalog(
    const v1::BenchmarkRun& run, const core::Pool* pool,
    const std::vector<core::GpuSku>& catalog);

// Checks one message of a sample stream; paths like "samples[3].step".
core::FieldViolations ValidateSampleBatch(
    const v1::StreamStepSamplesRequest& request, absl::Time now);

}  // namespace placement::services

#endif  // PLACEMENT_SERVICES_API_RUN_VALIDATION_H_
