#include "storage/pool_reliability_store.h"

#include "core/units.h"

namespace placement::storage {
namespace {

constexpr char kHasFailureEvidence[] =
    "SELECT to_regclass('pool_reliability_rollups') IS NOT NULL";

constexpr char kListPoolReliability[] = R"sql(
SELECT pool_name, multi_gpu, runs, run_microseconds, preempted_runs,
       hardware_error_runs, collective_timeout_runs, failure_lost_microseconds
FROM pool_reliability_rollups
ORDER BY pool_name COLLATE "C", multi_gpu)sql";

}  // namespace

bool HasFailureEvidence(pqxx::transaction_base& txn) {
  return txn.exec(kHasFailureEvidence)[0][0].as<bool>();
}

std::vector<core::PoolReliabilityRollup> ReadPoolReliability(
    pqxx::transaction_base& txn) {
  std::vector<core::PoolReliabilityRollup> rollups;
  for (const pqxx::row& row : txn.exec(kListPoolReliability)) {
    core::PoolReliabilityRollup r;
    r.pool_name = row[0].as<std::string>();
    r.multi_gpu = row[1].as<bool>();
    r.runs = row[2].as<int64_t>();
    r.run_hours = core::HoursFromMicroseconds(row[3].as<int64_t>());
    r.preempted_runs = row[4].as<int64_t>();
    r.hardware_error_runs = row[5].as<int64_t>();
    r.collective_timeout_runs = row[6].as<int64_t>();
    r.failure_lost_hours = core::HoursFromMicroseconds(row[7].as<int64_t>());
    rollups.push_back(std::move(r));
  }
  return rollups;
}

absl::StatusOr<std::vector<core::PoolReliabilityRollup>> ListPoolReliability(
    DbSession& session) {
  return session.Run(
      [](pqxx::connection_base& c)
          -> absl::StatusOr<std::vector<core::PoolReliabilityRollup>> {
        pqxx::read_transaction txn(c);
        if (!HasFailureEvidence(txn)) {
          return std::vector<core::PoolReliabilityRollup>{};
        }
        return ReadPoolReliability(txn);
      });
}

}  // namespace placement::storage
