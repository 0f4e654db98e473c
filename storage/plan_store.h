#ifndef PLACEMENT_STORAGE_PLAN_STORE_H_
#define PLACEMENT_STORAGE_PLAN_STORE_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "storage/db_session.h"

namespace placement::storage {

// What a plan predicted for one candidate pool.
struct PlanPrediction {
  std::string pool_name;
  std::string sku_id;
  int rank = 0;
  std::string basis;  // MEASURED, TRANSFERRED, ESTIMATED
  double peak_memory_gb = 0;
  double gpu_hours_per_successful_step = 0;
};

struct PlanRecord {
  std::string plan_id;
  std::string request_id;  // empty: none
  std::string team;
  std::string recipe_key;
  std::string objective;
  std::string chosen_pool;  // empty: no candidate
  std::string chosen_sku;
  std::string request;   // serialized placement.v1.PlacePlanRequest
  std::string response;  // serialized placement.v1.PlacePlanResponse
  std::vector<PlanPrediction> predictions;
};

// Records a plan and its predictions in one transaction. When another plan
// already holds the same request_id, nothing is written and that plan's
// stored response is returned instead; otherwise returns `plan.response`.
absl::StatusOr<std::string> InsertPlan(DbSession& session,
                                       const PlanRecord& plan);

// The stored response of the plan made for `request_id`, if any.
absl::StatusOr<std::optional<std::string>> FindPlanByRequestId(
    DbSession& session, const std::string& request_id);

struct StoredPlan {
  std::string request;
  std::string response;
};

// NOT_FOUND when no plan has that id.
absl::StatusOr<StoredPlan> GetPlan(DbSession& session,
                                   const std::string& plan_id);

// Prediction error statistics per SKU over the outcomes recorded in
// [from, to), in percent of the observed value.
struct SkuAccuracyRow {
  std::string sku_id;
  int64_t runs = 0;
  double peak_memory_median_abs_error_pct = 0;
  double peak_memory_p90_abs_error_pct = 0;
  double peak_memory_mean_error_pct = 0;
  int64_t runs_with_successful_steps = 0;
  double gpu_hours_per_step_median_abs_error_pct = 0;
  double gpu_hours_per_step_p90_abs_error_pct = 0;
  double gpu_hours_per_step_mean_error_pct = 0;
};

absl::StatusOr<std::vector<SkuAccuracyRow>> PlanAccuracy(DbSession& session,
                                                         absl::Time from,
                                                         absl::Time to);

}  // namespace placement::storage

#endif  // PLACEMENT_STORAGE_PLAN_STORE_H_
