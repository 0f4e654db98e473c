#include "services/api/eval_criterion_convert.h"

#include "common/proto_time.h"

namespace placement::services {

v1::EvalCriterion EvalCriterionToProto(const core::EvalCriterion& criterion,
                                       absl::Time update_time) {
  v1::EvalCriterion out;
  out.set_name(criterion.name);
  out.set_pool(criterion.pool_name);
  out.set_label_key(criterion.label_key);
  out.set_label_value(criterion.label_value);
  out.set_metric_name(criterion.metric);
  if (criterion.min_score.has_value()) out.set_min_score(*criterion.min_score);
  if (criterion.max_score.has_value()) out.set_max_score(*criterion.max_score);
  common::TimeToProto(update_time, out.mutable_update_time());
  return out;
}

core::EvalCriterion EvalCriterionFromProto(const v1::EvalCriterion& criterion) {
  core::EvalCriterion out;
  out.name = criterion.name();
  out.pool_name = criterion.pool();
  out.label_key = criterion.label_key();
  out.label_value = criterion.label_value();
  out.metric = criterion.metric_name();
  if (criterion.has_min_score()) out.min_score = criterion.min_score();
  if (criterion.has_max_score()) out.max_score = criterion.max_score();
  return out;
}

}  // namespace placement::services
