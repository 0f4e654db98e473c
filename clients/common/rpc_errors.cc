#include "clients/common/rpc_errors.h"

#include "absl/strings/str_cat.h"
#include "google/rpc/error_details.pb.h"
#include "google/rpc/status.pb.h"

namespace placement::clients {

const char* StatusCodeName(grpc::StatusCode code) {
  static constexpr const char* kNames[17] = {"OK",
                                             "CANCELLED",
                                             "UNKNOWN",
                                             "INVALID_ARGUMENT",
                                             "DEADLINE_EXCEEDED",
                                             "NOT_FOUND",
                                             "ALREADY_EXISTS",
                                             "PERMISSION_DENIED",
                                             "RESOURCE_EXHAUSTED",
                                             "FAILED_PRECONDITION",
                                             "ABORTED",
                                             "OUT_OF_RANGE",
                                             "UNIMPLEMENTED",
                                             "INTERNAL",
                                             "UNAVAILABLE",
                                             "DATA_LOSS",
                                             "UNAUTHENTICATED"};
  const int index = static_cast<int>(code);
  return index >= 0 && index < 17 ? kNames[index] : "UNKNOWN";
}

std::string DescribeError(const grpc::Status& status) {
  return DescribeError(status, [](const std::string& field) { return field; });
}

std::string DescribeError(
    const grpc::Status& status,
    const std::function<std::string(const std::string& field)>& field_name) {
  const std::string code = StatusCodeName(status.error_code());
  google::rpc::Status rich;
  std::string violations;
  if (!status.error_details().empty() &&
      rich.ParseFromString(status.error_details())) {
    for (const google::protobuf::Any& detail : rich.details()) {
      google::rpc::BadRequest bad_request;
      if (!detail.UnpackTo(&bad_request)) continue;
      for (const auto& violation : bad_request.field_violations()) {
        absl::StrAppend(&violations, "\n  ", field_name(violation.field()),
                        ": ", violation.description());
      }
    }
  }
  // The message of a BadRequest status repeats its violations; list them
  // one a line instead.
  if (!violations.empty()) return absl::StrCat(code, ":", violations);
  return absl::StrCat(code, ": ", status.error_message());
}

}  // namespace placement::clients
