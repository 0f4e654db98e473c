// services/api/pool_state_convert: what a stored plan expected of a job it
// placed, read for the job's own layout (its pool and GPU count), never for
// another layout of the same pool.
#include "services/api/pool_state_convert.h"

#include <string>

#include "gtest/gtest.h"

namespace placement::services {
namespace {

// A plan that lists three layouts on "a100", the slowest first, and one on
// "l40s".
std::string PlanResponse() {
  v1::PlacePlanResponse plan;
  auto add = [&](const std::string& pool, int gpus, int64_t wall_s,
                 double step_s, double step_high_s) {
    v1::PlacementCandidate* c = plan.add_candidates();
    c->set_pool(pool);
    c->set_gpu_count(gpus);
    c->mutable_expected_wall_time()->set_seconds(wall_s);
    c->set_step_time_s(step_s);
    c->mutable_step_time_s_band()->set_low(step_s * 0.9);
    c->mutable_step_time_s_band()->set_high(step_high_s);
  };
  add("a100", 1, 36'000, 2.0, 2.5);
  add("a100", 4, 10'000, 0.55, 0.66);
  add("l40s", 4, 20'000, 1.1, 1.1);
  add("a100", 2, 19'000, 1.05, 1.05);
  return plan.SerializeAsString();
}

TEST(PlannedRunTimeFromPlanTest, ReadsTheCandidateOfTheJobsGpuCount) {
  const std::optional<core::PlannedRunTime> four =
      PlannedRunTimeFromPlan(PlanResponse(), "a100", 4);
  ASSERT_TRUE(four.has_value());
  EXPECT_DOUBLE_EQ(four->median_s, 10'000);
  EXPECT_DOUBLE_EQ(four->p90_s, 10'000 * 0.66 / 0.55);

  const std::optional<core::PlannedRunTime> two =
      PlannedRunTimeFromPlan(PlanResponse(), "a100", 2);
  ASSERT_TRUE(two.has_value());
  EXPECT_DOUBLE_EQ(two->median_s, 19'000);
  EXPECT_DOUBLE_EQ(two->p90_s, 19'000);  // a band no wider than its step
}

TEST(PlannedRunTimeFromPlanTest, NoCandidateOfThatLayoutIsNoExpectation) {
  // The orchestrator ran the job on 8 GPUs, which the plan never priced.
  EXPECT_FALSE(PlannedRunTimeFromPlan(PlanResponse(), "a100", 8).has_value());
  EXPECT_FALSE(PlannedRunTimeFromPlan(PlanResponse(), "h100", 4).has_value());
  EXPECT_FALSE(PlannedRunTimeFromPlan("not a plan", "a100", 4).has_value());
}

}  // namespace
}  // namespace placement::services
