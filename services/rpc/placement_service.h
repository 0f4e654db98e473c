#ifndef PLACEMENT_SERVICES_RPC_PLACEMENT_SERVICE_H_
#define PLACEMENT_SERVICES_RPC_PLACEMENT_SERVICE_H_

#include "placement/v1/placement.grpc.pb.h"
#include "services/auth/auth.h"
#include "services/metrics/placement_metrics.h"
#include "services/plan/evidence_cache.h"
#include "services/plan/plan_audit_writer.h"
#include "services/plan/plan_cache.h"
#include "storage/db_workers.h"

namespace placement::services {

// When a plan's record is committed relative to its answer.
enum class PlanRecords {
  kDurable,   // before the answer (the default)
  kDeferred,  // after the answer, in groups
};

// placement.v1.PlacementService.
//
// PlacePlan plans on the callback thread from the replica's in-memory
// snapshot (no database read; identical requests against the same snapshot
// reuse the deterministic result) and answers once the plan's audit record
// is committed, so that a run naming the plan id can be matched to it. The
// records are written with group commit (PlanAuditWriter); a plan carrying a
// request_id goes through a database worker instead, to honour it.
//
// With deferred records (PlanRecords::kDeferred) a plan without a request_id
// is answered as soon as its record is queued, and the writer commits the
// queue in groups: more plans per core, at the price of the records still
// queued when the process dies, and of a plan that fails to be recorded
// being counted (placement_plan_records_lost_total) rather than flagged to
// its caller. GetPlan on this replica waits for the queue, so a caller
// finds the plan it was just given.
//
// PlacePlan is a raw method: it answers with bytes assembled from the cached
// result's serialization and the plan's own fields (PlanResponseBytes), so a
// result is serialized once however many plans it answers.
class PlacementService final
    : public v1::PlacementService::WithRawCallbackMethod_PlacePlan<
          v1::PlacementService::CallbackService> {
 public:
  PlacementService(storage::DbWorkers& workers, Authorizer& auth,
                   PlanAuditWriter& audit, EvidenceCache& evidence,
                   PlacementMetrics& metrics,
                   PlanRecords records = PlanRecords::kDurable)
      : workers_(workers),
        auth_(auth),
        audit_(audit),
        evidence_(evidence),
        metrics_(metrics),
        records_(records),
        cache_(/*capacity=*/4096) {}

  grpc::ServerUnaryReactor* PlacePlan(grpc::CallbackServerContext* context,
                                      const grpc::ByteBuffer* request,
                                      grpc::ByteBuffer* response) override;
  grpc::ServerUnaryReactor* GetPlan(grpc::CallbackServerContext* context,
                                    const v1::GetPlanRequest* request,
                                    v1::GetPlanResponse* response) override;
  grpc::ServerUnaryReactor* GetPlanAccuracy(
      grpc::CallbackServerContext* context,
      const v1::GetPlanAccuracyRequest* request,
      v1::GetPlanAccuracyResponse* response) override;

 private:
  storage::DbWorkers& workers_;
  Authorizer& auth_;
  PlanAuditWriter& audit_;
  EvidenceCache& evidence_;
  PlacementMetrics& metrics_;
  const PlanRecords records_;
  PlanCache cache_;
};

}  // namespace placement::services

#endif  // PLACEMENT_SERVICES_RPC_PLACEMENT_SERVICE_H_
