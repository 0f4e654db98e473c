#ifndef PLACEMENT_SERVICES_API_PLACEMENT_CONVERT_H_
#define PLACEMENT_SERVICES_API_PLACEMENT_CONVERT_H_

#include "core/plan/planner.h"
#include "placement/v1/placement.pb.h"

namespace placement::services {

// placement.v1.PlacePlanRequest -> core::PlanRequest, field for field (the
// serving SKU name is taken as given; the caller resolves it).
core::PlanRequest PlanRequestFromProto(const v1::PlacePlanRequest& request);

// The planner's result as the API's response (without plan id and times).
v1::PlacePlanResponse PlanResultToProto(const core::PlanResult& result);

const char* ObjectiveName(core::Objective objective);
core::Objective ObjectiveFromProto(v1::Objective objective);

void EvalStatusToProto(const core::EvalStatus& status, v1::EvalStatus* proto);

void BandToProto(const core::Band& band, v1::Band* out);

void FailureRateToProto(const core::FailureRate& in, v1::FailureRate* out);

// What a measured layout's runs cost and, when `projected` > 0, the
// projection of a job as long as theirs per successful step.
void ObservedCostToProto(const core::ObservedCost& in, double projected,
                         v1::ObservedCost* out);

}  // namespace placement::services

#endif  // PLACEMENT_SERVICES_API_PLACEMENT_CONVERT_H_
