#include "services/api/grpc_status.h"

#include "core/precondition_violation.h"
#include "google/rpc/error_details.pb.h"
#include "google/rpc/status.pb.h"

namespace placement::services {

grpc::Status ToGrpcStatus(const absl::Status& status) {
  if (status.ok()) return grpc::Status::OK;
  const auto code = static_cast<grpc::StatusCode>(status.code());
  const std::string message(status.message());
  const std::vector<core::PreconditionViolation> preconditions =
      core::PreconditionViolationsFromStatus(status);
  if (!preconditions.empty()) {
    google::rpc::PreconditionFailure failure;
    for (const core::PreconditionViolation& v : preconditions) {
      google::rpc::PreconditionFailure::Violation* out =
          failure.add_violations();
      out->set_type(v.type);
      out->set_subject(v.subject);
      out->set_description(v.description);
    }
    google::rpc::Status rich;
    rich.set_code(static_cast<int>(code));
    rich.set_message(message);
    rich.add_details()->PackFrom(failure);
    return grpc::Status(code, message, rich.SerializeAsString());
  }
  const core::FieldViolations violations = core::ViolationsFromStatus(status);
  if (violations.empty()) return grpc::Status(code, message);

  google::rpc::BadRequest bad_request;
  for (const core::FieldViolation& v : violations) {
    google::rpc::BadRequest::FieldViolation* out =
        bad_request.add_field_violations();
    out->set_field(v.field);
    out->set_description(v.description);
  }
  google::rpc::Status rich;
  rich.set_code(static_cast<int>(code));
  rich.set_message(message);
  rich.add_details()->PackFrom(bad_request);
  return grpc::Status(code, message, rich.SerializeAsString());
}

grpc::Status InvalidArgument(const core::FieldViolations& violations) {
  return ToGrpcStatus(core::InvalidArgumentWithViolations(violations));
}

}  // namespace placement::services
