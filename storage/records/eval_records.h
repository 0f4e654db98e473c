#ifndef PLACEMENT_STORAGE_EVAL_RECORDS_H_
#define PLACEMENT_STORAGE_EVAL_RECORDS_H_

// What storage/stores/eval_store.h reads, without its database headers,
// for the code that converts it.

#include "core/evidence/eval_evidence.h"

namespace placement::storage {

struct StoredEval {
  core::EvalEvidence eval;
  int ordinal = 0;  // in the run's evals
};

}  // namespace placement::storage

#endif  // PLACEMENT_STORAGE_EVAL_RECORDS_H_
