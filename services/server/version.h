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
// first asks whether the schema has it (storage/eval_store.h), so on 17 this
// binary plans with no evals and stores evals in the upload only.
// 20 (eval_criteria) neither: reads find no criteria on an older schema,
// and writes of criteria are UNAVAILABLE there.
// 21 (standards) does not move it either: every statement on that table
// first asks whether the schema has it (storage/standard_store.h); before 21
// plans apply no standard and the standards RPCs answer UNAVAILABLE.
// 25 (run_failure_reasons) neither: runs store their reason there only when
// the schema has it, and a bake-off reads a run's reason from its upload
// (bounded) when the table or the run's row is missing
// (storage/bake_off_store.h).
inline constexpr int kOldestSchemaVersion = 17;
inline constexpr int kNewestSchemaVersion = 25;

}  // namespace placement::services

#endif  // PLACEMENT_SERVICES_SERVER_VERSION_H_
