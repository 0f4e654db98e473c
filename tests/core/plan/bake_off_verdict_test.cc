#include "core/plan/bake_off_verdict.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace placement::core {
namespace {

using ::testing::Contains;
using ::testing::HasSubstr;

constexpr absl::Time kStart = absl::FromUnixSeconds(1'700'000'000);

// An upload of `steps` steps of `step_s` after `startup_s` of start-up on
// `target`'s pool and recipe key.
BakeOffUpload Ran(const BakeOffTarget& target, const std::string& id,
                  int64_t steps, double step_s, double startup_s,
                  double peak_gb, RunOutcome outcome = RunOutcome::kSucceeded) {
  BakeOffUpload u;
  MeasuredRun& run = u.run;
  run.run_id = id;
  run.pool_name = target.pool_name;
  run.sku_id = target.sku_id;
  run.recipe_key = target.recipe_key;
  run.gpu_count = target.gpu_count;
  run.started = kStart;
  run.ended = kStart + absl::Seconds(startup_s + steps * step_s);
  run.steps_attempted = steps;
  run.steps_succeeded = outcome == RunOutcome::kSucceeded ? steps : 0;
  run.step_time_mean_s = step_s;
  run.step_time_p50_s = step_s;
  run.step_time_p95_s = step_s * 1.1;
  run.peak_memory_gb = peak_gb;
  run.offload = Offload::kNone;
  run.interconnect = Interconnect::kNone;
  run.outcome = outcome;
  return u;
}

BakeOffTarget Target(const std::string& pool, double card_gb,
                     int64_t rate_micros, bool proposed = true) {
  BakeOffTarget t;
  t.pool_name = pool;
  t.sku_id = pool + "-sku";
  t.gpu_count = 1;
  t.recipe_key = "key-" + pool;
  t.proposed = proposed;
  t.card_memory_gb = card_gb;
  t.internal_rate_micros_per_gpu_hour = rate_micros;
  return t;
}

RecordedPlan PlanOf(std::vector<BakeOffTarget> targets, int64_t steps) {
  RecordedPlan plan;
  plan.plan_id = "p";
  plan.total_steps = steps;
  plan.targets = std::move(targets);
  return plan;
}

TEST(BakeOffVerdictTest, APoolIsProjectedToThePlansJobFromItsRuns) {
  const BakeOffTarget t = Target("l40s", 48, 1'000'000);
  BakeOffUpload failed =
      Ran(t, "b", 500, 1, 100, 40, RunOutcome::kHardwareError);
  failed.failure_reason = "Xid 79";
  const BakeOffPoolVerdict v =
      JudgePool(t, {Ran(t, "a", 1000, 1, 100, 40), failed}, 10'000);
  EXPECT_TRUE(v.measured);
  EXPECT_EQ(v.runs, 2);
  EXPECT_EQ(v.runs_succeeded, 1);
  // Start-up apart, once per job: 100 s and 10,000 steps of 1 s, plus the
  // rework of one failure in 2 attempts (0.45 h held).
  EXPECT_NEAR(v.startup_gpu_hours, 100.0 / 3600, 1e-9);
  EXPECT_NEAR(v.step_gpu_hours, 1.0 / 3600, 1e-9);
  EXPECT_EQ(v.failure_rate.failures, 1);
  EXPECT_GT(v.gpu_hours_per_successful_step, (100.0 / 10'000 + 1) / 3600);
  EXPECT_LE(v.gpu_hours_per_successful_step_band.low,
            v.gpu_hours_per_successful_step);
  EXPECT_GE(v.gpu_hours_per_successful_step_band.high,
            v.gpu_hours_per_successful_step);
  EXPECT_DOUBLE_EQ(v.cost_micros_per_successful_step,
                   v.gpu_hours_per_successful_step * 1'000'000);
  // As the runs went: 1,700 s held for 1,000 kept steps.
  ASSERT_TRUE(v.observed.has_value());
  EXPECT_NEAR(v.observed->gpu_hours_per_successful_step, 1.7 / 3600, 1e-9);
  EXPECT_THAT(v.findings, Contains(HasSubstr("HARDWARE_ERROR: Xid 79")));
  EXPECT_TRUE(v.eligible);
}

// The trap the verdict fell into when it divided each pool's GPU-hours by
// its successful steps: a 50-step measurement carries a whole start-up, the
// first choice's 5,000-step job one start-up over many steps.
TEST(BakeOffVerdictTest, AShortMeasurementCheaperPerStepBeatsALongJob) {
  BakeOffTarget first = Target("a100", 80, 2'000'000, /*proposed=*/false);
  first.first_choice = true;
  const BakeOffTarget runner_up = Target("l40s", 48, 1'000'000);
  // a100: 5,000 steps of 1 s after 300 s (2 per GPU-hour): 2,000 per step.
  // l40s: 50 steps of 0.7 s after 300 s (1 per GPU-hour): raw 335 s for 50
  // steps is 1,861 per step; per step of the job it is 700 + 300/5,000 s.
  const std::vector<BakeOffUpload> uploads = {
      Ran(first, "job", 5000, 1, 300, 60),
      Ran(runner_up, "short", 50, 0.7, 300, 40)};
  const BakeOffVerdict verdict =
      JudgeBakeOff(PlanOf({runner_up, first}, 5000), uploads);
  EXPECT_EQ(verdict.winner_pool, "l40s");
  EXPECT_TRUE(verdict.decisive) << verdict.summary;
  EXPECT_THAT(verdict.summary, HasSubstr("projected to the plan's 5000 steps"));
}

TEST(BakeOffVerdictTest, OneMeasuredPoolIsNotDecisiveAndAnUnmeasuredOneStays) {
  BakeOffTarget first = Target("a100", 80, 2'000'000, /*proposed=*/false);
  first.first_choice = true;
  const BakeOffTarget proposed = Target("l40s", 48, 1'000'000);
  const BakeOffVerdict verdict = JudgeBakeOff(
      PlanOf({proposed, first}, 1000), {Ran(proposed, "a", 200, 1, 60, 40)});
  EXPECT_EQ(verdict.winner_pool, "l40s");
  EXPECT_FALSE(verdict.decisive);
  ASSERT_EQ(verdict.pools.size(), 2u);  // the first choice is not dropped
  EXPECT_EQ(verdict.pools[1].pool_name, "a100");
  EXPECT_FALSE(verdict.pools[1].measured);
  EXPECT_THAT(verdict.missing, Contains(HasSubstr("a100 has no run")));
  EXPECT_THAT(verdict.missing, Contains(HasSubstr("only one pool")));
}

// Only runs of the recipe key the plan chose on the pool count: a run of
// another layout measured something else.
TEST(BakeOffVerdictTest, RunsOfAnotherRecipeKeyDoNotCount) {
  const BakeOffTarget t = Target("l40s", 48, 1'000'000);
  BakeOffUpload other = Ran(t, "other", 200, 0.1, 10, 40);
  other.run.recipe_key = "key-of-another-layout";
  other.carries_plan_id = true;
  const BakeOffPoolVerdict v = JudgePool(t, {other}, 1000);
  EXPECT_FALSE(v.measured);
  EXPECT_EQ(v.runs, 0);
  EXPECT_FALSE(v.eligible);
  const BakeOffStatus status = JudgeRecordedPlan(PlanOf({t}, 1000), {other});
  EXPECT_EQ(status.complete, 0);
  EXPECT_THAT(status.waiting_for, Contains("l40s"));
  EXPECT_FALSE(status.verdict.has_value());
}

TEST(BakeOffVerdictTest, FiftyGbIdleOnAnEightyGbCardIsOverBought) {
  const BakeOffTarget t = Target("a100", 80, 2'000'000);
  const BakeOffPoolVerdict v = JudgePool(t, {Ran(t, "a", 100, 1, 10, 30)}, 100);
  EXPECT_TRUE(v.over_bought);
  EXPECT_DOUBLE_EQ(v.idle_memory_gb, 50);
  EXPECT_THAT(v.findings, Contains(HasSubstr("50 GB idle")));
  EXPECT_TRUE(v.eligible);  // over-bought is a finding, not a miss
  EXPECT_FALSE(
      JudgePool(t, {Ran(t, "a", 100, 1, 10, 0.6 * 80)}, 100).over_bought);
}

TEST(BakeOffVerdictTest, OffloadIsAMissWhateverItsSpeed) {
  const BakeOffTarget t = Target("l40s", 48, 1'000'000);
  BakeOffUpload run = Ran(t, "a", 1000, 0.1, 10, 47);
  run.run.offload = Offload::kCpu;
  const BakeOffPoolVerdict v = JudgePool(t, {run}, 1000);
  EXPECT_TRUE(v.offload_miss);
  EXPECT_FALSE(v.eligible);
  EXPECT_THAT(v.findings, Contains(HasSubstr("did not fit")));
}

TEST(BakeOffVerdictTest, MultiGpuCollectivesOnPcieAreCalledOut) {
  BakeOffTarget t = Target("l40s", 48, 1'000'000);
  t.gpu_count = 2;
  BakeOffUpload run = Ran(t, "a", 1000, 1, 10, 40);
  run.run.interconnect = Interconnect::kPcie;
  EXPECT_TRUE(JudgePool(t, {run}, 1000).collectives_on_pcie);
}

TEST(BakeOffVerdictTest, AnEvalShortOfItsCriteriaMakesAPoolIneligible) {
  BakeOffTarget t = Target("l40s", 48, 1'000'000);
  t.eval = EvalStatus{"key-l40s", "L40S", Precision::kFp8, false, {}, {}};
  const std::vector<BakeOffUpload> runs = {Ran(t, "a", 100, 1, 10, 40)};
  BakeOffPoolVerdict v = JudgePool(t, runs, 100);
  EXPECT_FALSE(v.eligible);
  EXPECT_THAT(v.findings, Contains(HasSubstr("eval missing")));
  EvalCheck check;
  check.criterion.name = "ml-exact-match";
  t.eval->checks.push_back(check);
  v = JudgePool(t, runs, 100);
  EXPECT_THAT(v.findings, Contains(HasSubstr("eval short")));
  t.eval->met = true;
  EXPECT_TRUE(JudgePool(t, runs, 100).eligible);
}

TEST(BakeOffVerdictTest, TheCheapestEligiblePoolWinsDecisivelyBeyondBands) {
  const BakeOffTarget l40s = Target("l40s", 48, 1'000'000);
  const BakeOffTarget a100 = Target("a100", 80, 2'000'000);
  const BakeOffTarget cheap = Target("cheap", 24, 100'000);
  BakeOffUpload miss = Ran(cheap, "c", 1000, 1, 10, 23);
  miss.run.offload = Offload::kCpu;
  const BakeOffVerdict verdict =
      JudgeBakeOff(PlanOf({a100, cheap, l40s}, 1000),
                   {Ran(l40s, "a", 1000, 1, 10, 40),
                    Ran(a100, "b", 1000, 0.8, 10, 30), miss});
  EXPECT_EQ(verdict.winner_pool, "l40s");
  EXPECT_TRUE(verdict.decisive) << verdict.summary;
  ASSERT_EQ(verdict.pools.size(), 3u);
  EXPECT_EQ(verdict.pools[1].pool_name, "a100");
  EXPECT_EQ(verdict.pools[2].pool_name, "cheap");  // ineligible last
}

TEST(BakeOffVerdictTest, WithinTheBandItIsNotDecisive) {
  const BakeOffTarget a = Target("a", 48, 1'000'000);
  const BakeOffTarget b = Target("b", 48, 1'000'000);
  const BakeOffVerdict verdict = JudgeBakeOff(
      PlanOf({a, b}, 1000),
      {Ran(a, "x", 1000, 1, 10, 40), Ran(b, "y", 1000, 1.02, 10, 40)});
  EXPECT_EQ(verdict.winner_pool, "a");
  EXPECT_FALSE(verdict.decisive);
  EXPECT_THAT(verdict.missing, Contains(HasSubstr("b is within")));
}

}  // namespace
}  // namespace placement::core
