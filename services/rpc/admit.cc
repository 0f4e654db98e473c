#include "services/rpc/admit.h"

#include <grpcpp/support/proto_buffer_reader.h>

#include "absl/strings/str_cat.h"
#include "core/field_violation.h"
#include "services/api/enum_validation.h"

namespace placement::services {
namespace {

absl::Status DeclaredEnums(const google::protobuf::Message& request) {
  core::FieldViolations undeclared = UndeclaredEnumValues(request);
  if (undeclared.empty()) return absl::OkStatus();
  return core::InvalidArgumentWithViolations(undeclared);
}

}  // namespace

absl::Status Admit(Authorizer& auth, const grpc::ServerContextBase& context,
                   const google::protobuf::Message& request) {
  if (absl::Status denied = auth.Decision(context); !denied.ok()) {
    return denied;
  }
  return DeclaredEnums(request);
}

absl::Status Admit(Authorizer& auth, const grpc::ServerContextBase& context,
                   const grpc::ByteBuffer& bytes,
                   google::protobuf::Message* request) {
  if (absl::Status denied = auth.Decision(context); !denied.ok()) {
    return denied;
  }
  grpc::ByteBuffer shared(bytes);  // references the same slices
  grpc::ProtoBufferReader reader(&shared);
  if (!request->ParseFromZeroCopyStream(&reader) || !reader.status().ok()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the request is not a ", request->GetDescriptor()->full_name()));
  }
  return DeclaredEnums(*request);
}

}  // namespace placement::services
