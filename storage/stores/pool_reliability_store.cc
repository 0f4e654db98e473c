#include "storage/stores/pool_reliability_store.h"

#include "core/units.h"
#include "storage/wire/histogram_text.h"
#include "storage/wire/most_failed_run_row.h"

namespace placement::storage {
namespace {

constexpr char kFailureEvidenceIn[] =
    "SELECT to_regclass('pool_reliability_rollups') IS NOT NULL, "
    "to_regtype('placement_run_figures') IS NOT NULL, "
    "to_regtype('placement_most_failed') IS NOT NULL";

// Per attempt (0022), as counted.
constexpr char kListPoolReliability[] = R"sql(
SELECT pool_name, multi_gpu, runs, attempts, counted_run_microseconds,
       preempted_attempts, hardware_error_attempts,
       collective_timeout_attempts, attempt_lost_microseconds,
       run_hours_hist::text, run_microseconds_by_bucket::text
FROM pool_reliability_rollups
ORDER BY pool_name COLLATE "C", multi_gpu)sql";

// With each row's most-failed run (0028).
constexpr char kListPoolReliabilityWithMostFailed[] = R"sql(
SELECT pool_name, multi_gpu, runs, attempts, counted_run_microseconds,
       preempted_attempts, hardware_error_attempts,
       collective_timeout_attempts, attempt_lost_microseconds,
       run_hours_hist::text, run_microseconds_by_bucket::text,
       most_failed_attempts, most_failed_node_attempts,
       most_failed_fabric_attempts, most_failed_run_attempts,
       most_failed_counted_microseconds, most_failed_lost_microseconds,
       second_failed_attempts
FROM pool_reliability_rollups
ORDER BY pool_name COLLATE "C", multi_gpu)sql";

// Per run (0017): the same columns, each run one attempt.
constexpr char kListPoolReliabilityPerRun[] = R"sql(
SELECT pool_name, multi_gpu, runs, runs, run_microseconds, preempted_runs,
       hardware_error_runs, collective_timeout_runs, failure_lost_microseconds
FROM pool_reliability_rollups
ORDER BY pool_name COLLATE "C", multi_gpu)sql";

}  // namespace

FailureEvidence FailureEvidenceIn(pqxx::transaction_base& txn) {
  const pqxx::row row = txn.exec(kFailureEvidenceIn)[0];
  if (row[2].as<bool>()) return FailureEvidence::kMostFailedRun;
  if (row[1].as<bool>()) return FailureEvidence::kPerAttempt;
  return row[0].as<bool>() ? FailureEvidence::kPerRun : FailureEvidence::kNone;
}

std::vector<core::PoolReliabilityRollup> ReadPoolReliability(
    pqxx::transaction_base& txn, FailureEvidence schema) {
  std::vector<core::PoolReliabilityRollup> rollups;
  if (schema == FailureEvidence::kNone) return rollups;
  const char* statement = kListPoolReliabilityPerRun;
  if (schema == FailureEvidence::kPerAttempt) statement = kListPoolReliability;
  if (schema == FailureEvidence::kMostFailedRun) {
    statement = kListPoolReliabilityWithMostFailed;
  }
  for (const pqxx::row& row : txn.exec(statement)) {
    core::PoolReliabilityRollup r;
    r.pool_name = row[0].as<std::string>();
    r.multi_gpu = row[1].as<bool>();
    r.runs = row[2].as<int64_t>();
    r.attempts = row[3].as<int64_t>();
    r.run_hours = core::HoursFromMicroseconds(row[4].as<int64_t>());
    r.preempted_attempts = row[5].as<int64_t>();
    r.hardware_error_attempts = row[6].as<int64_t>();
    r.collective_timeout_attempts = row[7].as<int64_t>();
    r.failure_lost_hours = core::HoursFromMicroseconds(row[8].as<int64_t>());
    if (row.size() > 9) {  // per attempt (0022)
      r.run_hours_hist = CountsFromLiteral(row[9].as<std::string>());
      r.run_microseconds_by_bucket =
          CountsFromLiteral(row[10].as<std::string>());
    }
    if (row.size() > 11) {  // and its most-failed run (0028)
      r.most_failed_run =
          MostFailedRunFromRow(row, 11, /*with_startup_bucket=*/false);
    }
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
        return ReadPoolReliability(txn, FailureEvidenceIn(txn));
      });
}

}  // namespace placement::storage
