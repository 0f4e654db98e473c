#ifndef PLACEMENT_SERVICES_RPC_POOL_STATE_SERVICE_H_
#define PLACEMENT_SERVICES_RPC_POOL_STATE_SERVICE_H_

#include "absl/time/time.h"
#include "placement/v1/pool_state.grpc.pb.h"
#include "services/auth/auth.h"
#include "services/plan/evidence_cache.h"
#include "storage/session/db_workers.h"

namespace placement::services {

// placement.v1.PoolStateService.
//
// ReportPoolState checks the report's shape, then on a database worker,
// holding the pool's row lock: the pool exists (NOT_FOUND), the report is
// not one already stored (the same: answered again, nothing written; other
// content at the same observed time: ALREADY_EXISTS), and it adds up
// (core::ValidatePoolState against the pool's capacity, its last report and
// the database's clock). Then what it teaches (core::LearnFromReport), the
// run times this service's plans expected of the jobs that carry a plan id
// (read from the stored plans, once per job), and a start forecast for each
// job seen waiting for the first time are stored with it in the same
// transaction; a refusal writes nothing. Once committed, this replica
// re-reads what changed (its next plan sees the report) and the others are
// notified.
//
// GetPoolState answers from the replica's snapshot.
class PoolStateService final : public v1::PoolStateService::CallbackService {
 public:
  // `max_age`: older reports are stale (their waits unknown).
  PoolStateService(storage::DbWorkers& workers, Authorizer& auth,
                   EvidenceCache& evidence, absl::Duration max_age)
      : workers_(workers),
        auth_(auth),
        evidence_(evidence),
        max_age_(max_age) {}

  grpc::ServerUnaryReactor* ReportPoolState(
      grpc::CallbackServerContext* context,
      const v1::ReportPoolStateRequest* request,
      v1::ReportPoolStateResponse* response) override;
  grpc::ServerUnaryReactor* GetPoolState(
      grpc::CallbackServerContext* context,
      const v1::GetPoolStateRequest* request,
      v1::GetPoolStateResponse* response) override;

 private:
  storage::DbWorkers& workers_;
  Authorizer& auth_;
  EvidenceCache& evidence_;
  const absl::Duration max_age_;
};

}  // namespace placement::services

#endif  // PLACEMENT_SERVICES_RPC_POOL_STATE_SERVICE_H_
