#ifndef PLACEMENT_SERVICES_RPC_ADMIT_H_
#define PLACEMENT_SERVICES_RPC_ADMIT_H_

#include <grpcpp/grpcpp.h>

#include "absl/status/status.h"
#include "google/protobuf/message.h"
#include "services/auth/auth.h"

namespace placement::services {

// Whether a call may go on to its handler's own checks: the authorizer's
// decision on it (taken by the interceptor from the method gRPC is serving,
// so no handler names its method), then every enum value of `request`
// declared (UndeclaredEnumValues) and no refused character in its text
// (RefusedCharacterFields: controls, bidirectional overrides, line
// separators, newlines in keys): INVALID_ARGUMENT naming every such field.
// Every handler starts with one of these Admits (AdmitAndParse for
// PlacePlan); docs/SECURITY.md says how a new RPC is added.
absl::Status Admit(Authorizer& auth, const grpc::ServerContextBase& context,
                   const google::protobuf::Message& request);

// The decision alone, for a client-streaming handler: its messages are
// checked as they arrive (services/rpc/sample_stream_reactor.h).
absl::Status Admit(Authorizer& auth, const grpc::ServerContextBase& context);

// The same for a raw method, which receives bytes: the decision first (a
// caller refused learns nothing of how its bytes parse), then `bytes`
// parsed into `request` (INVALID_ARGUMENT if they do not), then its fields
// as above.
absl::Status Admit(Authorizer& auth, const grpc::ServerContextBase& context,
                   const grpc::ByteBuffer& bytes,
                   google::protobuf::Message* request);

// The raw Admit in its two steps, for a handler that sheds load between
// them (PlacePlan: a call refused under a burst costs no walk of its
// fields): the decision and the parse, then the fields. Both must pass
// before the handler's own checks.
absl::Status AdmitAndParse(Authorizer& auth,
                           const grpc::ServerContextBase& context,
                           const grpc::ByteBuffer& bytes,
                           google::protobuf::Message* request);
absl::Status AdmitFields(const google::protobuf::Message& request);

}  // namespace placement::services

#endif  // PLACEMENT_SERVICES_RPC_ADMIT_H_
