#include "storage/wire/most_failed_run_row.h"

#include <cstdint>

#include "core/units.h"

namespace placement::storage {

core::MostFailedRun MostFailedRunFromRow(const pqxx::row& row, int first,
                                         bool with_startup_bucket) {
  core::MostFailedRun run;
  int i = first;
  run.failed_attempts = row[i++].as<int64_t>();
  run.node_failed_attempts = row[i++].as<int64_t>();
  run.fabric_failed_attempts = row[i++].as<int64_t>();
  run.attempts = row[i++].as<int64_t>();
  run.counted_hours = core::HoursFromMicroseconds(row[i++].as<int64_t>());
  run.lost_hours = core::HoursFromMicroseconds(row[i++].as<int64_t>());
  if (with_startup_bucket) run.startup_bucket = row[i++].as<int>();
  run.second_failed_attempts = row[i].as<int64_t>();
  return run;
}

}  // namespace placement::storage
