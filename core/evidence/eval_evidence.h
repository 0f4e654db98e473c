#ifndef PLACEMENT_CORE_EVIDENCE_EVAL_EVIDENCE_H_
#define PLACEMENT_CORE_EVIDENCE_EVAL_EVIDENCE_H_

// An export-and-eval of a run's fine-tuned weights on a serving SKU in a
// serving precision (BenchmarkRun.evals): the evidence that a plan's
// serve_what_you_evaluated requirement is met.

#include <optional>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "core/evidence/eval_criterion.h"
#include "core/recipe.h"

namespace placement::core {

struct EvalEvidence {
  std::string run_id;
  std::string recipe_key;  // of the run that trained the weights
  std::string serving_sku_id;
  Precision serving_precision = Precision::kUnspecified;
  std::string metric;
  double score = 0;
  absl::Time recorded;  // when the run carrying it was stored
};

// One declared criterion held against the evals that match a requirement.
struct EvalCheck {
  EvalCriterion criterion;
  bool passed = false;
  // The eval of the criterion's metric that decides it: the best passing
  // one, else the one closest to passing; unset when none has the metric.
  std::optional<EvalEvidence> eval;
};

// Whether a plan's eval requirement is met, and by which eval.
struct EvalStatus {
  // What is required.
  std::string recipe_key;
  std::string serving_sku_id;
  Precision serving_precision = Precision::kUnspecified;
  bool met = false;
  std::optional<EvalEvidence> eval;  // set when met
  // One per criterion that applies, in name order; empty when none does.
  std::vector<EvalCheck> checks;
};

// The eval that meets a requirement to evaluate `recipe_key` on
// `serving_sku_id` in `serving_precision`, among `evals`: only an eval of
// that recipe key on exactly that SKU and precision counts (an eval in
// another precision says nothing about this one).
//
// Without `criteria` any such eval meets the requirement: the metric first
// in name order, and within it the best (highest) score, then the newest,
// then the smallest run id, is shown. With criteria (those that apply to the
// training pool, CriteriaFor), the requirement is met only when every one
// has a passing eval of its metric; the first criterion's eval is shown.
EvalStatus MatchEval(const std::vector<EvalEvidence>& evals,
                     const std::string& recipe_key,
                     const std::string& serving_sku_id,
                     Precision serving_precision,
                     const std::vector<EvalCriterion>& criteria = {});

}  // namespace placement::core

#endif  // PLACEMENT_CORE_EVIDENCE_EVAL_EVIDENCE_H_
