#include "services/api/run_convert.h"

#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "common/proto_time.h"
#include "core/recipe.h"
#include "services/api/recipe_convert.h"

namespace placement::services {
namespace {

absl::Time TimeOrInfinitePast(const google::protobuf::Timestamp& t) {
  return IsWellFormedTime(t) ? common::TimeFromProto(t) : absl::InfinitePast();
}

}  // namespace

bool IsWellFormedTime(const google::protobuf::Timestamp& t) {
  return t.seconds() > 0 && t.nanos() >= 0 && t.nanos() < 1'000'000'000;
}

UploadedRun UploadedRunFromProto(const v1::BenchmarkRun& in) {
  UploadedRun out;
  out.recipe = core::NormalizeRecipe(RunRecipeFromProto(in));
  core::MeasuredRun& run = out.run;
  run.run_id = absl::AsciiStrToLower(in.run_id());
  // reported_peak is not part of the key: the run's kind changes nothing.
  if (in.has_recipe()) run.recipe_key = core::RecipeKey(out.recipe);
  run.sku_id = in.sku();
  run.pool_name = in.pool();
  run.team = in.team();
  run.gpu_count = in.gpu_count();
  run.started = TimeOrInfinitePast(in.start_time());
  run.ended = TimeOrInfinitePast(in.end_time());
  run.steps_attempted = in.steps_attempted();
  run.steps_succeeded = in.steps_succeeded();
  run.step_time_mean_s = in.step_time_mean_seconds();
  run.step_time_p50_s = in.step_time_p50_seconds();
  run.step_time_p95_s = in.step_time_p95_seconds();
  run.peak_memory_gb = in.peak_memory_gb();
  run.peak_memory_allocated_gb = in.peak_memory_allocated_gb();
  run.peak_memory_reserved_gb = in.peak_memory_reserved_gb();
  run.offload = OffloadFromProto(in.offload());
  run.interconnect = InterconnectFromProto(in.interconnect());
  run.collectives_opened = in.collectives_opened();
  run.retries = in.retries();
  for (int outcome : in.retry_outcomes()) {
    run.retry_outcomes.push_back(
        OutcomeFromProto(static_cast<v1::RunOutcome>(outcome)));
  }
  run.outcome = OutcomeFromProto(in.outcome());
  return out;
}

std::string RunFieldPath(absl::string_view core_field) {
  // Only the members whose proto name differs; the rest keep their name.
  static constexpr std::pair<absl::string_view, absl::string_view> kRenamed[] =
      {
          {"sku_id", "sku"},
          {"pool_name", "pool"},
          {"started", "start_time"},
          {"ended", "end_time"},
          {"step_time_mean_s", "step_time_mean_seconds"},
          {"step_time_p50_s", "step_time_p50_seconds"},
          {"step_time_p95_s", "step_time_p95_seconds"},
      };
  for (const auto& [member, field] : kRenamed) {
    if (member == core_field) return absl::StrCat("run.", field);
  }
  return absl::StrCat("run.", core_field);
}

core::FieldViolations WithRunFieldPaths(core::FieldViolations violations) {
  for (core::FieldViolation& v : violations) v.field = RunFieldPath(v.field);
  return violations;
}

}  // namespace placement::services
