#ifndef PLACEMENT_SERVICES_API_EVAL_CRITERION_CONVERT_H_
#define PLACEMENT_SERVICES_API_EVAL_CRITERION_CONVERT_H_

#include "absl/time/time.h"
#include "core/evidence/eval_criterion.h"
#include "placement/v1/catalog.pb.h"

namespace placement::services {

// A stored criterion with the time storage recorded for it.
v1::EvalCriterion EvalCriterionToProto(const core::EvalCriterion& criterion,
                                       absl::Time update_time);

// Copies the client-settable fields (validate with ValidateEvalCriterion).
core::EvalCriterion EvalCriterionFromProto(const v1::EvalCriterion& criterion);

}  // namespace placement::services

#endif  // PLACEMENT_SERVICES_API_EVAL_CRITERION_CONVERT_H_
