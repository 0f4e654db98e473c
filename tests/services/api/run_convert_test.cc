// services/api/run_convert: the core view of an upload as sent (ids as
// keys, undeclared enums and malformed times as "unset" for core's rules
// to refuse), and core's member names mapped to the request's field paths.
#include "services/api/run_convert.h"

#include <string>

#include "absl/time/time.h"
#include "core/recipe.h"
#include "gtest/gtest.h"
#include "services/api/recipe_convert.h"
#include "tests/support/fixtures.h"

namespace placement::services {
namespace {

google::protobuf::Timestamp Ts(int64_t seconds, int32_t nanos) {
  google::protobuf::Timestamp t;
  t.set_seconds(seconds);
  t.set_nanos(nanos);
  return t;
}

TEST(IsWellFormedTimeTest, SetAfterTheEpochWithNanosInRange) {
  EXPECT_TRUE(IsWellFormedTime(Ts(1, 0)));
  EXPECT_TRUE(IsWellFormedTime(Ts(1'700'000'000, 999'999'999)));
  EXPECT_FALSE(IsWellFormedTime(Ts(0, 0)));  // unset
  EXPECT_FALSE(IsWellFormedTime(Ts(-1, 0)));
  EXPECT_FALSE(IsWellFormedTime(Ts(10, -1)));
  EXPECT_FALSE(IsWellFormedTime(Ts(10, 1'000'000'000)));
}

TEST(UploadedRunFromProtoTest, TakesTheUploadAsSent) {
  v1::BenchmarkRun in = testing::SucceededRun("pool-a", "a100-sxm4-80gb");
  in.set_run_id("0190F3C2-7A4B-7C3D-8E5F-123456789ABC");
  in.set_team("search");
  const core::MeasuredRun run = UploadedRunFromProto(in).run;
  EXPECT_EQ(run.run_id, "0190f3c2-7a4b-7c3d-8e5f-123456789abc");
  EXPECT_EQ(run.sku_id, "a100-sxm4-80gb");  // as named, not resolved
  EXPECT_EQ(run.pool_name, "pool-a");
  EXPECT_EQ(run.team, "search");
  EXPECT_EQ(
      run.recipe_key,
      core::RecipeKey(core::NormalizeRecipe(RecipeFromProto(in.recipe()))));
  EXPECT_EQ(run.started, absl::FromUnixSeconds(in.start_time().seconds()));
  EXPECT_EQ(run.ended, absl::FromUnixSeconds(in.end_time().seconds()));
  EXPECT_EQ(run.steps_succeeded, 1000);
  EXPECT_EQ(run.step_time_p95_s, 3.6);
  EXPECT_EQ(run.outcome, core::RunOutcome::kSucceeded);
  EXPECT_EQ(run.offload, core::Offload::kNone);
}

TEST(UploadedRunFromProtoTest, UnsetAndUndeclaredValuesReadAsUnset) {
  v1::BenchmarkRun in = testing::SucceededRun("pool-a", "A100");
  in.clear_recipe();
  *in.mutable_start_time() = Ts(5, -3);
  in.clear_end_time();
  in.set_outcome(static_cast<v1::RunOutcome>(99));
  in.set_offload(static_cast<v1::Offload>(99));
  const core::MeasuredRun run = UploadedRunFromProto(in).run;
  EXPECT_EQ(run.recipe_key, "");
  EXPECT_EQ(run.started, absl::InfinitePast());
  EXPECT_EQ(run.ended, absl::InfinitePast());
  EXPECT_EQ(run.outcome, core::RunOutcome::kUnspecified);
  EXPECT_EQ(run.offload, core::Offload::kUnspecified);
}

TEST(RunFieldPathTest, NamesTheRequestsFields) {
  EXPECT_EQ(RunFieldPath("sku_id"), "run.sku");
  EXPECT_EQ(RunFieldPath("pool_name"), "run.pool");
  EXPECT_EQ(RunFieldPath("started"), "run.start_time");
  EXPECT_EQ(RunFieldPath("ended"), "run.end_time");
  EXPECT_EQ(RunFieldPath("step_time_mean_s"), "run.step_time_mean_seconds");
  EXPECT_EQ(RunFieldPath("step_time_p50_s"), "run.step_time_p50_seconds");
  EXPECT_EQ(RunFieldPath("step_time_p95_s"), "run.step_time_p95_seconds");
  EXPECT_EQ(RunFieldPath("steps_succeeded"), "run.steps_succeeded");
}

TEST(RunFieldPathTest, EveryMappedPathIsAFieldOfBenchmarkRun) {
  // Whatever core member a rule names, the client is pointed at a field
  // that exists in its request.
  for (const char* member : {"run_id",
                             "sku_id",
                             "pool_name",
                             "team",
                             "gpu_count",
                             "started",
                             "ended",
                             "steps_attempted",
                             "steps_succeeded",
                             "step_time_mean_s",
                             "step_time_p50_s",
                             "step_time_p95_s",
                             "peak_memory_gb",
                             "peak_memory_allocated_gb",
                             "peak_memory_reserved_gb",
                             "offload",
                             "interconnect",
                             "collectives_opened",
                             "retries",
                             "outcome"}) {
    const std::string path = RunFieldPath(member);
    ASSERT_EQ(path.substr(0, 4), "run.") << member;
    EXPECT_NE(v1::BenchmarkRun::descriptor()->FindFieldByName(path.substr(4)),
              nullptr)
        << member << " -> " << path;
  }
}

TEST(WithRunFieldPathsTest, RenamesEveryViolationAndKeepsItsDescription) {
  const core::FieldViolations out = WithRunFieldPaths(
      {{"ended", "must be after started"}, {"retries", "must be >= 0"}});
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].field, "run.end_time");
  EXPECT_EQ(out[0].description, "must be after started");
  EXPECT_EQ(out[1].field, "run.retries");
  EXPECT_EQ(out[1].description, "must be >= 0");
}

}  // namespace
}  // namespace placement::services
