#ifndef PLACEMENT_SERVICES_RPC_CATALOG_SERVICE_H_
#define PLACEMENT_SERVICES_RPC_CATALOG_SERVICE_H_

#include "placement/v1/catalog.grpc.pb.h"
#include "services/auth/auth.h"
#include "services/plan/evidence_cache.h"
#include "storage/session/db_session.h"
#include "storage/session/db_workers.h"

namespace placement::services {

// placement.v1.CatalogService: the SKU catalog (read-only) and the pools.
// Requests are validated on the callback thread; storage work runs on the
// database workers. A request that fails validation changes nothing.
class CatalogService final : public v1::CatalogService::CallbackService {
 public:
  // `evidence`, when given, is re-read after every pool change this replica
  // commits, so that its next plan sees the change.
  CatalogService(storage::DbWorkers& workers, Authorizer& auth,
                 EvidenceCache* evidence = nullptr)
      : workers_(workers), auth_(auth), evidence_(evidence) {}

  grpc::ServerUnaryReactor* ListSkus(grpc::CallbackServerContext* context,
                                     const v1::ListSkusRequest* request,
                                     v1::ListSkusResponse* response) override;
  grpc::ServerUnaryReactor* GetSku(grpc::CallbackServerContext* context,
                                   const v1::GetSkuRequest* request,
                                   v1::GetSkuResponse* response) override;
  grpc::ServerUnaryReactor* CreatePool(
      grpc::CallbackServerContext* context,
      const v1::CreatePoolRequest* request,
      v1::CreatePoolResponse* response) override;
  grpc::ServerUnaryReactor* UpdatePool(
      grpc::CallbackServerContext* context,
      const v1::UpdatePoolRequest* request,
      v1::UpdatePoolResponse* response) override;
  grpc::ServerUnaryReactor* GetPool(grpc::CallbackServerContext* context,
                                    const v1::GetPoolRequest* request,
                                    v1::GetPoolResponse* response) override;
  grpc::ServerUnaryReactor* ListPools(grpc::CallbackServerContext* context,
                                      const v1::ListPoolsRequest* request,
                                      v1::ListPoolsResponse* response) override;
  grpc::ServerUnaryReactor* CreateToken(
      grpc::CallbackServerContext* context,
      const v1::CreateTokenRequest* request,
      v1::CreateTokenResponse* response) override;
  grpc::ServerUnaryReactor* RevokeToken(
      grpc::CallbackServerContext* context,
      const v1::RevokeTokenRequest* request,
      v1::RevokeTokenResponse* response) override;
  grpc::ServerUnaryReactor* ListTokens(
      grpc::CallbackServerContext* context,
      const v1::ListTokensRequest* request,
      v1::ListTokensResponse* response) override;
  grpc::ServerUnaryReactor* SetEvalCriterion(
      grpc::CallbackServerContext* context,
      const v1::SetEvalCriterionRequest* request,
      v1::SetEvalCriterionResponse* response) override;
  grpc::ServerUnaryReactor* ListEvalCriteria(
      grpc::CallbackServerContext* context,
      const v1::ListEvalCriteriaRequest* request,
      v1::ListEvalCriteriaResponse* response) override;
  grpc::ServerUnaryReactor* DeleteEvalCriterion(
      grpc::CallbackServerContext* context,
      const v1::DeleteEvalCriterionRequest* request,
      v1::DeleteEvalCriterionResponse* response) override;

 private:
  // After a committed change to pools, tokens or eval criteria: every
  // replica's snapshot follows.
  void PublishChange(storage::DbSession& session);

  storage::DbWorkers& workers_;
  Authorizer& auth_;
  EvidenceCache* const evidence_;
};

}  // namespace placement::services

#endif  // PLACEMENT_SERVICES_RPC_CATALOG_SERVICE_H_
