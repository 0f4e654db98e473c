#ifndef PLACEMENT_STORAGE_BAKE_OFF_STORE_H_
#define PLACEMENT_STORAGE_BAKE_OFF_STORE_H_

// The uploads that carried out a plan's bake-off runs
// (PlacementService.GetBakeOffStatus).

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "storage/bake_off_records.h"
#include "storage/db_session.h"

namespace placement::storage {

// At most this many uploads per target, newest first.
inline constexpr int kMaxUploadsPerBakeOffRun = 100;

// For each target, the runs on its pool of its recipe key that either name
// `plan_id` or were stored at or after `plan_created`, newest first;
// all in one read-only transaction. Uses benchmark_runs_plan_idx and
// benchmark_runs_recipe_sku_idx (no new index). For a plan of a team
// (`plan_team` not empty) a run matched by its recipe key counts only when
// it carries that team (one naming the plan was checked at upload).
absl::StatusOr<std::vector<std::vector<MatchedUpload>>> FindBakeOffUploads(
    DbSession& session, const std::string& plan_id, absl::Time plan_created,
    const std::vector<BakeOffTarget>& targets, const std::string& plan_team);

}  // namespace placement::storage

#endif  // PLACEMENT_STORAGE_BAKE_OFF_STORE_H_
