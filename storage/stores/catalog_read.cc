#include "storage/stores/catalog_read.h"

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "storage/session/transaction_horizon.h"
#include "storage/stores/eval_criteria_store.h"
#include "storage/stores/eval_store.h"
#include "storage/stores/pool_reliability_store.h"
#include "storage/stores/pool_state_store.h"
#include "storage/stores/sku_store.h"
#include "storage/stores/standard_store.h"

namespace placement::storage {

absl::StatusOr<CatalogRows> ReadCatalog(
    DbSession& session, const std::optional<EvalsHeld>& evals_held) {
  return session.Run(
      [&](pqxx::connection_base& c) -> absl::StatusOr<CatalogRows> {
        pqxx::transaction<pqxx::repeatable_read, pqxx::read_only> txn(c);
        CatalogRows rows;
        // First, so that it is the snapshot every read below uses.
        absl::StatusOr<TransactionHorizon> horizon = ReadHorizon(txn);
        if (!horizon.ok()) return horizon.status();
        rows.horizon = *std::move(horizon);
        rows.skus = ReadSkus(txn);
        rows.pools = ReadAllPools(txn);
        const FailureEvidence failure_evidence = FailureEvidenceIn(txn);
        rows.rollups = ReadRollups(txn, failure_evidence);
        rows.pool_reliability = ReadPoolReliability(txn, failure_evidence);
        rows.tokens = ReadTokens(txn);
        rows.eval_table_id = EvalTableId(txn);
        rows.evals_since_held = evals_held.has_value() &&
                                evals_held->table_id == rows.eval_table_id;
        rows.evals = rows.evals_since_held
                         ? ReadEvalsChangedSince(txn, evals_held->horizon)
                         : ReadEvals(txn);
        rows.eval_criteria = ReadEvalCriteria(txn);
        rows.standards = ReadActiveStandards(txn);
        rows.pool_states = ReadPoolStates(txn);
        txn.commit();
        return rows;
      });
}

namespace {

constexpr char kListTombstones[] =
    "SELECT table_name, row_key[1], coalesce(row_key[2], '') "
    "FROM catalog_tombstones WHERE" PLACEMENT_CHANGED_SINCE(
        "change_xid") "ORDER BY change_xid";

constexpr char kReadTombstoneHorizon[] =
    "SELECT pruned_below_xid FROM catalog_tombstone_horizon";

constexpr char kLockTombstoneHorizon[] =
    "SELECT pruned_below_xid FROM catalog_tombstone_horizon FOR UPDATE";

// Below the newest tombstone older than $1 seconds, and never above the
// oldest transaction still running (none below it can commit a tombstone
// any more).
constexpr char kTombstoneCut[] =
    "SELECT least(newest + 1, "
    "             pg_snapshot_xmin(pg_current_snapshot())::text::bigint) "
    "FROM (SELECT max(change_xid) AS newest FROM catalog_tombstones "
    "      WHERE deleted_at <= now() - make_interval(secs => $1::float8)) old "
    "WHERE newest IS NOT NULL";

constexpr char kDeleteTombstonesBelow[] =
    "DELETE FROM catalog_tombstones WHERE change_xid < $1";

constexpr char kRaiseTombstoneHorizon[] =
    "UPDATE catalog_tombstone_horizon SET pruned_below_xid = $1, "
    "pruned_at = now()";

}  // namespace

absl::StatusOr<CatalogChanges> ReadCatalogChanges(
    DbSession& session, const TransactionHorizon& since) {
  return session.Run(
      [&](pqxx::connection_base& c) -> absl::StatusOr<CatalogChanges> {
        pqxx::transaction<pqxx::repeatable_read, pqxx::read_only> txn(c);
        CatalogChanges changes;
        absl::StatusOr<TransactionHorizon> horizon = ReadHorizon(txn);
        if (!horizon.ok()) return horizon.status();
        changes.horizon = *std::move(horizon);
        // In the same snapshot as the tombstones below: a pruning either
        // committed before it (and its horizon is seen) or did not (and
        // every tombstone it deleted is still seen).
        const int64_t pruned_below =
            txn.exec(kReadTombstoneHorizon)[0][0].as<int64_t>();
        if (since.xmin < pruned_below) {
          return absl::FailedPreconditionError(
              absl::StrCat("the catalog read at ", since.ToText(),
                           " is older than the tombstones kept (pruned below ",
                           pruned_below, "); read in full"));
        }
        changes.skus = ReadSkusChangedSince(txn, since);
        changes.pools = ReadPoolsChangedSince(txn, since);
        const FailureEvidence failure_evidence = FailureEvidenceIn(txn);
        changes.rollups = ReadRollupsChangedSince(txn, since, failure_evidence);
        // Whole: pools x 2 rows (the caller compares it with its copy).
        changes.pool_reliability = ReadPoolReliability(txn, failure_evidence);
        changes.tokens = ReadTokensChangedSince(txn, since);
        changes.eval_table_id = EvalTableId(txn);
        changes.evals = ReadEvalsChangedSince(txn, since);
        changes.eval_criteria = ReadEvalCriteria(txn);
        // Whole: a handful of rows (the caller compares it with its copy).
        changes.standards = ReadActiveStandards(txn);
        changes.pool_states = ReadPoolStatesChangedSince(txn, since);
        for (const pqxx::row& row :
             txn.exec_params(kListTombstones, since.ToText(), since.xmin)) {
          const std::string table = row[0].as<std::string>();
          std::string key = row[1].as<std::string>();
          if (table == "skus") {
            changes.removed_skus.push_back(std::move(key));
          } else if (table == "pools") {
            changes.removed_pools.push_back(std::move(key));
          } else if (table == "evidence_rollups") {
            changes.removed_rollups.emplace_back(std::move(key),
                                                 row[2].as<std::string>());
          } else if (table == "api_tokens") {
            changes.removed_tokens.push_back(std::move(key));
          } else if (table == "pool_states") {
            changes.removed_pool_states.push_back(std::move(key));
          }
        }
        txn.commit();
        return changes;
      });
}

absl::StatusOr<TombstonePruning> PruneCatalogTombstones(
    DbSession& session, absl::Duration retention) {
  return session.Run(
      [&](pqxx::connection_base& c) -> absl::StatusOr<TombstonePruning> {
        pqxx::work txn(c);
        TombstonePruning out;
        out.pruned_below_xid =
            txn.exec(kLockTombstoneHorizon)[0][0].as<int64_t>();
        const pqxx::result cut =
            txn.exec_params(kTombstoneCut, absl::ToDoubleSeconds(retention));
        // No row: no tombstone is that old.
        if (!cut.empty() && cut[0][0].as<int64_t>() > out.pruned_below_xid) {
          out.pruned_below_xid = cut[0][0].as<int64_t>();
          out.deleted =
              txn.exec_params(kDeleteTombstonesBelow, out.pruned_below_xid)
                  .affected_rows();
          txn.exec_params(kRaiseTombstoneHorizon, out.pruned_below_xid);
        }
        txn.commit();
        return out;
      });
}

absl::StatusOr<int64_t> ReadTombstoneHorizon(DbSession& session) {
  return session.Run([](pqxx::connection_base& c) -> absl::StatusOr<int64_t> {
    pqxx::read_transaction txn(c);
    return txn.exec(kReadTombstoneHorizon)[0][0].as<int64_t>();
  });
}

}  // namespace placement::storage
