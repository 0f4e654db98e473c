#ifndef PLACEMENT_CORE_EVIDENCE_MEASURED_RUN_H_
#define PLACEMENT_CORE_EVIDENCE_MEASURED_RUN_H_

#include <cstdint>

#include "core/evidence/evidence.h"
#include "core/field_violation.h"
#include "core/pool.h"
#include "core/sku.h"

namespace placement::core {

// Bounds on a measured run's figures; a value past one is refused, never
// clipped.
inline constexpr int64_t kMaxSteps = 1'000'000'000'000;
inline constexpr double kMaxStepTimeSeconds = 7 * 24 * 3600.0;
inline constexpr double kMaxPeakMemoryGb = 4096;
inline constexpr int kMaxRetries = 10000;
// Peak memory may exceed what CUDA can allocate on the card
// (GpuSku::UsableMemoryGb, in GB) by this share (rounding in tools) before
// it is absurd, unless offload is reported.
inline constexpr double kPeakMemoryTolerance = 0.02;

// The rules of a measured run on its own, every broken one reported. Field
// paths are MeasuredRun's member names ("steps_succeeded", "ended",
// "step_time_p95_s"); the API maps them to its own.
//  - the GPU count is 1..kMaxGpuCount;
//  - steps: 0..kMaxSteps attempted, succeeded not negative and at most the
//    attempted;
//  - step times (mean, p50, p95) positive, finite, at most
//    kMaxStepTimeSeconds, and p95 >= p50;
//  - peak memory positive, finite, at most kMaxPeakMemoryGb;
//  - retries 0..kMaxRetries; retry_outcomes, when given, one failure
//    outcome for each retry;
//  - a run that opened collectives used some interconnect (not kNone);
//  - when both times are known (not InfinitePast): it did not end before it
//    started, and its steps (attempted x mean step time) fit inside its wall
//    time, with slack for clock granularity, and its wall time is no longer
//    than those steps plus kMaxPlausibleOverheadSeconds an attempt
//    (core/evidence/run_attempts.h: a run of days for minutes of steps is a
//    wrong clock or a bad upload, not evidence).
// Enum values that are kUnspecified are left to the caller (it knows whether
// they were sent at all) and skip the rules that read them.
FieldViolations ValidateMeasuredRun(const MeasuredRun& run);

// The rules of a run against the pool it ran in: the run's SKU is the pool's
// and its GPU count fits the pool.
FieldViolations ValidateMeasuredRunInPool(const MeasuredRun& run,
                                          const Pool& pool);

// The rule of a run against its card: the peak memory is possible on it
// (within kPeakMemoryTolerance) unless offload was reported.
FieldViolations ValidateMeasuredRunOnSku(const MeasuredRun& run,
                                         const GpuSku& sku);

}  // namespace placement::core

#endif  // PLACEMENT_CORE_EVIDENCE_MEASURED_RUN_H_
