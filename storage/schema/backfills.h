#ifndef PLACEMENT_STORAGE_BACKFILLS_H_
#define PLACEMENT_STORAGE_BACKFILLS_H_

#include <cstdint>
#include <optional>
#include <pqxx/pqxx>
#include <string>
#include <vector>

#include "absl/time/time.h"

namespace placement::storage {

// Backfills: what a migration's change of definition must redo in rows
// stored before it (a rollup counted the old way), when that is too much for
// the migration's own transaction. The migration stays short (DDL, new
// functions) and registers a backfill; `placementd migrate up`
// (Migrator::Up) runs every registered backfill to its end after applying
// the migrations and before it returns, so a binary started after it never
// reads a half-redone row, and a rerun after a crash or an interruption
// continues after the last batch that committed.
//
// The contract, for a migration NNNN that needs one:
//
//  1. Its up SQL creates the step's batch function
//
//       CREATE FUNCTION f(after text, batch_size integer) RETURNS text
//
//     which does one batch: at most `batch_size` rows past the cursor
//     `after` (NULL: from the first), in the order of the key it walks
//     (benchmark_runs by run_id, say), and returns the cursor of the last
//     row it did, or NULL when none was left (the step is then done). The
//     cursor is the step's own text (a uuid, a number).
//  2. It registers the step in the same transaction:
//
//       INSERT INTO schema_backfills (name, migration, position,
//       batch_function) VALUES ('NNNN_what', NNNN, 1, 'f');
//
//     Steps run one at a time and one after the other, by (migration,
//     position, name): a step may rely on the ones before it being done
//     (a step that gathers, then one that applies).
//  3. Its down SQL deletes its rows from schema_backfills and drops f.
//
// What the runner guarantees: each batch runs in its own transaction
// together with the update of the step's progress row (cursor, batches,
// done_at), so a batch is applied exactly once: a crash rolls back the
// batch and its cursor together. Each transaction waits at most
// kMigrationLockTimeout for a lock and is retried (after a pause that lets
// queued writes through) when it runs out or meets a deadlock, up to
// kMigrationLockAttempts times. Runners are serialized by the migrators'
// advisory lock.
//
// What a step must do itself: keep each batch short (row locks only, on
// rows it takes in one fixed order that every writer of them also takes,
// never a table lock), stay right while binaries of the schema window write
// (the rows they store meanwhile are counted once: by them or by the step,
// never both), and give the same result when run again from the start,
// because down and up again registers it afresh (recompute to a value, or
// mark in the rows what is done). docs/RELIABILITY.md, "Backfills".

// Created by the migrator (like schema_migrations), not by a numbered
// migration: every migration that registers a step finds it, whatever the
// order in which they are numbered.
inline constexpr char kCreateSchemaBackfills[] = R"sql(
CREATE TABLE IF NOT EXISTS schema_backfills (
  name            text PRIMARY KEY,
  migration       integer NOT NULL,
  position        integer NOT NULL DEFAULT 1,
  batch_function  text NOT NULL,
  cursor          text,
  batches         bigint NOT NULL DEFAULT 0,
  registered_at   timestamptz NOT NULL DEFAULT now(),
  updated_at      timestamptz NOT NULL DEFAULT now(),
  done_at         timestamptz
))sql";

struct BackfillOptions {
  // Rows a batch may do: what each step's function is called with. At 500,
  // migration 0027's batches take ~20 ms (reading runs) and ~250 ms
  // (locking and recounting rollup rows) on a loaded 2-core machine.
  int batch_size = 500;
  // Stop after this many batches in all, done or not (an interrupted
  // backfill, for tests); nullopt: run every step to its end.
  std::optional<int64_t> max_batches;
};

// One registered step and how far it got.
struct BackfillState {
  std::string name;
  int migration = 0;
  int64_t batches = 0;
  std::optional<absl::Time> done_at;  // nullopt: not done yet
};

// Inside storage (Migrator): runs the registered steps that are not done,
// in order, each to its end (or until `options.max_batches`). Returns the
// batches run. Throws what libpqxx throws.
int64_t RunPendingBackfills(pqxx::connection_base& c,
                            const BackfillOptions& options);

// Every registered step, in the order they run; none when the table does
// not exist. Throws what libpqxx throws.
std::vector<BackfillState> ReadBackfills(pqxx::connection_base& c);

}  // namespace placement::storage

#endif  // PLACEMENT_STORAGE_BACKFILLS_H_
