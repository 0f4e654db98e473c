#include "services/api/standard_convert.h"

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "common/proto_bytes.h"
#include "common/proto_time.h"
#include "common/sha256.h"
#include "services/api/run_validation.h"

namespace placement::services {
namespace {

// Reasons are for people: a paragraph, not a document.
constexpr size_t kMaxReasonLength = 2000;

void CheckReason(const std::string& reason, core::FieldViolations* out) {
  if (reason.empty()) {
    out->push_back({"reason", "is required: say why"});
  } else if (reason.size() > kMaxReasonLength) {
    out->push_back(
        {"reason", absl::StrCat("at most ", kMaxReasonLength, " characters")});
  }
}

}  // namespace

void StandardToProto(const storage::StandardRecord& record, v1::Standard* out) {
  const core::Standard& s = record.standard;
  out->set_standard_id(s.standard_id);
  out->set_request_id(s.request_id);
  out->mutable_recipe_class()->ParseFromString(record.recipe_class_proto);
  out->set_pool(s.pool_name);
  out->set_sku(s.sku_id);
  out->set_written_by(s.written_by);
  out->set_team(s.team);
  out->set_reason(s.reason);
  out->set_plan_id(s.plan_id);
  common::TimeToProto(s.created, out->mutable_create_time());
  out->mutable_cost_micros_per_successful_step_band()->set_low(
      s.cost_micros_per_successful_step_band.low);
  out->mutable_cost_micros_per_successful_step_band()->set_high(
      s.cost_micros_per_successful_step_band.high);
  out->mutable_failure_rate_per_hour_band()->set_low(
      s.failure_rate_per_hour_band.low);
  out->mutable_failure_rate_per_hour_band()->set_high(
      s.failure_rate_per_hour_band.high);
  out->set_active(s.active());
  if (s.retired.has_value()) {
    common::TimeToProto(*s.retired, out->mutable_retire_time());
    out->set_retired_by(s.retired_by);
    out->set_retire_reason(s.retire_reason);
  }
}

core::FieldViolations ValidateWriteStandard(
    const v1::WriteStandardRequest& request) {
  core::FieldViolations violations;
  if (request.request_id().empty()) {
    violations.push_back({"request_id", "is required (the idempotency key)"});
  } else if (request.request_id().size() > kMaxIdLength) {
    violations.push_back(
        {"request_id", absl::StrCat("at most ", kMaxIdLength, " characters")});
  }
  if (!IsUuid(request.plan_id())) {
    violations.push_back({"plan_id", "must be a UUID"});
  }
  if (request.pool().empty()) {
    violations.push_back({"pool", "is required"});
  } else if (request.pool().size() > kMaxIdLength) {
    violations.push_back(
        {"pool", absl::StrCat("at most ", kMaxIdLength, " characters")});
  }
  CheckReason(request.reason(), &violations);
  if (request.has_recipe_class() && request.recipe_class().model().empty()) {
    violations.push_back({"recipe_class.model", "is required in a class"});
  }
  if (request.team().size() > kMaxIdLength) {
    violations.push_back(
        {"team", absl::StrCat("at most ", kMaxIdLength, " characters")});
  }
  return violations;
}

core::FieldViolations ValidateRetireStandard(
    const v1::RetireStandardRequest& request) {
  core::FieldViolations violations;
  if (!IsUuid(request.standard_id())) {
    violations.push_back({"standard_id", "must be a UUID"});
  }
  CheckReason(request.reason(), &violations);
  return violations;
}

std::string WriteStandardFingerprint(const v1::WriteStandardRequest& request) {
  v1::WriteStandardRequest content = request;
  content.clear_request_id();
  return absl::BytesToHexString(
      common::Sha256(common::DeterministicBytes(content)));
}

}  // namespace placement::services
