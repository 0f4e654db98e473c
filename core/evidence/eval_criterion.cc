#include "core/evidence/eval_criterion.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"

namespace placement::core {

bool AppliesTo(const EvalCriterion& criterion, const Pool& pool) {
  if (!criterion.pool_name.empty()) return criterion.pool_name == pool.name;
  const auto label = pool.labels.find(criterion.label_key);
  return label != pool.labels.end() && label->second == criterion.label_value;
}

bool Passes(const EvalCriterion& criterion, double score) {
  if (criterion.min_score.has_value() && score < *criterion.min_score) {
    return false;
  }
  return !criterion.max_score.has_value() || score <= *criterion.max_score;
}

std::vector<EvalCriterion> CriteriaFor(const std::vector<EvalCriterion>& all,
                                       const Pool& pool) {
  std::vector<EvalCriterion> applying;
  for (const EvalCriterion& criterion : all) {
    if (AppliesTo(criterion, pool)) applying.push_back(criterion);
  }
  std::sort(applying.begin(), applying.end(),
            [](const EvalCriterion& a, const EvalCriterion& b) {
              return a.name < b.name;
            });
  return applying;
}

FieldViolations ValidateEvalCriterion(const EvalCriterion& criterion,
                                      const std::string& field_prefix) {
  FieldViolations v;
  auto add = [&](const std::string& field, std::string description) {
    v.push_back({field_prefix + field, std::move(description)});
  };
  if (!IsValidPoolName(criterion.name)) {
    add("name", absl::StrCat("must be 1-", kMaxPoolNameLength,
                             " characters of a-z, 0-9 and '-', starting with a "
                             "letter and not ending with '-'"));
  }
  const bool by_pool = !criterion.pool_name.empty();
  const bool by_label = !criterion.label_key.empty();
  if (by_pool == by_label) {
    add("pool", "exactly one of pool and label must be set");
  } else if (by_pool && !IsValidPoolName(criterion.pool_name)) {
    add("pool", "is not a valid pool name");
  } else if (by_label &&
             !IsValidLabel(criterion.label_key, criterion.label_value)) {
    add("label", absl::StrCat("key and value are at most ", kMaxLabelLength,
                              " characters of letters, digits, '-', '_', "
                              "'.' (the key not empty)"));
  }
  if (criterion.metric.empty()) {
    add("metric_name", "is required");
  } else if (criterion.metric.size() > kMaxEvalMetricLength) {
    add("metric_name",
        absl::StrCat("at most ", kMaxEvalMetricLength, " characters"));
  }
  if (!criterion.min_score.has_value() && !criterion.max_score.has_value()) {
    add("min_score", "at least one of min_score and max_score must be set");
  }
  for (const auto& [field, bound] :
       {std::pair{"min_score", criterion.min_score},
        std::pair{"max_score", criterion.max_score}}) {
    if (bound.has_value() && !std::isfinite(*bound)) {
      add(field, "must be a finite number");
    }
  }
  if (criterion.min_score.has_value() && criterion.max_score.has_value() &&
      *criterion.min_score > *criterion.max_score) {
    add("max_score", "must not be below min_score");
  }
  return v;
}

}  // namespace placement::core
