#ifndef PLACEMENT_STORAGE_MIGRATIONS_H_
#define PLACEMENT_STORAGE_MIGRATIONS_H_

#include <exception>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "storage/schema/backfills.h"
#include "storage/session/db_session.h"

namespace placement::storage {

// One numbered schema change, from migrations/NNNN_name.{up,down}.sql.
struct Migration {
  int version;
  std::string name;
  std::string up_sql;
  std::string down_sql;
};

// The migrations compiled into the binary, in version order.
const std::vector<Migration>& EmbeddedMigrations();

struct MigrationState {
  int version;
  std::string name;
  std::optional<absl::Time> applied_at;  // nullopt: pending
};

// Applies and reverts migrations, recording them in `schema_migrations`.
//
// Every change runs under a PostgreSQL advisory lock, so migrators started at
// once (two placementd replicas at boot) serialize: the first applies, the
// others find nothing left to do. Each migration is applied in its own
// transaction together with its schema_migrations row, so a failed migration
// leaves the schema at the previous version. A migration waits at most
// kMigrationLockTimeout for each lock it takes, and is retried when that
// runs out (a lock it queues for blocks every later request for that
// table, so a long wait would stall the replicas' traffic behind it) or
// when it was the transaction PostgreSQL aborted to break a deadlock.
//
// After the migrations, Up runs the backfills they registered
// (storage/schema/backfills.h) to their end, in bounded batches, under the same
// advisory lock: when Up returns, every row a change of definition
// recomputes is recomputed.
class Migrator {
 public:
  Migrator(DbSession& session, const std::vector<Migration>& migrations,
           BackfillOptions backfill_options = {});

  // Applies every pending migration up to `target` (all when nullopt),
  // then runs every pending backfill. Returns how many migrations were
  // applied. A backfill that fails leaves the migrations applied and its
  // last committed batch recorded: Up again continues it.
  absl::StatusOr<int> Up(std::optional<int> target = std::nullopt);

  // Reverts the `steps` most recently applied migrations. Returns how many
  // were reverted. A down migration that would drop records kept nowhere
  // else (eval results, eval criteria, standards) refuses while its table
  // holds rows: FAILED_PRECONDITION naming the count and how to export
  // them, that migration and the older ones left applied.
  absl::StatusOr<int> Down(int steps);

  // Every known migration with whether and when it was applied.
  absl::StatusOr<std::vector<MigrationState>> Status();

  // Every backfill the applied migrations registered, with how far it got.
  absl::StatusOr<std::vector<BackfillState>> Backfills();

  // The highest applied version, 0 when none is.
  absl::StatusOr<int> CurrentVersion();

  // The oldest binary (named by the newest migration it embeds) that the
  // schema says reads and writes it correctly: schema_compatibility,
  // nullopt when the schema has no such table (then only binaries that
  // know its version do).
  absl::StatusOr<std::optional<int>> OldestCompatibleBinary();

  // The highest version compiled in.
  int LatestVersion() const;

 private:
  DbSession& session_;
  const std::vector<Migration>& migrations_;
  BackfillOptions backfill_options_;
};

// How long a migration waits for a lock before it gives up and is retried,
// and how many times it is tried.
inline constexpr absl::Duration kMigrationLockTimeout = absl::Seconds(3);
inline constexpr int kMigrationLockAttempts = 100;

// Whether `e`, thrown by a migration's or a backfill batch's transaction,
// is a lock failure that a new try may not meet: a lock wait that ran out
// (55P03), or the deadlock PostgreSQL broke by aborting this transaction
// (40P01; libpqxx throws pqxx::deadlock_detected, which is no sql_error).
bool IsLockFailure(const std::exception& e);

// The version a schema must be at for this binary to serve: the latest
// embedded migration.
int RequiredSchemaVersion();

}  // namespace placement::storage

#endif  // PLACEMENT_STORAGE_MIGRATIONS_H_
