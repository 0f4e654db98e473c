#ifndef PLACEMENT_STORAGE_POOL_STORE_H_
#define PLACEMENT_STORAGE_POOL_STORE_H_

#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "core/pool.h"
#include "storage/session/db_session.h"
#include "storage/session/transaction_horizon.h"

namespace placement::storage {

struct PoolRecord {
  core::Pool pool;
  absl::Time create_time;
  absl::Time update_time;
};

// Inserts `pool` (already validated by the caller), idempotently:
//  - a new name: the pool is created;
//  - `request_id` already created this pool: the stored pool is returned;
//  - the name exists with the same content: the stored pool is returned;
//  - the name exists with other content, or `request_id` created another
//    pool: ALREADY_EXISTS, nothing changed.
// An empty `request_id` means the call carries no idempotency key.
absl::StatusOr<PoolRecord> CreatePool(DbSession& session,
                                      const core::Pool& pool,
                                      const std::string& request_id);

// NOT_FOUND when no pool has that name.
absl::StatusOr<PoolRecord> GetPool(DbSession& session, const std::string& name);

struct PoolPage {
  std::vector<PoolRecord> pools;
  bool more = false;  // whether pools after the last one exist
};

// Up to `page_size` pools whose names sort after `after_name`, in name order.
absl::StatusOr<PoolPage> ListPools(DbSession& session, int page_size,
                                   const std::string& after_name);

// Every pool, in name order.
absl::StatusOr<std::vector<PoolRecord>> ListAllPools(DbSession& session);
// The same inside the caller's transaction `txn` (for reads that must see
// one point in time, see ReadCatalog); throws what libpqxx throws, so call it
// only inside DbSession::Run.
std::vector<PoolRecord> ReadAllPools(pqxx::transaction_base& txn);
// Only the rows inserted or updated by transactions `since` did not see
// (migration 0009), inside the caller's transaction.
std::vector<PoolRecord> ReadPoolsChangedSince(pqxx::transaction_base& txn,
                                              const TransactionHorizon& since);

// Reads the pool under a row lock, lets `mutate` change it (and validate the
// result: a non-OK status aborts with nothing written), and writes it back.
// The pool's name and SKU are kept whatever `mutate` does to them. NOT_FOUND
// when no pool has that name.
using PoolMutation = std::function<absl::Status(core::Pool&)>;
absl::StatusOr<PoolRecord> UpdatePool(DbSession& session,
                                      const std::string& name,
                                      const PoolMutation& mutate);

}  // namespace placement::storage

#endif  // PLACEMENT_STORAGE_POOL_STORE_H_
