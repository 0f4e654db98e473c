#include "storage/schema/backfills.h"

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "storage/schema/migrations.h"

namespace placement::storage {
namespace {

constexpr char kSelectNextPending[] = R"sql(
SELECT name, batch_function FROM schema_backfills
WHERE done_at IS NULL
ORDER BY migration, position, name
LIMIT 1)sql";

// The step's progress row, locked for the batch's transaction.
constexpr char kLockProgress[] =
    "SELECT cursor FROM schema_backfills WHERE name = $1 FOR UPDATE";

constexpr char kRecordBatch[] = R"sql(
UPDATE schema_backfills
SET cursor = coalesce($2, cursor), batches = batches + 1,
    done_at = CASE WHEN $2::text IS NULL THEN now() END, updated_at = now()
WHERE name = $1)sql";

constexpr char kSelectAll[] = R"sql(
SELECT name, migration, batches, extract(epoch FROM done_at)::float8
FROM schema_backfills ORDER BY migration, position, name)sql";

constexpr char kTableExists[] =
    "SELECT to_regclass('schema_backfills') IS NOT NULL";

// One batch of `step` and its progress, in one transaction. Returns
// whether the step is done.
bool RunBatch(pqxx::connection_base& c, const std::string& step,
              const std::string& batch_function, int batch_size) {
  const std::string set_timeout =
      absl::StrCat("SET LOCAL lock_timeout = ",
                   absl::ToInt64Milliseconds(kMigrationLockTimeout));
  for (int attempt = 1;; ++attempt) {
    try {
      pqxx::work txn(c);
      txn.exec(set_timeout);
      const pqxx::result progress = txn.exec_params(kLockProgress, step);
      if (progress.empty()) return true;  // unregistered meanwhile
      // NULL (nullptr) before the first batch, and when the step is done.
      const bool first = progress[0][0].is_null();
      const std::string cursor = first ? "" : progress[0][0].as<std::string>();
      const pqxx::result next = txn.exec_params(
          absl::StrCat("SELECT ", txn.quote_name(batch_function),
                       "($1::text, $2::integer)"),
          first ? nullptr : cursor.c_str(), batch_size);
      const bool done = next[0][0].is_null();
      const std::string next_cursor = done ? "" : next[0][0].as<std::string>();
      txn.exec_params(kRecordBatch, step, done ? nullptr : next_cursor.c_str());
      txn.commit();
      return done;
    } catch (const std::exception& e) {
      // Lock waits that ran out, and deadlocks: the batch is tried again.
      if (!IsLockFailure(e) || attempt >= kMigrationLockAttempts) throw;
      absl::SleepFor(absl::Milliseconds(200));
    }
  }
}

}  // namespace

int64_t RunPendingBackfills(pqxx::connection_base& c,
                            const BackfillOptions& options) {
  int64_t batches = 0;
  while (!options.max_batches.has_value() || batches < *options.max_batches) {
    std::string step, batch_function;
    {
      pqxx::nontransaction txn(c);
      const pqxx::result pending = txn.exec(kSelectNextPending);
      if (pending.empty()) break;
      step = pending[0][0].as<std::string>();
      batch_function = pending[0][1].as<std::string>();
    }
    bool done = false;
    while (!done && (!options.max_batches.has_value() ||
                     batches < *options.max_batches)) {
      done = RunBatch(c, step, batch_function, options.batch_size);
      ++batches;
    }
  }
  return batches;
}

std::vector<BackfillState> ReadBackfills(pqxx::connection_base& c) {
  pqxx::nontransaction txn(c);
  std::vector<BackfillState> states;
  if (!txn.exec(kTableExists)[0][0].as<bool>()) return states;
  for (const pqxx::row& row : txn.exec(kSelectAll)) {
    BackfillState state;
    state.name = row[0].as<std::string>();
    state.migration = row[1].as<int>();
    state.batches = row[2].as<int64_t>();
    if (!row[3].is_null()) {
      state.done_at =
          absl::FromUnixMicros(static_cast<int64_t>(row[3].as<double>() * 1e6));
    }
    states.push_back(std::move(state));
  }
  return states;
}

}  // namespace placement::storage
