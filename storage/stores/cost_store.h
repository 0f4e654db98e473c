#ifndef PLACEMENT_STORAGE_COST_STORE_H_
#define PLACEMENT_STORAGE_COST_STORE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/civil_time.h"
#include "storage/records/cost_records.h"
#include "storage/session/db_session.h"

namespace placement::storage {

// Up to `page_size` rows of `query` whose keys sort after `after` (from the
// first row when absent), in key order. Reads only the cost rollups and
// pools, the coarsest rollup that holds what the query filters and groups
// by: cost_daily_sku_rollups (rows bounded by days x SKUs) when it neither
// filters nor groups by pool, recipe key, model, method, team or outcome;
// cost_daily_pool_rollups (days x pools) when it needs pools but nothing
// below; cost_daily_rollups otherwise. Grouped by SKU and day only, the
// report is the SKU rollup's rows as they are. Each statement is prepared
// once a connection and runs alone (its own snapshot, no transaction
// around it). UNAVAILABLE / INTERNAL from the database; nothing else.
absl::StatusOr<CostPage> GetCostReport(DbSession& session,
                                       const CostQuery& query,
                                       const std::optional<CostGroupKey>& after,
                                       int page_size);

// Inside storage only (InsertRun): adds the run `run_id`, just inserted in
// `txn`, to its daily cost rollup rows (cost_daily_rollups,
// cost_daily_pool_rollups and cost_daily_sku_rollups), with its pool's rates as
// they are now (the snapshot). One statement of atomic upserts: concurrent
// uploads never lose an update. Throws what libpqxx throws; the caller runs
// inside DbSession::Run.
void AddRunToCostRollup(pqxx::work& txn, const std::string& run_id);

}  // namespace placement::storage

#endif  // PLACEMENT_STORAGE_COST_STORE_H_
