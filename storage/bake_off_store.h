#ifndef PLACEMENT_STORAGE_BAKE_OFF_STORE_H_
#define PLACEMENT_STORAGE_BAKE_OFF_STORE_H_

// The uploads that carried out a plan's bake-off runs
// (PlacementService.GetBakeOffStatus, WriteStandard).

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "storage/bake_off_records.h"
#include "storage/db_session.h"

namespace placement::storage {

// At most this many uploads per target, newest first. A plan has at most
// core::kMaxMeasurementRuns + 1 targets (its proposed runs and its first
// choice): at most 300 rows of columns a call.
inline constexpr int kMaxUploadsPerBakeOffRun = 100;
// A run without its failure reason in run_failure_reasons has its upload
// read only when it is at most this size (a run's known fields fit in a few
// kB; the reason itself is at most 4,096 characters): the bytes a call
// reads stay bounded by rows x this, whatever the message limit.
inline constexpr int kMaxUploadBytesReadForFailureReason = 16 * 1024;

// For each target, the runs on its pool that
// either name `plan_id` or ran its recipe key and were stored at or after
// `plan_created`, newest first; all in one read-only transaction. Reads the
// runs' columns, not their uploads (but see MatchedUpload). Uses
// benchmark_runs_plan_idx and benchmark_runs_recipe_sku_idx (no new index).
absl::StatusOr<std::vector<std::vector<MatchedUpload>>> FindBakeOffUploads(
    DbSession& session, const std::string& plan_id, absl::Time plan_created,
    const std::vector<BakeOffTarget>& targets);

}  // namespace placement::storage

#endif  // PLACEMENT_STORAGE_BAKE_OFF_STORE_H_
