#ifndef PLACEMENT_STORAGE_PLAN_LISTING_H_
#define PLACEMENT_STORAGE_PLAN_LISTING_H_

// Recorded plans and their outcomes, listed newest first for people to
// browse (the web console): a page of plans with what each asked and chose,
// and the predicted-against-observed pairs of one SKU behind
// GetPlanAccuracy's figures. Both are bounded reads on an index: the
// plans' primary key (plan ids are time-ordered UUIDs) and
// plan_outcomes (sku_id, recorded_at).

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "storage/session/db_session.h"

namespace placement::storage {

// One recorded plan, without its answer.
struct PlanSummary {
  std::string plan_id;
  absl::Time created_at;
  std::string team;
  std::string recipe_key;
  std::string objective;    // LOWEST_COST, SHORTEST_TIME
  std::string chosen_pool;  // empty: no candidate
  std::string chosen_sku;
  std::string request;  // serialized placement.v1.PlacePlanRequest
  int64_t warnings = 0;
};

struct PlanSummaryPage {
  std::vector<PlanSummary> plans;
  bool more = false;  // whether older plans exist
};

// Up to `page_size` plans, newest first (by plan id), older than
// `before_plan_id` (a UUID; empty: from the newest), of `teams` (empty:
// of every team and of none).
absl::StatusOr<PlanSummaryPage> ListRecentPlans(
    DbSession& session, const std::string& before_plan_id, int page_size,
    const std::vector<std::string>& teams);

// A run that carried a plan out, with what the plan predicted for it.
struct PlanOutcomePoint {
  std::string run_id;
  std::string plan_id;
  std::string pool_name;
  std::string basis;  // MEASURED, TRANSFERRED, ESTIMATED
  absl::Time recorded_at;
  double predicted_peak_memory_gb = 0;
  double observed_peak_memory_gb = 0;
  double predicted_gpu_hours_per_successful_step = 0;
  // Absent when the run completed no step.
  std::optional<double> observed_gpu_hours_per_successful_step;
};

// The newest `limit` outcomes of runs on `sku_id` recorded in [from, to)
// (infinite bounds: no bound), newest first, of the plans of `teams`
// (empty: of every plan, as PlanAccuracy).
absl::StatusOr<std::vector<PlanOutcomePoint>> ListPlanOutcomes(
    DbSession& session, const std::string& sku_id, absl::Time from,
    absl::Time to, int limit, const std::vector<std::string>& teams);

}  // namespace placement::storage

#endif  // PLACEMENT_STORAGE_PLAN_LISTING_H_
