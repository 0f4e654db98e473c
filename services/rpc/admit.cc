#include "services/rpc/admit.h"

#include <grpcpp/support/proto_buffer_reader.h>

#include "absl/strings/str_cat.h"
#include "core/field_violation.h"
#include "services/api/enum_validation.h"
#include "services/api/text_validation.h"

namespace placement::services {
namespace {

// Every enum value declared and no refused character in any text field,
// all violations at once.
absl::Status AdmissibleFields(const google::protobuf::Message& request) {
  core::FieldViolations violations = UndeclaredEnumValues(request);
  core::FieldViolations controls = RefusedCharacterFields(request);
  violations.insert(violations.end(), controls.begin(), controls.end());
  if (violations.empty()) return absl::OkStatus();
  return core::InvalidArgumentWithViolations(violations);
}

}  // namespace

absl::Status Admit(Authorizer& auth, const grpc::ServerContextBase& context,
                   const google::protobuf::Message& request) {
  if (absl::Status denied = auth.Decision(context); !denied.ok()) {
    return denied;
  }
  return AdmissibleFields(request);
}

absl::Status Admit(Authorizer& auth, const grpc::ServerContextBase& context) {
  return auth.Decision(context);
}

absl::Status Admit(Authorizer& auth, const grpc::ServerContextBase& context,
                   const grpc::ByteBuffer& bytes,
                   google::protobuf::Message* request) {
  if (absl::Status parsed = AdmitAndParse(auth, context, bytes, request);
      !parsed.ok()) {
    return parsed;
  }
  return AdmissibleFields(*request);
}

absl::Status AdmitAndParse(Authorizer& auth,
                           const grpc::ServerContextBase& context,
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
  return absl::OkStatus();
}

absl::Status AdmitFields(const google::protobuf::Message& request) {
  return AdmissibleFields(request);
}

}  // namespace placement::services
