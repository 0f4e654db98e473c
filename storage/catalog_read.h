#ifndef PLACEMENT_STORAGE_CATALOG_READ_H_
#define PLACEMENT_STORAGE_CATALOG_READ_H_

#include <vector>

#include "absl/status/statusor.h"
#include "core/sku.h"
#include "storage/db_session.h"
#include "storage/pool_store.h"
#include "storage/run_store.h"
#include "storage/token_store.h"
#include "storage/transaction_horizon.h"

namespace placement::storage {

// Everything a replica plans from: the SKUs, the pools, the evidence rollups
// and the tokens.
struct CatalogRows {
  // The transaction's own snapshot: exactly which committed transactions the
  // rows below include (an evidence version is one of them).
  TransactionHorizon horizon;
  std::vector<core::GpuSku> skus;
  std::vector<PoolRecord> pools;
  std::vector<StoredRollup> rollups;
  std::vector<TokenRecord> tokens;
};

// Reads all of it in one REPEATABLE READ, READ ONLY transaction, so that it
// is one point in time: a pool and the rollups of the runs on it, a token
// and its revocation, are never seen half-committed.
absl::StatusOr<CatalogRows> ReadCatalog(DbSession& session);

}  // namespace placement::storage

#endif  // PLACEMENT_STORAGE_CATALOG_READ_H_
