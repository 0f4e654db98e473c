#include "storage/catalog_read.h"

#include "storage/sku_store.h"

namespace placement::storage {

absl::StatusOr<CatalogRows> ReadCatalog(DbSession& session) {
  return session.Run(
      [](pqxx::connection_base& c) -> absl::StatusOr<CatalogRows> {
        pqxx::transaction<pqxx::repeatable_read, pqxx::read_only> txn(c);
        CatalogRows rows;
        rows.skus = ReadSkus(txn);
        rows.pools = ReadAllPools(txn);
        rows.rollups = ReadRollups(txn);
        rows.tokens = ReadTokens(txn);
        txn.commit();
        return rows;
      });
}

}  // namespace placement::storage
