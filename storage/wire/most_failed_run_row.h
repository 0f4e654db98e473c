#ifndef PLACEMENT_STORAGE_WIRE_MOST_FAILED_RUN_ROW_H_
#define PLACEMENT_STORAGE_WIRE_MOST_FAILED_RUN_ROW_H_

// A rollup row's most-failed run (migration 0028's columns, in the order
// both rollup tables keep them): failed attempts, of them the node's and the
// fabric's, the run's attempts, its counted and lost microseconds, then, in
// evidence_rollups only, its start-up bucket, and last the next run's
// failed attempts.

#include <pqxx/pqxx>

#include "core/evidence/most_failed_run.h"

namespace placement::storage {

// The columns from `first` on; `with_startup_bucket`: evidence_rollups'.
core::MostFailedRun MostFailedRunFromRow(const pqxx::row& row, int first,
                                         bool with_startup_bucket);

}  // namespace placement::storage

#endif  // PLACEMENT_STORAGE_WIRE_MOST_FAILED_RUN_ROW_H_
