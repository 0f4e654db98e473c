#ifndef PLACEMENT_SERVICES_API_GRPC_STATUS_H_
#define PLACEMENT_SERVICES_API_GRPC_STATUS_H_

#include <grpcpp/support/status.h>

#include "absl/status/status.h"
#include "core/field_violation.h"

namespace placement::services {

// The one mapping from absl::Status to grpc::Status. Codes map one to one;
// field violations carried by the status (core::InvalidArgumentWithViolations)
// are attached as a google.rpc.BadRequest inside a google.rpc.Status in the
// grpc-status-details-bin trailer, so that any gRPC client can read them.
grpc::Status ToGrpcStatus(const absl::Status& status);

// INVALID_ARGUMENT naming `violations` (shortcut for the handlers' own checks).
grpc::Status InvalidArgument(const core::FieldViolations& violations);

}  // namespace placement::services

#endif  // PLACEMENT_SERVICES_API_GRPC_STATUS_H_
