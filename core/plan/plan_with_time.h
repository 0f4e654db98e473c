#ifndef PLACEMENT_CORE_PLAN_PLAN_WITH_TIME_H_
#define PLACEMENT_CORE_PLAN_PLAN_WITH_TIME_H_

// A plan that knows which pool is free: the planner's candidates
// (core/plan/planner.h), each with when it would start (the pool's queue,
// core/queue/start_estimate.h) and finish (start + its expected wall time,
// the run's band from its step-time band), ranked by the request's
// objective:
//   - lowest cost, shortest time: as the planner ranks them (the wait
//     shown; a deadline still bounds the run alone, and a candidate whose
//     finish at the 90th percentile passes it says so);
//   - finish by a deadline: the cheapest candidate whose finish meets the
//     deadline at the 90th percentile (FITS before BORDERLINE, as for every
//     objective of time); when none can, the likeliest to meet it all the
//     same first, and the plan says so (DeadlineVerdict). A candidate whose
//     wait is unknown cannot be shown to meet it;
//   - cost of delay: cost + delay_cost_micros_per_hour x the expected hours
//     to finish (unknown waits after known ones).
// For the last two, each pool's configuration is the cheaper or the faster
// one the planner chooses (objective cost and time), whichever serves the
// objective. The guide's rules are the planner's: a pool the planner
// rejects (a serving pool among them) is never a candidate, however free.

#include <functional>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "core/evidence/evidence.h"
#include "core/evidence/fleet_model.h"
#include "core/field_violation.h"
#include "core/plan/plan_types.h"
#include "core/plan/standard.h"
#include "core/pool.h"
#include "core/queue/start_estimate.h"
#include "core/sku.h"

namespace placement::core {

// The most a later hour may be worth: beyond it is a unit mistake.
inline constexpr int64_t kMaxDelayCostMicrosPerHour = 100'000'000'000;

struct QueueView {
  // The queue of a pool by name; null when its orchestrator never reported.
  std::function<const PoolQueue*(absl::string_view pool_name)> queue_of;
  // How long ago each queue's report arrived is counted to this (the
  // service's clock, as PoolQueue::received).
  absl::Time now = absl::InfinitePast();
  absl::Duration max_age = absl::Minutes(10);
};

// Violations of the time objectives' settings: a deadline for
// kFinishByDeadline, a positive delay cost (at most
// kMaxDelayCostMicrosPerHour) for kCostOfDelay, and no delay cost for any
// other objective.
FieldViolations ValidateTimeObjective(const PlanConstraints& constraints);

// Plans `request` (validated already: ValidatePlanRequest and
// ValidateTimeObjective), applies the standard that governs it
// (ApplyStandard), sets every candidate's timing and ranks by the
// objective. NOT_FOUND for an unknown model, as the planner.
absl::StatusOr<PlanResult> PlanWithTime(const PlanRequest& request,
                                        const std::vector<Pool>& pools,
                                        const std::vector<GpuSku>& skus,
                                        const EvidenceSource& evidence,
                                        const FleetModel* fleet,
                                        const std::vector<Standard>& standards,
                                        const QueueView& queues);

// --- Its steps, each testable alone. ---

// When `candidate` would start on its pool, whose queue is `queue` (null:
// none reported) as of `now`, and finish; unknown past `max_age`.
CandidateTiming TimeCandidate(const Candidate& candidate,
                              const PoolQueue* queue, absl::Time now,
                              absl::Duration max_age);

// Ranks `result`'s candidates by the request's objective (timings set),
// first taking from `faster` (the same request planned for the shortest
// time; null: none) each pool's configuration where it serves the objective
// better; sets result->deadline for kFinishByDeadline, and the deadline
// warnings for the other objectives. Renumbers ranks; the plan's eval
// requirement and status follow the first candidate, and a standard whose
// pool is no longer first says why.
void RankByTime(const PlanRequest& request, const PlanResult* faster,
                PlanResult* result);

}  // namespace placement::core

#endif  // PLACEMENT_CORE_PLAN_PLAN_WITH_TIME_H_
