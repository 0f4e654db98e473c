#ifndef PLACEMENT_STORAGE_BAKE_OFF_RECORDS_H_
#define PLACEMENT_STORAGE_BAKE_OFF_RECORDS_H_

// What storage/stores/bake_off_store.h reads, without its database headers, for
// the code that converts it.

#include <optional>
#include <string>

#include "core/plan/recorded_plan.h"

namespace placement::storage {

// A pool of the bake-off and the recipe key its run was proposed with.
struct BakeOffTarget {
  std::string pool_name;
  std::string recipe_key;
};

// A stored run that carried out a bake-off run, from its columns (never its
// upload, but in the one case below).
struct MatchedUpload {
  // Every figure the verdict and a standard's proof read: the run as
  // measured (core::MeasuredRun: its id, recipe key, pool, SKU, team, GPUs,
  // start and end, steps, step times, peak memories, offload, interconnect,
  // retries and their causes, outcome), when it was stored, whether it names
  // the plan, and its failure reason (from run_failure_reasons, migration
  // 0025).
  core::BakeOffUpload run;
  // The run's stored upload (serialized placement.v1.BenchmarkRun), only for
  // a run that may carry a failure reason its row does not hold (stored
  // before migration 0025, or by a release built before it) and only when
  // it is at most kMaxUploadBytesReadForFailureReason: the reason is read
  // from it, and so are its retries' causes when benchmark_runs holds none
  // for it (stored before migration 0022). Otherwise unset.
  std::optional<std::string> upload_for_failure_reason;
};

}  // namespace placement::storage

#endif  // PLACEMENT_STORAGE_BAKE_OFF_RECORDS_H_
