#include "services/rpc/plan_on_snapshot.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/field_violation.h"
#include "core/plan/plan_with_time.h"
#include "core/plan/planner.h"
#include "core/sku.h"
#include "services/api/run_validation.h"

namespace placement::services {
namespace {

constexpr int kMaxAllowedPools = 1000;
constexpr int kMaxRequiredLabels = 32;

}  // namespace

core::FieldViolations PlanRequestViolations(
    const v1::PlacePlanRequest& request, const std::vector<core::GpuSku>& skus,
    core::PlanRequest* plan_request) {
  core::FieldViolations violations;
  if (!request.has_recipe()) violations.push_back({"recipe", "is required"});
  core::FieldViolations core_violations =
      core::ValidatePlanRequest(*plan_request);
  violations.insert(violations.end(), core_violations.begin(),
                    core_violations.end());
  core::FieldViolations time_violations =
      core::ValidateTimeObjective(plan_request->constraints);
  violations.insert(violations.end(), time_violations.begin(),
                    time_violations.end());
  if (request.team().size() > kMaxIdLength) {
    violations.push_back(
        {"team", absl::StrCat("at most ", kMaxIdLength, " characters")});
  }
  if (request.request_id().size() > kMaxIdLength) {
    violations.push_back(
        {"request_id", absl::StrCat("at most ", kMaxIdLength, " characters")});
  }
  if (request.constraints().allowed_pools_size() > kMaxAllowedPools) {
    violations.push_back({"constraints.allowed_pools",
                          absl::StrCat("at most ", kMaxAllowedPools)});
  }
  if (request.constraints().required_labels_size() > kMaxRequiredLabels) {
    violations.push_back({"constraints.required_labels",
                          absl::StrCat("at most ", kMaxRequiredLabels)});
  }
  if (request.has_serving()) {
    absl::StatusOr<core::GpuSku> sku =
        core::ResolveSku(request.serving().sku(), skus);
    if (!sku.ok()) {
      violations.push_back(
          {"serving.sku", std::string(sku.status().message())});
    } else {
      plan_request->serving->sku_id = sku->id;
    }
  }
  return violations;
}

namespace {

bool HasTrainingPool(const std::vector<core::Pool>& pools) {
  for (const core::Pool& pool : pools) {
    if (pool.purpose == core::PoolPurpose::kTraining) return true;
  }
  return false;
}

}  // namespace

absl::Status ValidatePlanOnSnapshot(const v1::PlacePlanRequest& request,
                                    const CatalogSnapshot& snapshot,
                                    core::PlanRequest* plan_request) {
  core::FieldViolations violations =
      PlanRequestViolations(request, snapshot.skus, plan_request);
  if (!violations.empty()) {
    return core::InvalidArgumentWithViolations(violations);
  }
  if (!HasTrainingPool(snapshot.pools)) {
    return absl::FailedPreconditionError(
        "no training pool exists: create one with "
        "CatalogService.CreatePool (purpose TRAINING)");
  }
  return absl::OkStatus();
}

absl::StatusOr<core::PlanResult> PlanOnSnapshot(
    const core::PlanRequest& plan_request, const CatalogSnapshot& snapshot,
    const std::string& team, absl::Time now,
    absl::Duration pool_state_max_age) {
  // ValidatePlanOnSnapshot ran core::ValidatePlanRequest: plan without
  // validating again. The standard that governs the recipe (only the
  // fleet's standards and the plan's team's apply) and the pools' queues
  // come from the same snapshot (no database read).
  const CatalogSnapshot* queues = &snapshot;
  return core::PlanWithTime(
      plan_request, snapshot.pools, snapshot.skus, snapshot,
      snapshot.fleet.get(), snapshot.StandardsFor(team),
      core::QueueView{[queues](absl::string_view pool) {
                        return queues->ReportedQueue(pool);
                      },
                      now, pool_state_max_age});
}

}  // namespace placement::services
