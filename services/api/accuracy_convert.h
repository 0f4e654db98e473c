#ifndef PLACEMENT_SERVICES_API_ACCURACY_CONVERT_H_
#define PLACEMENT_SERVICES_API_ACCURACY_CONVERT_H_

#include "placement/v1/placement.pb.h"
#include "storage/records/plan_accuracy_records.h"

namespace placement::services {

// One SKU's prediction errors, the planner's and the analytic prior's on the
// same runs (GetPlanAccuracy).
void SkuAccuracyToProto(const storage::SkuAccuracyRow& row,
                        v1::SkuAccuracy* out);

}  // namespace placement::services

#endif  // PLACEMENT_SERVICES_API_ACCURACY_CONVERT_H_
