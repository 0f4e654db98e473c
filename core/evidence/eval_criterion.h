#ifndef PLACEMENT_CORE_EVIDENCE_EVAL_CRITERION_H_
#define PLACEMENT_CORE_EVIDENCE_EVAL_CRITERION_H_

// What a team counts as a passing eval (CatalogService.SetEvalCriterion): a
// bound on one metric's score, for the weights trained on one pool or on
// every pool that carries a label. Without a criterion that applies, any
// eval on the serving SKU and precision meets a plan's eval requirement.

#include <optional>
#include <string>
#include <vector>

#include "core/field_violation.h"
#include "core/pool.h"

namespace placement::core {

struct EvalCriterion {
  // Unique; the same rules as a pool's name.
  std::string name;
  // Exactly one of: a pool's name, or a label (key and value).
  std::string pool_name;
  std::string label_key;
  std::string label_value;
  // The eval's metric, e.g. "exact_match" (EvalResult.metric_name).
  std::string metric;
  // At least one is set. A score passes when min <= score <= max: a floor
  // for accuracy-like metrics, a ceiling for loss-like ones.
  std::optional<double> min_score;
  std::optional<double> max_score;

  friend bool operator==(const EvalCriterion&, const EvalCriterion&) = default;
};

// Every replica reads them all at each refresh: a policy, not a log.
inline constexpr int kMaxEvalCriteria = 256;
inline constexpr int kMaxEvalMetricLength = 128;

// Whether `criterion` applies to weights trained on `pool`.
bool AppliesTo(const EvalCriterion& criterion, const Pool& pool);

// Whether `score` is within the criterion's bounds.
bool Passes(const EvalCriterion& criterion, double score);

// The criteria of `all` that apply to `pool`, in name order.
std::vector<EvalCriterion> CriteriaFor(const std::vector<EvalCriterion>& all,
                                       const Pool& pool);

// One violation per broken rule; paths are prefixed with `field_prefix`
// (e.g. "criterion.").
FieldViolations ValidateEvalCriterion(const EvalCriterion& criterion,
                                      const std::string& field_prefix);

}  // namespace placement::core

#endif  // PLACEMENT_CORE_EVIDENCE_EVAL_CRITERION_H_
