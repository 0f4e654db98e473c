#ifndef PLACEMENT_SERVICES_API_RUN_CONVERT_H_
#define PLACEMENT_SERVICES_API_RUN_CONVERT_H_

#include <string>

#include "absl/strings/string_view.h"
#include "core/evidence/evidence.h"
#include "core/field_violation.h"
#include "core/recipe.h"
#include "google/protobuf/timestamp.pb.h"
#include "placement/v1/telemetry.pb.h"

namespace placement::services {

// Whether `t` is set and well formed: after the epoch, nanos in [0, 1e9).
bool IsWellFormedTime(const google::protobuf::Timestamp& t);

// An uploaded run converted to core once, for validation and storage alike.
struct UploadedRun {
  // The normalized recipe with the peak memory kind the run reports
  // (RunRecipeFromProto); the normalized default recipe without one.
  core::Recipe recipe;
  // The core view of the run as sent, before the catalog is read: the SKU
  // and pool as named, the team as sent, the recipe key of `recipe` (empty
  // when the upload has no recipe), enums outside their range as
  // kUnspecified and a time that is not IsWellFormedTime as
  // absl::InfinitePast().
  core::MeasuredRun run;
};
UploadedRun UploadedRunFromProto(const v1::BenchmarkRun& run);

// The BenchmarkRun path of a MeasuredRun member that a core rule names:
// "steps_succeeded" -> "run.steps_succeeded", "ended" -> "run.end_time".
std::string RunFieldPath(absl::string_view core_field);

// `violations` of core run rules with their fields renamed by RunFieldPath.
core::FieldViolations WithRunFieldPaths(core::FieldViolations violations);

}  // namespace placement::services

#endif  // PLACEMENT_SERVICES_API_RUN_CONVERT_H_
