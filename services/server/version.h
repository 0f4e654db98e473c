#ifndef PLACEMENT_SERVICES_SERVER_VERSION_H_
#define PLACEMENT_SERVICES_SERVER_VERSION_H_

namespace placement::services {

// Set by CMake from the project version.
inline constexpr char kVersion[] = PLACEMENT_VERSION;

// The schema versions this binary reads and writes correctly (its
// compatibility window, docs/RELIABILITY.md "Schema upgrades"): from the
// first schema with every table and column its statements use, to the
// newest migration it embeds (storage::RequiredSchemaVersion(), checked by
// a test). Within it, health is SERVING; outside it, writes are refused
// with UNAVAILABLE. A schema newer than kNewestSchemaVersion is served too
// when it declares this binary compatible (schema_compatibility).
//
// Raise kOldestSchemaVersion when a statement starts to use something a
// migration adds; never above the version a rolling upgrade starts from.
// 17: the planner's snapshot reads the start-up and failure evidence of
// migration 0017 (on an older schema the catalog reads leave it out, so a
// binary started before `migrate up` still plans, from less, while its
// writes are refused).
// 19 (eval_results) does not move it: every read and write of that table
// first asks whether the schema has it (storage/stores/eval_store.h), so on 17
// this binary plans with no evals and stores evals in the upload only. 20
// (eval_criteria) neither: reads find no criteria on an older schema, and
// writes and listings of criteria are FAILED_PRECONDITION there. 21 (standards)
// does not move it either: every statement on that table first asks whether the
// schema has it (storage/stores/standard_store.h); before 21 plans apply no
// standard and the standards RPCs answer FAILED_PRECONDITION. 23 (token teams,
// a stream's team) neither: token and sample stream reads take their teams
// through to_jsonb (none before 23: every token unbound), a stream's team is
// written only where the column exists, and creating a token bound to teams is
// FAILED_PRECONDITION before 23 (storage/ token_store.h, sample_store.h). 24
// (pool_states) does not move it: every statement on that table first asks
// whether the schema has it (storage/stores/pool_state_store.h); before 24
// plans show every wait as unknown, ReportPoolState answers
// FAILED_PRECONDITION and an upload's submit_time stays in its bytes.
// 22 (failures per attempt) neither: the catalog reads leave its columns
// out on an older schema (storage/stores/pool_reliability_store.h: the per-run
// figures stand in), and a run's retry causes are written only where
// benchmark_runs has the column.
// 25 (run_failure_reasons) neither: runs store their reason there only when
// the schema has it, and a bake-off reads a run's reason from its upload
// (bounded) when the table or the run's row is missing
// (storage/stores/bake_off_store.h).
// 27 (the cost rollups recounted by one definition) neither: it changes
// figures in rows, by its backfill, not what any statement reads or writes.
// 28 (each rollup's most-failed run) neither: the catalog reads leave its
// columns out on an older schema, and no binary writes them (a trigger
// does).
inline constexpr int kOldestSchemaVersion = 17;
inline constexpr int kNewestSchemaVersion = 28;

}  // namespace placement::services

#endif  // PLACEMENT_SERVICES_SERVER_VERSION_H_
