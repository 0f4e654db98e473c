#ifndef PLACEMENT_SERVICES_API_RUN_CONVERT_H_
#define PLACEMENT_SERVICES_API_RUN_CONVERT_H_

#include <string>

#include "absl/strings/string_view.h"
#include "core/evidence/evidence.h"
#include "core/field_violation.h"
#include "google/protobuf/timestamp.pb.h"
#include "placement/v1/telemetry.pb.h"

namespace placement::services {

// Whether `t` is set and well formed: after the epoch, nanos in [0, 1e9).
bool IsWellFormedTime(const google::protobuf::Timestamp& t);

// The core view of an uploaded run as sent, before the catalog is read: the
// SKU and pool as named, the team as sent, the recipe key of the normalized
// recipe (empty without one), enums outside their range as kUnspecified and
// a time that is not IsWellFormedTime as absl::InfinitePast().
core::MeasuredRun MeasuredRunFromProto(const v1::BenchmarkRun& run);

// The BenchmarkRun path of a MeasuredRun member that a core rule names:
// "steps_succeeded" -> "run.steps_succeeded", "ended" -> "run.end_time".
std::string RunFieldPath(absl::string_view core_field);

// `violations` of core run rules with their fields renamed by RunFieldPath.
core::FieldViolations WithRunFieldPaths(core::FieldViolations violations);

}  // namespace placement::services

#endif  // PLACEMENT_SERVICES_API_RUN_CONVERT_H_
