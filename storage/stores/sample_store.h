#ifndef PLACEMENT_STORAGE_SAMPLE_STORE_H_
#define PLACEMENT_STORAGE_SAMPLE_STORE_H_

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "storage/records/sample_records.h"
#include "storage/session/db_session.h"

namespace placement::storage {

// Who appends to a run's samples. A stream opened by the first batch
// belongs to `team` (kept from schema 0023 on); a batch for a stream that
// exists, or for a run uploaded before its first batch, goes on only if
// `may_append` accepts that stream's (or run's) team, else its answer is
// returned and nothing is written. Unset `may_append`: anyone may.
struct StreamAccess {
  std::string team;
  std::function<absl::Status(const std::string& team)> may_append;
};

struct AppendResult {
  SampleProgress progress;
  int64_t stored = 0;      // new samples written by this call
  int64_t duplicates = 0;  // samples of this call that were already stored
  // Of the duplicates, those whose values differ from the stored sample (or
  // from the first of the batch for the step): kept as first stored.
  int64_t conflicting = 0;
};

// Appends a batch of samples of `run_id` in one transaction, with one
// binary COPY.
// Samples whose (run, step) is already stored, or repeated inside the batch,
// are skipped, so a re-sent batch is stored once; those that say something
// else than the sample kept are counted as conflicting. Concurrent appends to
// the same run serialize on the run's progress row. Nothing is acknowledged
// before the commit. `access`: see StreamAccess.
absl::StatusOr<AppendResult> AppendSamples(DbSession& session,
                                           const std::string& run_id,
                                           std::vector<StepSampleRow> samples,
                                           const StreamAccess& access);

// The committed progress of a run's samples (committed_through_step -1 and
// no samples when none arrived).
absl::StatusOr<SampleProgress> GetSampleProgress(DbSession& session,
                                                 const std::string& run_id);

// Creates the monthly step_samples partitions from the month of `from` for
// `months` months, if missing. Returns how many it created.
absl::StatusOr<int> EnsureSamplePartitions(DbSession& session, absl::Time from,
                                           int months);

}  // namespace placement::storage

#endif  // PLACEMENT_STORAGE_SAMPLE_STORE_H_
