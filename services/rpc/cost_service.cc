#include "services/rpc/cost_service.h"

#include <utility>
#include <vector>

#include "core/field_violation.h"
#include "core/sku.h"
#include "services/api/cost_request.h"
#include "services/api/grpc_status.h"
#include "services/auth/team_access.h"
#include "services/rpc/admit.h"
#include "services/rpc/db_call.h"
#include "storage/cost_store.h"
#include "storage/sku_store.h"

namespace placement::services {

grpc::ServerUnaryReactor* CostService::GetCostReport(
    grpc::CallbackServerContext* context,
    const v1::GetCostReportRequest* request,
    v1::GetCostReportResponse* response) {
  if (absl::Status admitted = Admit(auth_, *context, *request);
      !admitted.ok()) {
    return FinishNow(context, ToGrpcStatus(admitted));
  }
  absl::StatusOr<CostRequest> valid = ValidateCostRequest(*request);
  if (!valid.ok()) return FinishNow(context, ToGrpcStatus(valid.status()));
  // A caller bound to teams reports on its teams: all of them unless the
  // filter names some, and only them.
  const std::optional<Principal> caller = auth_.Caller(*context);
  for (const std::string& team : valid->query.teams) {
    if (absl::Status s =
            CheckTeam(caller, team, "the cost named in filter.teams");
        !s.ok()) {
      return FinishNow(context, ToGrpcStatus(s));
    }
  }
  if (valid->query.teams.empty()) valid->query.teams = TeamsOfListing(caller);
  return FinishOnDbWorker(
      context, workers_,
      [response,
       valid = *std::move(valid)](storage::DbSession& session) -> absl::Status {
        if (!valid.query.skus.empty()) {
          absl::StatusOr<std::vector<core::GpuSku>> catalog =
              storage::ListSkus(session);
          if (!catalog.ok()) return catalog.status();
          core::FieldViolations violations =
              CheckCostSkus(valid.query.skus, *catalog);
          if (!violations.empty()) {
            return core::InvalidArgumentWithViolations(violations);
          }
        }
        absl::StatusOr<storage::CostPage> page = storage::GetCostReport(
            session, valid.query, valid.after, valid.page_size);
        if (!page.ok()) return page.status();
        CostPageToProto(*page, valid, response);
        return absl::OkStatus();
      });
}

}  // namespace placement::services
