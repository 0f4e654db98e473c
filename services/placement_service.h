#ifndef PLACEMENT_SERVICES_PLACEMENT_SERVICE_H_
#define PLACEMENT_SERVICES_PLACEMENT_SERVICE_H_

#include "placement/v1/placement.grpc.pb.h"
#include "services/evidence_cache.h"
#include "services/placement_metrics.h"
#include "storage/db_workers.h"

namespace placement::services {

// placement.v1.PlacementService. PlacePlan plans on the callback thread from
// the replica's in-memory snapshot (no database read) and records the plan
// on a database worker before answering, so that a run naming the plan id
// can be matched to it.
class PlacementService final : public v1::PlacementService::CallbackService {
 public:
  PlacementService(storage::DbWorkers& workers, EvidenceCache& evidence,
                   PlacementMetrics& metrics)
      : workers_(workers), evidence_(evidence), metrics_(metrics) {}

  grpc::ServerUnaryReactor* PlacePlan(
      grpc::CallbackServerContext* context,
      const v1::PlacePlanRequest* request,
      v1::PlacePlanResponse* response) override;
  grpc::ServerUnaryReactor* GetPlan(grpc::CallbackServerContext* context,
                                    const v1::GetPlanRequest* request,
                                    v1::GetPlanResponse* response) override;
  grpc::ServerUnaryReactor* GetPlanAccuracy(
      grpc::CallbackServerContext* context,
      const v1::GetPlanAccuracyRequest* request,
      v1::GetPlanAccuracyResponse* response) override;

 private:
  storage::DbWorkers& workers_;
  EvidenceCache& evidence_;
  PlacementMetrics& metrics_;
};

}  // namespace placement::services

#endif  // PLACEMENT_SERVICES_PLACEMENT_SERVICE_H_
