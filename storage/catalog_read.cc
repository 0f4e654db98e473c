#include "storage/catalog_read.h"

#include "storage/sku_store.h"
#include "storage/transaction_horizon.h"

namespace placement::storage {

absl::StatusOr<CatalogRows> ReadCatalog(DbSession& session) {
  return session.Run(
      [](pqxx::connection_base& c) -> absl::StatusOr<CatalogRows> {
        pqxx::transaction<pqxx::repeatable_read, pqxx::read_only> txn(c);
        CatalogRows rows;
        // First, so that it is the snapshot every read below uses.
        absl::StatusOr<TransactionHorizon> horizon = ReadHorizon(txn);
        if (!horizon.ok()) return horizon.status();
        rows.horizon = *std::move(horizon);
        rows.skus = ReadSkus(txn);
        rows.pools = ReadAllPools(txn);
        rows.rollups = ReadRollups(txn);
        rows.tokens = ReadTokens(txn);
        txn.commit();
        return rows;
      });
}

namespace {

constexpr char kListTombstones[] =
    "SELECT table_name, row_key[1], coalesce(row_key[2], '') "
    "FROM catalog_tombstones WHERE" PLACEMENT_CHANGED_SINCE(
        "change_xid") "ORDER BY change_xid";

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
        changes.skus = ReadSkusChangedSince(txn, since);
        changes.pools = ReadPoolsChangedSince(txn, since);
        changes.rollups = ReadRollupsChangedSince(txn, since);
        changes.tokens = ReadTokensChangedSince(txn, since);
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
          }
        }
        txn.commit();
        return changes;
      });
}

}  // namespace placement::storage
