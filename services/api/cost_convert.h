#ifndef PLACEMENT_SERVICES_API_COST_CONVERT_H_
#define PLACEMENT_SERVICES_API_COST_CONVERT_H_

#include <cstdint>
#include <string>

#include "placement/v1/cost.pb.h"
#include "storage/records/cost_records.h"

namespace placement::services {

// Nano-units as a decimal with nine places: 1777778 -> "0.001777778".
std::string DecimalFromNanos(int64_t nanos);

// One row of a cost report; `query` says whether rows carry a period.
void CostRowToProto(const storage::CostRow& row,
                    const storage::CostQuery& query, v1::CostReportRow* out);

}  // namespace placement::services

#endif  // PLACEMENT_SERVICES_API_COST_CONVERT_H_
