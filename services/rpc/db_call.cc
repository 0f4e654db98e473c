#include "services/rpc/db_call.h"

#include <chrono>

#include "absl/strings/str_cat.h"
#include "services/api/grpc_status.h"

namespace placement::services {

grpc::ServerUnaryReactor* FinishNow(grpc::CallbackServerContext* context,
                                    const grpc::Status& status) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  reactor->Finish(status);
  return reactor;
}

grpc::ServerUnaryReactor* FinishOnDbWorker(
    grpc::CallbackServerContext* context, storage::DbWorkers& workers,
    std::function<absl::Status(storage::DbSession&)> work) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  FinishOnDbWorker(context, reactor, workers, std::move(work));
  return reactor;
}

void FinishOnDbWorker(grpc::CallbackServerContext* context,
                      grpc::ServerUnaryReactor* reactor,
                      storage::DbWorkers& workers,
                      std::function<absl::Status(storage::DbSession&)> work) {
  const bool queued = workers.TrySubmit(
      [context, reactor, work = std::move(work)](storage::DbSession& session) {
        if (context->IsCancelled()) {
          reactor->Finish(ToGrpcStatus(
              absl::CancelledError("the call was cancelled while queued")));
          return;
        }
        if (context->deadline() <= std::chrono::system_clock::now()) {
          reactor->Finish(ToGrpcStatus(absl::DeadlineExceededError(
              "the deadline passed while the call was queued")));
          return;
        }
        absl::Status status;
        try {
          status = work(session);
        } catch (const std::exception& e) {
          status =
              absl::InternalError(absl::StrCat("internal error: ", e.what()));
        } catch (...) {
          status = absl::InternalError("internal error");
        }
        reactor->Finish(ToGrpcStatus(status));
      });
  if (!queued) {
    reactor->Finish(ToGrpcStatus(absl::ResourceExhaustedError(
        "the server's database work queue is full; retry with backoff")));
  }
}

}  // namespace placement::services
