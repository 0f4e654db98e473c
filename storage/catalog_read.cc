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

}  // namespace placement::storage
