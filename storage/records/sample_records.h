#ifndef PLACEMENT_STORAGE_SAMPLE_RECORDS_H_
#define PLACEMENT_STORAGE_SAMPLE_RECORDS_H_

// What storage/stores/sample_store.h reads and writes, without its database
// headers, for the code that converts it.

#include <cstdint>
#include <optional>
#include <string>

#include "absl/time/time.h"

namespace placement::storage {

// One step of a run in progress, already validated.
struct StepSampleRow {
  int64_t step = 0;
  absl::Time time;
  double step_time_s = 0;
  double memory_allocated_gb = 0;
  double memory_reserved_gb = 0;
  int64_t tokens = 0;
  std::optional<double> loss;
};

struct SampleProgress {
  // Every step 0..committed_through_step is stored; -1 when step 0 is not.
  int64_t committed_through_step = -1;
  int64_t max_step = -1;
  int64_t samples = 0;
  // When the run's samples were dropped by retention (their monthly
  // partition, storage/stores/sample_retention.h); the counts above are what
  // was stored before. Unset while they are kept.
  std::optional<absl::Time> samples_dropped_at;
  // The team the run's stream belongs to ("" for none, or a schema before
  // 0023); unset when no sample arrived.
  std::optional<std::string> team;
};

}  // namespace placement::storage

#endif  // PLACEMENT_STORAGE_SAMPLE_RECORDS_H_
