#include "core/field_violation.h"

#include "absl/strings/cord.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace placement::core {
namespace {

// Payload key; the encoding is internal to this file: one violation per line,
// field and description separated by a tab (neither may hold one: fields are
// API paths, descriptions are written by us).
constexpr char kViolationsPayload[] = "placement/field-violations";

std::string Sanitized(const std::string& text) {
  std::string out = text;
  for (char& c : out) {
    if (c == '\t' || c == '\n') c = ' ';
  }
  return out;
}

}  // namespace

absl::Status InvalidArgumentWithViolations(const FieldViolations& violations) {
  std::string message;
  std::string encoded;
  for (const FieldViolation& v : violations) {
    absl::StrAppend(&message, message.empty() ? "" : "; ", v.field, ": ",
                    v.description);
    absl::StrAppend(&encoded, Sanitized(v.field), "\t",
                    Sanitized(v.description), "\n");
  }
  absl::Status status = absl::InvalidArgumentError(message);
  status.SetPayload(kViolationsPayload, absl::Cord(encoded));
  return status;
}

FieldViolations ViolationsFromStatus(const absl::Status& status) {
  FieldViolations violations;
  auto payload = status.GetPayload(kViolationsPayload);
  if (!payload.has_value()) return violations;
  for (absl::string_view line :
       absl::StrSplit(std::string(*payload), '\n', absl::SkipEmpty())) {
    std::pair<std::string, std::string> parts =
        absl::StrSplit(line, absl::MaxSplits('\t', 1));
    violations.push_back({parts.first, parts.second});
  }
  return violations;
}

}  // namespace placement::core
