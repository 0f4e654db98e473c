#include "services/rpc/cost_service.h"

#include <optional>
#include <utility>

#include "services/api/cost_request.h"
#include "services/api/grpc_status.h"
#include "services/rpc/admit.h"
#include "services/rpc/db_call.h"
#include "services/rpc/readings.h"

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
  // A caller bound to teams reports on its teams (ReadCostReport): a team
  // it does not reach is refused before a database worker is taken.
  std::optional<Principal> caller = auth_.Caller(*context);
  if (absl::Status s = CheckCostTeams(caller, *valid); !s.ok()) {
    return FinishNow(context, ToGrpcStatus(s));
  }
  return FinishOnDbWorker(
      context, workers_,
      [response, valid = *std::move(valid), caller = std::move(caller)](
          storage::DbSession& session) -> absl::Status {
        absl::StatusOr<v1::GetCostReportResponse> report =
            ReadCostReport(session, valid, caller);
        if (!report.ok()) return report.status();
        *response = *std::move(report);
        return absl::OkStatus();
      });
}

}  // namespace placement::services
