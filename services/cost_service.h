#ifndef PLACEMENT_SERVICES_COST_SERVICE_H_
#define PLACEMENT_SERVICES_COST_SERVICE_H_

#include "placement/v1/cost.grpc.pb.h"
#include "storage/db_workers.h"

namespace placement::services {

// placement.v1.CostService.
class CostService final : public v1::CostService::CallbackService {
 public:
  explicit CostService(storage::DbWorkers& workers) : workers_(workers) {}

 private:
  [[maybe_unused]] storage::DbWorkers& workers_;
};

}  // namespace placement::services

#endif  // PLACEMENT_SERVICES_COST_SERVICE_H_
