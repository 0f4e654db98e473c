#ifndef PLACEMENT_STORAGE_PLAN_STORE_H_
#define PLACEMENT_STORAGE_PLAN_STORE_H_

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "storage/records/plan_accuracy_records.h"
#include "storage/session/db_session.h"

namespace placement::storage {

// What a plan result predicted for one candidate pool.
struct PlanPrediction {
  std::string pool_name;
  std::string sku_id;
  int rank = 0;
  std::string basis;  // MEASURED, TRANSFERRED, ESTIMATED
  double peak_memory_gb = 0;
  double gpu_hours_per_successful_step = 0;
  // The analytic model's figures before evidence and calibration.
  double prior_peak_memory_gb = 0;
  double prior_gpu_hours_per_successful_step = 0;
};

// A distinct planner result: stored once however many plans share it.
struct PlanResultRecord {
  std::string hash;      // sha256 of `response`
  std::string response;  // serialized placement.v1.PlacePlanResponse,
                         // without the per-plan fields
  std::vector<PlanPrediction> predictions;
};

// One plan answered.
struct PlacementRecord {
  std::string plan_id;
  std::string request_id;  // empty: none
  std::string team;
  std::string recipe_key;
  std::string objective;
  std::string chosen_pool;  // empty: no candidate
  std::string chosen_sku;
  std::string request;  // serialized placement.v1.PlacePlanRequest
  std::shared_ptr<const PlanResultRecord> result;
  absl::Time evidence_time;
  std::vector<std::string> warnings;
  absl::Time created_at;
};

// Records plans without a request_id in one transaction: each result not
// stored yet (with its predictions), then every placement with one prepared
// INSERT.
// Everything or nothing is written. Results for which `known(hash)` is true
// are taken as stored already and not sent again.
absl::Status InsertPlacements(
    DbSession& session, const std::vector<const PlacementRecord*>& plans,
    const std::function<bool(const std::string& hash)>& known);

// Records one plan that carries a request_id. When another plan already
// holds that request_id, nothing is written and that plan's id is returned.
absl::StatusOr<std::optional<std::string>> InsertPlacementWithRequestId(
    DbSession& session, const PlacementRecord& plan);

struct StoredPlan {
  std::string plan_id;
  std::string request;          // serialized PlacePlanRequest
  std::string result_response;  // serialized PlacePlanResponse, shared part
  absl::Time created_at;
  absl::Time evidence_time;
  std::vector<std::string> warnings;
  std::string team;  // the request's: who may read the plan
};

// NOT_FOUND when no plan has that id.
absl::StatusOr<StoredPlan> GetPlan(DbSession& session,
                                   const std::string& plan_id);

// The plan made for `request_id`, if any.
absl::StatusOr<std::optional<StoredPlan>> FindPlanByRequestId(
    DbSession& session, const std::string& request_id);

// The outcomes recorded in [from, to), of plans of `teams` (empty: of
// every plan).
absl::StatusOr<std::vector<SkuAccuracyRow>> PlanAccuracy(
    DbSession& session, absl::Time from, absl::Time to,
    const std::vector<std::string>& teams);

}  // namespace placement::storage

#endif  // PLACEMENT_STORAGE_PLAN_STORE_H_
