#ifndef PLACEMENT_SERVICES_RPC_PLAN_ON_SNAPSHOT_H_
#define PLACEMENT_SERVICES_RPC_PLAN_ON_SNAPSHOT_H_

// PlacePlan's checks and planning on a replica's snapshot, without the
// plan cache, the record or the answer's bytes: PlacementService plans
// through these, and the console's standards page re-plans a standard's
// proving request through them to show what a plan would say now.

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "core/field_violation.h"
#include "core/plan/plan_types.h"
#include "core/sku.h"
#include "placement/v1/placement.pb.h"
#include "services/plan/evidence_cache.h"

namespace placement::services {

// Every field violation of `request` (converted into `*plan_request`)
// beyond its shape, as ValidatePlanOnSnapshot finds them against `skus`
// (resolving the serving SKU into `*plan_request`); empty when none.
core::FieldViolations PlanRequestViolations(
    const v1::PlacePlanRequest& request, const std::vector<core::GpuSku>& skus,
    core::PlanRequest* plan_request);

// Checks `request` (converted into `*plan_request`) beyond its shape:
// core::ValidatePlanRequest, the time objective's settings
// (core::ValidateTimeObjective), the lengths of its ids and lists, the serving
// SKU (resolved against the snapshot's catalog into `*plan_request`).
// INVALID_ARGUMENT with every field violation; FAILED_PRECONDITION when
// the snapshot has no training pool.
absl::Status ValidatePlanOnSnapshot(const v1::PlacePlanRequest& request,
                                    const CatalogSnapshot& snapshot,
                                    core::PlanRequest* plan_request);

// Plans a request that passed ValidatePlanOnSnapshot on the same snapshot
// (core::PlanWithTime): the planner, the standard that governs its recipe
// among the fleet's and `team`'s, and the pools' reported queues as of
// `now` (a report older than `pool_state_max_age` is stale).
// INVALID_ARGUMENT / NOT_FOUND as the planner.
absl::StatusOr<core::PlanResult> PlanOnSnapshot(
    const core::PlanRequest& plan_request, const CatalogSnapshot& snapshot,
    const std::string& team, absl::Time now, absl::Duration pool_state_max_age);

}  // namespace placement::services

#endif  // PLACEMENT_SERVICES_RPC_PLAN_ON_SNAPSHOT_H_
