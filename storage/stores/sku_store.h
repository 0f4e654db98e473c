#ifndef PLACEMENT_STORAGE_SKU_STORE_H_
#define PLACEMENT_STORAGE_SKU_STORE_H_

#include <vector>

#include "absl/status/statusor.h"
#include "core/sku.h"
#include "storage/session/db_session.h"
#include "storage/session/transaction_horizon.h"

namespace placement::storage {

// Every SKU of the catalog (seeded by migration 0001), in name order.
absl::StatusOr<std::vector<core::GpuSku>> ListSkus(DbSession& session);
// The same inside the caller's transaction `txn` (for reads that must see
// one point in time, see ReadCatalog); throws what libpqxx throws, so call it
// only inside DbSession::Run.
std::vector<core::GpuSku> ReadSkus(pqxx::transaction_base& txn);
// Only the rows inserted or updated by transactions `since` did not see
// (migration 0009), inside the caller's transaction.
std::vector<core::GpuSku> ReadSkusChangedSince(pqxx::transaction_base& txn,
                                               const TransactionHorizon& since);

}  // namespace placement::storage

#endif  // PLACEMENT_STORAGE_SKU_STORE_H_
