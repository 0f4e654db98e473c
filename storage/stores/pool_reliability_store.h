#ifndef PLACEMENT_STORAGE_POOL_RELIABILITY_STORE_H_
#define PLACEMENT_STORAGE_POOL_RELIABILITY_STORE_H_

#include <pqxx/pqxx>
#include <vector>

#include "absl/status/statusor.h"
#include "core/evidence/pool_reliability.h"
#include "storage/session/db_session.h"

namespace placement::storage {

// pool_reliability_rollups (migration 0017) and the evidence_rollups busy
// columns beside it are maintained by the database itself (triggers on
// benchmark_runs): no binary writes them, so a run stored by any release
// is counted. This binary only reads them.

// Which of them the schema has. A binary started before `migrate up`
// refuses writes but still plans from what it can read: the catalog reads
// ask this first, in their own transaction, and leave out (zero) what an
// older schema lacks.
enum class FailureEvidence {
  kNone,           // before migration 0017
  kPerRun,         // 0017: failures per run record, wall time as reported
  kPerAttempt,     // 0022: per attempt, wall time as counted (run_attempts.h)
  kMostFailedRun,  // 0028: and each rollup's most-failed run
                   // (most_failed_run.h)
};

// Throws what libpqxx throws.
FailureEvidence FailureEvidenceIn(pqxx::transaction_base& txn);

// Every row, by (pool name, multi_gpu), inside the caller's transaction
// (microseconds read as hours). On a 0017 schema the per-run figures stand
// in for the per-attempt ones (each run one attempt); nothing on one
// without the table.
std::vector<core::PoolReliabilityRollup> ReadPoolReliability(
    pqxx::transaction_base& txn, FailureEvidence schema);

// The same in a transaction of its own; empty on a schema without it.
absl::StatusOr<std::vector<core::PoolReliabilityRollup>> ListPoolReliability(
    DbSession& session);

}  // namespace placement::storage

#endif  // PLACEMENT_STORAGE_POOL_RELIABILITY_STORE_H_
