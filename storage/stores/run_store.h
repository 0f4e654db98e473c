#ifndef PLACEMENT_STORAGE_RUN_STORE_H_
#define PLACEMENT_STORAGE_RUN_STORE_H_

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "core/evidence/eval_evidence.h"
#include "core/evidence/evidence.h"
#include "core/recipe.h"
#include "storage/records/run_records.h"
#include "storage/session/db_session.h"
#include "storage/session/transaction_horizon.h"
#include "storage/stores/pool_reliability_store.h"

namespace placement::storage {

// GPU-microseconds of a run: GPU count x wall time, exact.
int64_t GpuMicroseconds(const core::MeasuredRun& run);

// Stores `run` and adds it to the evidence rollup of its (recipe key, SKU) in
// one transaction; the rollup upsert is a single atomic statement, so
// concurrent uploads never lose an update. A run that names a plan is
// compared with the plan's prediction for its pool (plan_outcomes), in the
// same transaction, and so is the run's daily cost rollup row
// (storage/stores/cost_store.h, at the pool's rates as they are now) and its
// evals (eval_results when the schema has it: storage/stores/eval_store.h), and
// its wait (pool_states, when it carries one and the schema has it). A run that
// names a stored plan the uploader may not name (may_name_plan) is refused
// with its answer, nothing written. Idempotent on run_id:
//  - first time: stored, acknowledged;
//  - same run_id, same upload bytes and team: the original
//    acknowledgement, nothing written;
//  - same run_id, other upload bytes or team: ALREADY_EXISTS, nothing
//    changed.
absl::StatusOr<RunAck> InsertRun(DbSession& session, const RunToStore& run);

// NOT_FOUND when no run has that id.
absl::StatusOr<StoredRun> GetRun(DbSession& session, const std::string& run_id);

struct RunFilter {
  std::string pool;                // empty: any
  std::string sku;                 // empty: any
  std::string recipe_key;          // empty: any
  std::vector<std::string> teams;  // runs of these teams; empty: any
};

// Position in the newest-first listing: the last row of the previous page.
struct RunCursor {
  absl::Time accept_time = absl::InfiniteFuture();
  std::string run_id;  // empty: from the start
};

struct RunPage {
  std::vector<RunSummary> runs;
  bool more = false;
};

absl::StatusOr<RunPage> ListRuns(DbSession& session, const RunFilter& filter,
                                 const RunCursor& after, int page_size);

// A stored rollup with the normalized recipe it belongs to.
struct StoredRollup {
  std::string recipe_proto;  // serialized placement.v1.Recipe
  core::EvidenceRollup rollup;
};

// Every rollup (the planner's evidence), for a replica's in-memory copy.
absl::StatusOr<std::vector<StoredRollup>> ListRollups(DbSession& session);
// The same inside the caller's transaction `txn` (for reads that must see
// one point in time, see ReadCatalog); throws what libpqxx throws, so call it
// only inside DbSession::Run. `schema` (FailureEvidenceIn) says which of
// migration 0017's busy and succeeded GPU time and 0022's per-attempt
// figures the schema has; what it lacks is left at 0.
std::vector<StoredRollup> ReadRollups(pqxx::transaction_base& txn,
                                      FailureEvidence schema);
// Only the rows inserted or updated by transactions `since` did not see
// (migration 0009), inside the caller's transaction.
std::vector<StoredRollup> ReadRollupsChangedSince(
    pqxx::transaction_base& txn, const TransactionHorizon& since,
    FailureEvidence schema);

}  // namespace placement::storage

#endif  // PLACEMENT_STORAGE_RUN_STORE_H_
