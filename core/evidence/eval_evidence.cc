#include "core/evidence/eval_evidence.h"

namespace placement::core {
namespace {

// Whether `a` is preferred to `b` (MatchEval's order).
bool Preferred(const EvalEvidence& a, const EvalEvidence& b) {
  if (a.metric != b.metric) return a.metric < b.metric;
  if (a.score != b.score) return a.score > b.score;
  if (a.recorded != b.recorded) return a.recorded > b.recorded;
  return a.run_id < b.run_id;
}

}  // namespace

EvalStatus MatchEval(const std::vector<EvalEvidence>& evals,
                     const std::string& recipe_key,
                     const std::string& serving_sku_id,
                     Precision serving_precision) {
  EvalStatus status;
  status.recipe_key = recipe_key;
  status.serving_sku_id = serving_sku_id;
  status.serving_precision = serving_precision;
  for (const EvalEvidence& eval : evals) {
    if (eval.recipe_key != recipe_key ||
        eval.serving_sku_id != serving_sku_id ||
        eval.serving_precision != serving_precision) {
      continue;
    }
    if (!status.eval.has_value() || Preferred(eval, *status.eval)) {
      status.eval = eval;
    }
  }
  status.met = status.eval.has_value();
  return status;
}

}  // namespace placement::core
