#ifndef PLACEMENT_CLIENTS_COMMON_RPC_ERRORS_H_
#define PLACEMENT_CLIENTS_COMMON_RPC_ERRORS_H_

#include <grpcpp/support/status.h>

#include <functional>
#include <string>

namespace placement::clients {

// "INVALID_ARGUMENT: <message>" followed by one indented line per field
// violation found in the status details (google.rpc.BadRequest).
std::string DescribeError(const grpc::Status& status);

// The same, each violation's field named by `field_name` (e.g. the command
// line flag that set a request field: "start_time" -> "--from").
std::string DescribeError(
    const grpc::Status& status,
    const std::function<std::string(const std::string& field)>& field_name);

// The canonical name of a gRPC status code ("INVALID_ARGUMENT").
const char* StatusCodeName(grpc::StatusCode code);

}  // namespace placement::clients

#endif  // PLACEMENT_CLIENTS_COMMON_RPC_ERRORS_H_
