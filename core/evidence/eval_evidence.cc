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

// How far `score` is outside the criterion's bounds (0 when it passes).
double Shortfall(const EvalCriterion& criterion, double score) {
  if (criterion.min_score.has_value() && score < *criterion.min_score) {
    return *criterion.min_score - score;
  }
  if (criterion.max_score.has_value() && score > *criterion.max_score) {
    return score - *criterion.max_score;
  }
  return 0;
}

// The eval of the criterion's metric that decides it (EvalCheck::eval).
EvalCheck Check(const std::vector<const EvalEvidence*>& matching,
                const EvalCriterion& criterion) {
  EvalCheck check;
  check.criterion = criterion;
  for (const EvalEvidence* eval : matching) {
    if (eval->metric != criterion.metric) continue;
    if (!check.eval.has_value()) {
      check.eval = *eval;
      continue;
    }
    const double shortfall = Shortfall(criterion, eval->score);
    const double held = Shortfall(criterion, check.eval->score);
    if (shortfall != held) {
      if (shortfall < held) check.eval = *eval;
      continue;
    }
    // Equally far: the better score in the criterion's direction (lower
    // for a ceiling alone), then MatchEval's order.
    const bool lower_is_better = !criterion.min_score.has_value();
    if (eval->score != check.eval->score) {
      if ((eval->score < check.eval->score) == lower_is_better) {
        check.eval = *eval;
      }
    } else if (Preferred(*eval, *check.eval)) {
      check.eval = *eval;
    }
  }
  check.passed = check.eval.has_value() && Passes(criterion, check.eval->score);
  return check;
}

}  // namespace

EvalStatus MatchEval(const std::vector<EvalEvidence>& evals,
                     const std::string& recipe_key,
                     const std::string& serving_sku_id,
                     Precision serving_precision,
                     const std::vector<EvalCriterion>& criteria) {
  EvalStatus status;
  status.recipe_key = recipe_key;
  status.serving_sku_id = serving_sku_id;
  status.serving_precision = serving_precision;
  std::vector<const EvalEvidence*> matching;
  for (const EvalEvidence& eval : evals) {
    if (eval.recipe_key == recipe_key &&
        eval.serving_sku_id == serving_sku_id &&
        eval.serving_precision == serving_precision) {
      matching.push_back(&eval);
    }
  }
  if (criteria.empty()) {
    for (const EvalEvidence* eval : matching) {
      if (!status.eval.has_value() || Preferred(*eval, *status.eval)) {
        status.eval = *eval;
      }
    }
    status.met = status.eval.has_value();
    return status;
  }
  status.met = true;
  for (const EvalCriterion& criterion : criteria) {
    status.checks.push_back(Check(matching, criterion));
    status.met = status.met && status.checks.back().passed;
  }
  if (status.met) status.eval = status.checks.front().eval;
  return status;
}

}  // namespace placement::core
