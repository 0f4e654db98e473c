#include "core/precondition_violation.h"

#include "absl/strings/cord.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace placement::core {
namespace {

// Payload key; one violation a line, its three parts separated by tabs.
constexpr char kPreconditionPayload[] = "placement/precondition-violations";

std::string Sanitized(const std::string& text) {
  std::string out = text;
  for (char& c : out) {
    if (c == '\t' || c == '\n') c = ' ';
  }
  return out;
}

}  // namespace

absl::Status FailedPreconditionWithViolations(
    const std::vector<PreconditionViolation>& violations) {
  std::string message;
  std::string encoded;
  for (const PreconditionViolation& v : violations) {
    absl::StrAppend(&message, message.empty() ? "" : "; ", v.description);
    absl::StrAppend(&encoded, Sanitized(v.type), "\t", Sanitized(v.subject),
                    "\t", Sanitized(v.description), "\n");
  }
  absl::Status status = absl::FailedPreconditionError(message);
  status.SetPayload(kPreconditionPayload, absl::Cord(encoded));
  return status;
}

std::vector<PreconditionViolation> PreconditionViolationsFromStatus(
    const absl::Status& status) {
  std::vector<PreconditionViolation> violations;
  auto payload = status.GetPayload(kPreconditionPayload);
  if (!payload.has_value()) return violations;
  for (absl::string_view line :
       absl::StrSplit(std::string(*payload), '\n', absl::SkipEmpty())) {
    std::vector<std::string> parts =
        absl::StrSplit(line, absl::MaxSplits('\t', 2));
    parts.resize(3);
    violations.push_back({parts[0], parts[1], parts[2]});
  }
  return violations;
}

}  // namespace placement::core
