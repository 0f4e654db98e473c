#ifndef PLACEMENT_SERVICES_API_POOL_STATE_CONVERT_H_
#define PLACEMENT_SERVICES_API_POOL_STATE_CONVERT_H_

// placement.v1.PoolState <-> core::PoolState, the shape checks of a report,
// and what GetPoolState shows of a pool's queue.

#include <vector>

#include "core/field_violation.h"
#include "core/queue/pool_state.h"
#include "core/queue/queue_history.h"
#include "core/queue/run_time_model.h"
#include "core/queue/start_estimate.h"
#include "placement/v1/placement.pb.h"
#include "placement/v1/pool_state.pb.h"

namespace placement::services {

// The report as core reads it. Times not well formed (IsWellFormedTime) are
// left unset (observed: absl::InfinitePast()).
core::PoolState PoolStateFromProto(const v1::PoolState& state);
v1::PoolState PoolStateToProto(const core::PoolState& state);

// The report's shape (paths "state.running[2].plan_id"): the pool named, its
// timestamps well formed when set, durations positive, plan ids UUIDs.
// The rules of core (ValidatePoolState) come after, on the conversion.
core::FieldViolations ValidatePoolStateShape(const v1::PoolState& state);

// core's paths ("running[2].gpus") under "state.".
core::FieldViolations WithStatePaths(core::FieldViolations violations);

// What a plan of this service expected of a job of `gpus` GPUs it placed
// on `pool_name`: its candidate there of that GPU count (a plan lists a
// pool's layouts apart, and four GPUs finish sooner than one): expected
// wall time (the median) and the upper edge of its step-time band (the
// p90); nullopt when the plan had no such candidate or its response does
// not parse.
std::optional<core::PlannedRunTime> PlannedRunTimeFromPlan(
    const std::string& plan_response, const std::string& pool_name, int gpus);

// The start forecast a plan of this service made for `job`, which it placed
// on `pool_name` (job.plan_id): its first candidate there of the job's GPU
// count, before calibration, from the plan's time by the reporter's clock
// (the report it rested on, plus that report's age). nullopt when the plan
// has no such candidate, its start was unknown, or it does not parse.
std::optional<core::StartPrediction> StartPredictionFromPlan(
    const std::string& plan_response, const std::string& pool_name,
    const core::QueuedJob& job);

// The start forecast of a new job of `gpus` GPUs.
void StartForecastToProto(int gpus, const core::StartEstimate& estimate,
                          v1::StartForecast* out);

// The history's run times, waits and calibration (raw: the share of
// forecast starts by each level, 0.1 ... 0.9).
void HistoryToProto(const core::QueueHistory& history,
                    v1::QueueHistorySummary* out);

}  // namespace placement::services

#endif  // PLACEMENT_SERVICES_API_POOL_STATE_CONVERT_H_
