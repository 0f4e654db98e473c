#ifndef PLACEMENT_STORAGE_BAKE_OFF_RECORDS_H_
#define PLACEMENT_STORAGE_BAKE_OFF_RECORDS_H_

// What storage/bake_off_store.h reads, without its database headers, for the
// code that converts it.

#include <cstdint>
#include <string>

#include "absl/time/time.h"

namespace placement::storage {

// A pool of the bake-off and the recipe key its run was proposed with.
struct BakeOffTarget {
  std::string pool_name;
  std::string recipe_key;
};

struct MatchedUpload {
  std::string upload;  // serialized placement.v1.BenchmarkRun
  std::string recipe_key;
  absl::Time accepted;
  int64_t gpu_microseconds = 0;
  bool carries_plan_id = false;
};

}  // namespace placement::storage

#endif  // PLACEMENT_STORAGE_BAKE_OFF_RECORDS_H_
