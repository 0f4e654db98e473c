#ifndef PLACEMENT_STORAGE_CATALOG_READ_H_
#define PLACEMENT_STORAGE_CATALOG_READ_H_

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "core/evidence/eval_criterion.h"
#include "core/evidence/eval_evidence.h"
#include "core/evidence/pool_reliability.h"
#include "core/sku.h"
#include "storage/records/standard_records.h"
#include "storage/session/db_session.h"
#include "storage/session/transaction_horizon.h"
#include "storage/stores/pool_state_store.h"
#include "storage/stores/pool_store.h"
#include "storage/stores/run_store.h"
#include "storage/stores/token_store.h"

namespace placement::storage {

// Everything a replica plans from: the SKUs, the pools, the evidence rollups,
// the pools' failure sums and the tokens.
struct CatalogRows {
  // The transaction's own snapshot: exactly which committed transactions the
  // rows below include (an evidence version is one of them).
  TransactionHorizon horizon;
  std::vector<core::GpuSku> skus;
  std::vector<PoolRecord> pools;
  std::vector<StoredRollup> rollups;
  // By (pool name, multi_gpu); empty before migration 0017.
  std::vector<core::PoolReliabilityRollup> pool_reliability;
  std::vector<TokenRecord> tokens;
  // The evals of stored runs; empty before migration 0019. Only those
  // inserted since `evals_held` when `evals_since_held` (see ReadCatalog).
  std::vector<core::EvalEvidence> evals;
  bool evals_since_held = false;
  int64_t eval_table_id = 0;  // EvalTableId
  // The declared eval criteria, in name order; empty before migration 0020.
  std::vector<core::EvalCriterion> eval_criteria;
  // The active standards, by id; empty before migration 0021.
  std::vector<StandardRecord> standards;
  // Each pool's last reported state and history, by pool name; empty
  // before migration 0024.
  std::vector<PoolStateRecord> pool_states;
};

// The evals a replica holds already: those of the table `table_id`
// (EvalTableId) committed as of `horizon`.
struct EvalsHeld {
  TransactionHorizon horizon;
  int64_t table_id = 0;
};

// Reads all of it in one REPEATABLE READ, READ ONLY transaction, so that it
// is one point in time: a pool and the rollups of the runs on it, a token
// and its revocation, are never seen half-committed. With `evals_held` of
// the same table, the evals are only those inserted since it
// (`evals_since_held`): a full read then costs the evals that are new, not
// all of them (eval rows are never updated nor deleted).
absl::StatusOr<CatalogRows> ReadCatalog(
    DbSession& session, const std::optional<EvalsHeld>& evals_held = {});

// What changed after a read at horizon `since`: the rows inserted or updated
// by transactions it did not see, and the keys such transactions removed
// (deleted, or changed away). A removed key that is also among the rows was
// removed and then written again: the row is current.
struct CatalogChanges {
  TransactionHorizon horizon;  // of this read, as in CatalogRows
  std::vector<core::GpuSku> skus;
  std::vector<PoolRecord> pools;
  std::vector<StoredRollup> rollups;
  // Every row, changed or not (as in CatalogRows): the table is tiny, and
  // has no change stamps or tombstones.
  std::vector<core::PoolReliabilityRollup> pool_reliability;
  std::vector<TokenRecord> tokens;
  // Evals inserted since (rows are never updated nor removed), from the
  // table `eval_table_id`: when that is not the table the read at `since`
  // saw, these are not the changes (read in full then).
  std::vector<core::EvalEvidence> evals;
  int64_t eval_table_id = 0;
  // Every criterion, changed or not (a table of tens of rows).
  std::vector<core::EvalCriterion> eval_criteria;
  // Every active standard, changed or not (as in CatalogRows): the table
  // is tiny, and has no change stamps or tombstones.
  std::vector<StandardRecord> standards;
  // Pool state rows written since (each a pool's whole row).
  std::vector<PoolStateRecord> pool_states;
  std::vector<std::string> removed_skus;
  std::vector<std::string> removed_pools;                            // names
  std::vector<std::pair<std::string, std::string>> removed_rollups;  // key, SKU
  std::vector<std::string> removed_tokens;       // token ids
  std::vector<std::string> removed_pool_states;  // pool names
};

// Reads them in one REPEATABLE READ, READ ONLY transaction, like ReadCatalog:
// applied to the rows a read at `since` returned, they give exactly what
// ReadCatalog would return now. The cost is that of the changes (an index
// range per table), not of the tables. FAILED_PRECONDITION when tombstones
// `since` did not see have been pruned (its xmin is below the pruning
// horizon, migration 0014): only a full read is exact then.
absl::StatusOr<CatalogChanges> ReadCatalogChanges(
    DbSession& session, const TransactionHorizon& since);

struct TombstonePruning {
  int64_t deleted = 0;
  // The transaction id below which no tombstone is kept (after this call).
  int64_t pruned_below_xid = 0;
};

// Deletes the tombstones of deletions committed more than `retention` ago,
// and raises the pruning horizon over them, in one transaction (concurrent
// calls serialize on the horizon's row). The horizon never passes the
// oldest transaction still running, so a replica whose last read began
// after this call never has to read in full because of it; one whose last
// read is older than the pruned deletions does.
absl::StatusOr<TombstonePruning> PruneCatalogTombstones(
    DbSession& session, absl::Duration retention);

// The pruning horizon now (0 before any pruning).
absl::StatusOr<int64_t> ReadTombstoneHorizon(DbSession& session);

}  // namespace placement::storage

#endif  // PLACEMENT_STORAGE_CATALOG_READ_H_
