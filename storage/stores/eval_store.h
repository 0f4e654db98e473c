#ifndef PLACEMENT_STORAGE_EVAL_STORE_H_
#define PLACEMENT_STORAGE_EVAL_STORE_H_

// The evals of stored runs (eval_results, migration 0019): written with the
// run (InsertRun), read by the planner's snapshot and by ListEvalResults.
// Every read works on a schema before 0019 too (HasEvalResults), where there
// are none.

#include <pqxx/pqxx>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "core/evidence/eval_evidence.h"
#include "core/recipe.h"
#include "storage/records/eval_records.h"
#include "storage/session/db_session.h"
#include "storage/session/transaction_horizon.h"

namespace placement::storage {

// Whether the schema has migration 0019's eval_results.
bool HasEvalResults(pqxx::transaction_base& txn);

// Inserts the evals of a run just inserted into benchmark_runs in `txn`
// (ordinal = position in `evals`; recorded_at = the run's accepted_at).
// Throws what libpqxx throws; call only inside DbSession::Run.
void InsertEvals(pqxx::transaction_base& txn, const std::string& run_id,
                 const std::string& recipe_key,
                 const std::vector<core::EvalEvidence>& evals);

// Which eval_results this is: its file node, which a TRUNCATE or a table
// dropped and created again changes (0 before 0019). placementd never
// updates nor deletes its rows, so evals read from the table with the same
// id stay exact, and only those inserted since need reading.
int64_t EvalTableId(pqxx::transaction_base& txn);

// Every eval, in (recorded, run id, ordinal) order; none before 0019.
std::vector<core::EvalEvidence> ReadEvals(pqxx::transaction_base& txn);
// Only those inserted by transactions `since` did not see (rows are never
// updated nor deleted); none before 0019.
std::vector<core::EvalEvidence> ReadEvalsChangedSince(
    pqxx::transaction_base& txn, const TransactionHorizon& since);

struct EvalFilter {
  std::string recipe_key;      // empty: any
  std::string serving_sku_id;  // empty: any
  core::Precision serving_precision = core::Precision::kUnspecified;  // any
  // Only evals of runs of these teams; empty: any team.
  std::vector<std::string> teams;
};

// Position in the newest-first listing: the last row of the previous page.
struct EvalCursor {
  absl::Time recorded = absl::InfiniteFuture();
  std::string run_id;  // empty: from the start
  int ordinal = 0;
};

struct EvalPage {
  std::vector<StoredEval> evals;
  bool more = false;
};

// Newest first (recorded time, then run id and ordinal, descending).
// FAILED_PRECONDITION on a schema before 0019 (SchemaLacks).
absl::StatusOr<EvalPage> ListEvals(DbSession& session, const EvalFilter& filter,
                                   const EvalCursor& after, int page_size);

}  // namespace placement::storage

#endif  // PLACEMENT_STORAGE_EVAL_STORE_H_
