#include "storage/schema/migrations.h"

#include <algorithm>
#include <functional>
#include <map>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"

namespace placement::storage {
namespace {

// Arbitrary but fixed: the key of the advisory lock all migrators share.
constexpr int64_t kMigrationLockKey = 0x706c6163656d6e74;  // "placemnt"

constexpr char kCreateSchemaMigrations[] = R"sql(
CREATE TABLE IF NOT EXISTS schema_migrations (
  version    integer PRIMARY KEY,
  name       text NOT NULL,
  applied_at timestamptz NOT NULL DEFAULT now()
))sql";

constexpr char kSelectApplied[] =
    "SELECT version, extract(epoch FROM applied_at)::float8 "
    "FROM schema_migrations ORDER BY version";
constexpr char kInsertApplied[] =
    "INSERT INTO schema_migrations (version, name) VALUES ($1, $2)";
constexpr char kDeleteApplied[] =
    "DELETE FROM schema_migrations WHERE version = $1";
constexpr char kSchemaMigrationsExists[] =
    "SELECT to_regclass('schema_migrations') IS NOT NULL";
// object_not_in_prerequisite_state: what a down migration raises when it
// refuses to drop records that exist nowhere else.
constexpr char kDownRefused[] = "55000";

// Holds the session-level advisory lock for its lifetime. If the connection
// breaks the server releases the lock itself.
class MigrationLock {
 public:
  explicit MigrationLock(pqxx::connection_base& c) : connection_(c) {
    pqxx::nontransaction txn(connection_);
    txn.exec_params("SELECT pg_advisory_lock($1)", kMigrationLockKey);
  }
  ~MigrationLock() {
    try {
      pqxx::nontransaction txn(connection_);
      txn.exec_params("SELECT pg_advisory_unlock($1)", kMigrationLockKey);
    } catch (const std::exception&) {
      // The connection is gone, and the lock with it.
    }
  }

 private:
  pqxx::connection_base& connection_;
};

// Applies `sql` and records `version` in one transaction, each lock waited
// for at most kMigrationLockTimeout; tries again (after a pause that lets the
// queued traffic through) when a lock wait runs out, or when PostgreSQL
// chose this transaction to break a deadlock with the traffic (the
// migrations are written not to: migration_lock_order_test).
void ApplyWithBoundedLockWaits(pqxx::connection_base& c, const std::string& sql,
                               const std::function<void(pqxx::work&)>& record) {
  const std::string set_timeout =
      absl::StrCat("SET LOCAL lock_timeout = ",
                   absl::ToInt64Milliseconds(kMigrationLockTimeout));
  for (int attempt = 1;; ++attempt) {
    try {
      pqxx::work txn(c);
      txn.exec(set_timeout);
      txn.exec(sql);
      record(txn);
      txn.commit();
      return;
    } catch (const std::exception& e) {
      if (!IsLockFailure(e) || attempt >= kMigrationLockAttempts) throw;
      absl::SleepFor(absl::Milliseconds(200));
    }
  }
}

std::map<int, double> AppliedVersions(pqxx::connection_base& c) {
  pqxx::nontransaction txn(c);
  std::map<int, double> applied;
  if (!txn.exec(kSchemaMigrationsExists)[0][0].as<bool>()) return applied;
  for (const pqxx::row& row : txn.exec(kSelectApplied)) {
    applied[row[0].as<int>()] = row[1].as<double>();
  }
  return applied;
}

}  // namespace

bool IsLockFailure(const std::exception& e) {
  if (dynamic_cast<const pqxx::deadlock_detected*>(&e) != nullptr) return true;
  const auto* sql = dynamic_cast<const pqxx::sql_error*>(&e);
  return sql != nullptr &&
         (sql->sqlstate() == "55P03" || sql->sqlstate() == "40P01");
}

Migrator::Migrator(DbSession& session, const std::vector<Migration>& migrations,
                   BackfillOptions backfill_options)
    : session_(session),
      migrations_(migrations),
      backfill_options_(backfill_options) {}

int Migrator::LatestVersion() const {
  return migrations_.empty() ? 0 : migrations_.back().version;
}

absl::StatusOr<int> Migrator::Up(std::optional<int> target) {
  return session_.Run([&](pqxx::connection_base& c) -> absl::StatusOr<int> {
    MigrationLock lock(c);
    {
      pqxx::nontransaction txn(c);
      txn.exec(kCreateSchemaMigrations);
      txn.exec(kCreateSchemaBackfills);
    }
    const std::map<int, double> applied = AppliedVersions(c);
    int count = 0;
    for (const Migration& m : migrations_) {
      if (target.has_value() && m.version > *target) break;
      if (applied.contains(m.version)) continue;
      ApplyWithBoundedLockWaits(c, m.up_sql, [&](pqxx::work& txn) {
        txn.exec_params(kInsertApplied, m.version, m.name);
      });
      ++count;
    }
    RunPendingBackfills(c, backfill_options_);
    return count;
  });
}

absl::StatusOr<int> Migrator::Down(int steps) {
  return session_.Run([&](pqxx::connection_base& c) -> absl::StatusOr<int> {
    MigrationLock lock(c);
    const std::map<int, double> applied = AppliedVersions(c);
    int count = 0;
    for (auto it = migrations_.rbegin(); it != migrations_.rend(); ++it) {
      if (count >= steps) break;
      if (!applied.contains(it->version)) continue;
      try {
        ApplyWithBoundedLockWaits(c, it->down_sql, [&](pqxx::work& txn) {
          txn.exec_params(kDeleteApplied, it->version);
        });
      } catch (const pqxx::sql_error& e) {
        // A down that refuses to drop stored records (55000, raised by the
        // migration itself) says why and what to do: it is no fault.
        if (e.sqlstate() != kDownRefused) throw;
        return absl::FailedPreconditionError(absl::StrCat(
            "migration ", it->version, " (", it->name, ") was not reverted",
            count > 0 ? absl::StrCat(" (", count, " newer ones were)") : "",
            ": ", e.what()));
      }
      ++count;
    }
    return count;
  });
}

absl::StatusOr<std::vector<MigrationState>> Migrator::Status() {
  return session_.Run([&](pqxx::connection_base& c)
                          -> absl::StatusOr<std::vector<MigrationState>> {
    const std::map<int, double> applied = AppliedVersions(c);
    std::vector<MigrationState> states;
    for (const Migration& m : migrations_) {
      MigrationState state{m.version, m.name, std::nullopt};
      if (auto it = applied.find(m.version); it != applied.end()) {
        state.applied_at =
            absl::FromUnixMicros(static_cast<int64_t>(it->second * 1e6));
      }
      states.push_back(std::move(state));
    }
    return states;
  });
}

absl::StatusOr<std::vector<BackfillState>> Migrator::Backfills() {
  return session_.Run([&](pqxx::connection_base& c)
                          -> absl::StatusOr<std::vector<BackfillState>> {
    return ReadBackfills(c);
  });
}

absl::StatusOr<int> Migrator::CurrentVersion() {
  return session_.Run([&](pqxx::connection_base& c) -> absl::StatusOr<int> {
    const std::map<int, double> applied = AppliedVersions(c);
    return applied.empty() ? 0 : applied.rbegin()->first;
  });
}

absl::StatusOr<std::optional<int>> Migrator::OldestCompatibleBinary() {
  return session_.Run(
      [&](pqxx::connection_base& c) -> absl::StatusOr<std::optional<int>> {
        pqxx::nontransaction txn(c);
        if (txn.exec("SELECT to_regclass('schema_compatibility') IS NULL")[0][0]
                .as<bool>()) {
          return std::nullopt;
        }
        pqxx::result rows =
            txn.exec("SELECT oldest_binary_version FROM schema_compatibility");
        if (rows.empty()) return std::nullopt;
        return rows[0][0].as<int>();
      });
}

int RequiredSchemaVersion() {
  const std::vector<Migration>& all = EmbeddedMigrations();
  return all.empty() ? 0 : all.back().version;
}

}  // namespace placement::storage
