#include "storage/stores/sample_retention.h"

#include <pqxx/pqxx>

namespace placement::storage {
namespace {

// Arbitrary but fixed, apart from the migrators' key: the advisory lock
// that lets one replica at a time drop sample partitions.
constexpr int64_t kSampleRetentionLockKey = 0x73616d706c726574;  // "samplret"

// The partitions of step_samples with both bounds, in microseconds since
// the epoch. The bounds are read back from the partition's own definition
// (pg_get_expr writes them in this session's time zone and reads back the
// same instant); DEFAULT and MINVALUE/MAXVALUE bounds match no literal and
// are left out, so those partitions are never dropped.
constexpr char kListPartitions[] = R"sql(
WITH parts AS (
  SELECT c.oid::bigint AS oid,
         (regexp_match(pg_get_expr(c.relpartbound, c.oid),
                       'FROM \(''([^'']+)''\)'))[1]::timestamptz AS range_from,
         (regexp_match(pg_get_expr(c.relpartbound, c.oid),
                       'TO \(''([^'']+)''\)'))[1]::timestamptz AS range_to
  FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
  WHERE i.inhparent = 'step_samples'::regclass)
SELECT oid, (extract(epoch FROM range_from) * 1e6)::bigint,
       (extract(epoch FROM range_to) * 1e6)::bigint
FROM parts
WHERE range_from IS NOT NULL AND range_to IS NOT NULL
  AND range_to <= now() - make_interval(secs => $1::float8)
ORDER BY range_from)sql";

// A queued ACCESS EXCLUSIVE request blocks every later request on the
// table, so the drop waits for its locks no longer than the migrator does.
constexpr char kBoundLockWait[] = "SET LOCAL lock_timeout = '3s'";

constexpr char kTryLock[] = "SELECT pg_try_advisory_xact_lock($1)";

// The partition's name as the server quotes it (schema-qualified when it
// is not on the search path), if it is still a partition of step_samples
// (another replica may have dropped it since the listing).
constexpr char kPartitionName[] = R"sql(
SELECT i.inhrelid::regclass::text
FROM pg_inherits i
WHERE i.inhrelid = $1::bigint::oid AND i.inhparent = 'step_samples'::regclass)sql";

// Locks the streams filed in the partition's range, in the order an append
// takes its locks (the stream's row, then the partition), and says for each
// whether it stored a sample after the cut.
constexpr char kLockStreamsInRange[] = R"sql(
SELECT updated_at > now() - make_interval(secs => $3::float8)
FROM sample_streams
WHERE partition_time >= to_timestamp($1::float8 / 1e6)
  AND partition_time < to_timestamp($2::float8 / 1e6)
ORDER BY run_id
FOR UPDATE)sql";

constexpr char kMarkDropped[] = R"sql(
UPDATE sample_streams SET samples_dropped_at = now()
WHERE partition_time >= to_timestamp($1::float8 / 1e6)
  AND partition_time < to_timestamp($2::float8 / 1e6)
  AND samples_dropped_at IS NULL)sql";

constexpr char kFootprint[] = R"sql(
SELECT coalesce(sum(greatest(c.reltuples, 0)), 0)::float8,
       coalesce(sum(pg_total_relation_size(c.oid)), 0)::float8,
       count(*)
FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
WHERE i.inhparent = 'step_samples'::regclass)sql";

struct ExpiredPartition {
  int64_t oid = 0;
  int64_t from_micros = 0;
  int64_t to_micros = 0;
};

enum class DropOutcome { kDropped, kKeptRecent, kGone, kLockedElsewhere };

struct DropResult {
  DropOutcome outcome = DropOutcome::kGone;
  std::string name;
  int64_t runs_marked = 0;
};

// One partition, in one transaction: the advisory lock, the streams of its
// range (kept when one is recent), their mark, and the drop.
//
// DROP TABLE of a partition takes ACCESS EXCLUSIVE on the partition and on
// step_samples itself (the parent's partition descriptor changes), so
// appends and sample reads wait while it holds them. That is brief: it is
// a catalog change only, no row is read or rewritten (the files are
// unlinked at commit), and the transaction holds nothing else long. The
// lock wait is bounded (kBoundLockWait): a drop that cannot get its locks
// in 3 s fails and is tried again on the next pass, rather than parking
// the appends queued behind it. DETACH PARTITION CONCURRENTLY, which would
// avoid the parent's lock, cannot run inside a transaction, and the mark
// must commit with the drop.
DropResult DropPartition(pqxx::connection_base& c,
                         const ExpiredPartition& partition,
                         double retention_s) {
  pqxx::work txn(c);
  txn.exec(kBoundLockWait);
  DropResult result;
  if (!txn.exec_params(kTryLock, kSampleRetentionLockKey)[0][0].as<bool>()) {
    result.outcome = DropOutcome::kLockedElsewhere;
    return result;
  }
  const pqxx::result name = txn.exec_params(kPartitionName, partition.oid);
  if (name.empty()) return result;  // dropped since the listing
  result.name = name[0][0].as<std::string>();
  const pqxx::result streams =
      txn.exec_params(kLockStreamsInRange, partition.from_micros,
                      partition.to_micros, retention_s);
  for (const pqxx::row& stream : streams) {
    if (stream[0].as<bool>()) {
      result.outcome = DropOutcome::kKeptRecent;
      return result;  // rolled back: nothing marked
    }
  }
  result.runs_marked =
      txn.exec_params(kMarkDropped, partition.from_micros, partition.to_micros)
          .affected_rows();
  // The name is an identifier quoted by the server (regclass output), not
  // text from a caller.
  txn.exec("DROP TABLE " + result.name);
  txn.commit();
  result.outcome = DropOutcome::kDropped;
  return result;
}

}  // namespace

absl::StatusOr<SampleRetentionPass> DropExpiredSamplePartitions(
    DbSession& session, absl::Duration retention) {
  SampleRetentionPass pass;
  if (retention <= absl::ZeroDuration()) return pass;
  const double retention_s = absl::ToDoubleSeconds(retention);
  return session.Run(
      [&](pqxx::connection_base& c) -> absl::StatusOr<SampleRetentionPass> {
        std::vector<ExpiredPartition> expired;
        {
          pqxx::read_transaction txn(c);
          for (const pqxx::row& row :
               txn.exec_params(kListPartitions, retention_s)) {
            expired.push_back({row[0].as<int64_t>(), row[1].as<int64_t>(),
                               row[2].as<int64_t>()});
          }
        }
        for (const ExpiredPartition& partition : expired) {
          DropResult dropped = DropPartition(c, partition, retention_s);
          switch (dropped.outcome) {
            case DropOutcome::kDropped:
              pass.dropped.push_back(std::move(dropped.name));
              pass.runs_marked += dropped.runs_marked;
              break;
            case DropOutcome::kKeptRecent:
              ++pass.kept_recent;
              break;
            case DropOutcome::kGone:
              break;
            case DropOutcome::kLockedElsewhere:
              pass.locked_elsewhere = true;
              return pass;
          }
        }
        return pass;
      });
}

absl::StatusOr<SampleFootprint> MeasureSampleFootprint(DbSession& session) {
  return session.Run(
      [](pqxx::connection_base& c) -> absl::StatusOr<SampleFootprint> {
        pqxx::read_transaction txn(c);
        const pqxx::row row = txn.exec(kFootprint)[0];
        return SampleFootprint{row[0].as<double>(), row[1].as<double>(),
                               row[2].as<int>()};
      });
}

}  // namespace placement::storage
