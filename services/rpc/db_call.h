#ifndef PLACEMENT_SERVICES_RPC_DB_CALL_H_
#define PLACEMENT_SERVICES_RPC_DB_CALL_H_

#include <grpcpp/grpcpp.h>

#include <functional>

#include "absl/status/status.h"
#include "storage/session/db_workers.h"

namespace placement::services {

// Finishes a unary callback RPC with the result of `work`, which runs on one
// of the database worker threads, never on gRPC's callback thread.
//
// A full worker queue answers RESOURCE_EXHAUSTED at once; a call whose client
// gave up or whose deadline passed while it waited is finished without
// running `work`. Whatever `work` throws becomes INTERNAL: no exception
// reaches gRPC.
grpc::ServerUnaryReactor* FinishOnDbWorker(
    grpc::CallbackServerContext* context, storage::DbWorkers& workers,
    std::function<absl::Status(storage::DbSession&)> work);

// The same for a call whose reactor (context->DefaultReactor()) the caller
// already holds.
void FinishOnDbWorker(grpc::CallbackServerContext* context,
                      grpc::ServerUnaryReactor* reactor,
                      storage::DbWorkers& workers,
                      std::function<absl::Status(storage::DbSession&)> work);

// Finishes a unary callback RPC at once with `status`.
grpc::ServerUnaryReactor* FinishNow(grpc::CallbackServerContext* context,
                                    const grpc::Status& status);

}  // namespace placement::services

#endif  // PLACEMENT_SERVICES_RPC_DB_CALL_H_
