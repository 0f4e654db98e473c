#ifndef PLACEMENT_CLIENTS_COMMON_RPC_ERRORS_H_
#define PLACEMENT_CLIENTS_COMMON_RPC_ERRORS_H_

#include <string>

#include <grpcpp/support/status.h>

namespace placement::clients {

// "INVALID_ARGUMENT: <message>" followed by one indented line per field
// violation found in the status details (google.rpc.BadRequest).
std::string DescribeError(const grpc::Status& status);

// The canonical name of a gRPC status code ("INVALID_ARGUMENT").
const char* StatusCodeName(grpc::StatusCode code);

}  // namespace placement::clients

#endif  // PLACEMENT_CLIENTS_COMMON_RPC_ERRORS_H_
