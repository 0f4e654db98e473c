#ifndef PLACEMENT_SERVICES_RPC_COST_SERVICE_H_
#define PLACEMENT_SERVICES_RPC_COST_SERVICE_H_

#include "placement/v1/cost.grpc.pb.h"
#include "services/auth/auth.h"
#include "storage/session/db_workers.h"

namespace placement::services {

// placement.v1.CostService: cost per successful step for finance, served from
// the daily cost rollups (storage/stores/cost_store.h), never from raw runs.
//
// The request is validated on the callback thread (range, enums, grouping,
// page size and token); the SKU filter is checked against the catalog on a
// worker. Every refusal is INVALID_ARGUMENT with a google.rpc.BadRequest.
class CostService final : public v1::CostService::CallbackService {
 public:
  CostService(storage::DbWorkers& workers, Authorizer& auth)
      : workers_(workers), auth_(auth) {}

  grpc::ServerUnaryReactor* GetCostReport(
      grpc::CallbackServerContext* context,
      const v1::GetCostReportRequest* request,
      v1::GetCostReportResponse* response) override;

 private:
  storage::DbWorkers& workers_;
  Authorizer& auth_;
};

}  // namespace placement::services

#endif  // PLACEMENT_SERVICES_RPC_COST_SERVICE_H_
