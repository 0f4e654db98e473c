#ifndef PLACEMENT_STORAGE_BAKE_OFF_STORE_H_
#define PLACEMENT_STORAGE_BAKE_OFF_STORE_H_

// The uploads that carried out a plan's bake-off runs
// (PlacementService.GetBakeOffStatus, WriteStandard).

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "storage/records/bake_off_records.h"
#include "storage/session/db_session.h"

namespace placement::storage {

// At most this many uploads per target, newest first. A plan has at most
// core::kMaxMeasurementRuns + 2 targets (its proposed runs, its first
// choice and the pool a standard names): at most 400 rows of columns a
// call.
inline constexpr int kMaxUploadsPerBakeOffRun = 100;
// A run without its failure reason in run_failure_reasons has its upload
// read only when it is at most this size (a run's known fields fit in a few
// kB; the reason itself is at most 4,096 characters): the bytes a call
// reads stay bounded by rows x this, whatever the message limit.
inline constexpr int kMaxUploadBytesReadForFailureReason = 16 * 1024;

// For each target, the runs on its pool of its recipe key that either name
// `plan_id` or were stored at or after `plan_created`, newest first;
// all in one read-only transaction. For a plan of a team (`plan_team` not
// empty) a run matched by its recipe key counts only when it carries that
// team (one naming the plan was checked at upload). Reads the runs'
// columns, not their uploads (but see MatchedUpload). Uses
// benchmark_runs_plan_idx and benchmark_runs_recipe_sku_idx (no new index).
absl::StatusOr<std::vector<std::vector<MatchedUpload>>> FindBakeOffUploads(
    DbSession& session, const std::string& plan_id, absl::Time plan_created,
    const std::vector<BakeOffTarget>& targets, const std::string& plan_team);

}  // namespace placement::storage

#endif  // PLACEMENT_STORAGE_BAKE_OFF_STORE_H_
