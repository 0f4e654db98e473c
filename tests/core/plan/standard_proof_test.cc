#include "core/plan/standard_proof.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace placement::core {
namespace {

using ::testing::ElementsAre;
using ::testing::Field;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

constexpr absl::Time kStart = absl::FromUnixSeconds(1'700'000'000);

BakeOffTarget Target(const std::string& pool, bool proposed,
                     int64_t rate_micros = 1'000'000) {
  BakeOffTarget t;
  t.pool_name = pool;
  t.sku_id = pool + "-sku";
  t.gpu_count = 1;
  t.recipe_key = "key-" + pool;
  t.proposed = proposed;
  t.card_memory_gb = 48;
  t.internal_rate_micros_per_gpu_hour = rate_micros;
  return t;
}

BakeOffUpload Ran(const BakeOffTarget& target, double step_s,
                  RunOutcome outcome = RunOutcome::kSucceeded) {
  BakeOffUpload u;
  MeasuredRun& run = u.run;
  run.run_id = target.pool_name + "-run";
  run.pool_name = target.pool_name;
  run.recipe_key = target.recipe_key;
  run.gpu_count = 1;
  run.started = kStart;
  run.ended = kStart + absl::Seconds(60 + 500 * step_s);
  run.steps_attempted = 500;
  run.steps_succeeded = outcome == RunOutcome::kSucceeded ? 500 : 0;
  run.step_time_mean_s = step_s;
  run.step_time_p50_s = step_s;
  run.step_time_p95_s = step_s * 1.05;
  run.peak_memory_gb = 40;
  run.offload = Offload::kNone;
  run.outcome = outcome;
  return u;
}

RecordedPlan PlanOf(std::vector<BakeOffTarget> targets) {
  RecordedPlan plan;
  plan.plan_id = "plan-1";
  plan.total_steps = 5000;
  plan.targets = std::move(targets);
  return plan;
}

auto Types(const std::vector<PreconditionViolation>& v) {
  std::vector<std::string> types;
  for (const PreconditionViolation& p : v) types.push_back(p.type);
  return types;
}

// A plan that proposed no bake-off used to be "complete, 0 of 0", so any
// candidate, never measured, became a standard proven by its bake-off.
TEST(StandardProofTest, NoMeasuredRunOnThePoolIsNoProof) {
  BakeOffTarget first = Target("a100", false);
  first.first_choice = true;
  const BakeOffTarget last_ranked = Target("l4", false);
  const RecordedPlan plan = PlanOf({first, last_ranked});
  EXPECT_THAT(Types(MissingProof(plan, {Ran(first, 1)}, "l4")),
              ElementsAre("MEASURED_RUNS_MISSING"));
  EXPECT_THAT(MissingProof(plan, {Ran(first, 1)}, "a100"), IsEmpty());
}

TEST(StandardProofTest, APoolTheVerdictDoesNotKnowIsNotACandidate) {
  const RecordedPlan plan = PlanOf({Target("a100", true)});
  EXPECT_THAT(Types(MissingProof(plan, {}, "h100")),
              ElementsAre("POOL_NOT_A_CANDIDATE"));
}

TEST(StandardProofTest, AnIncompleteBakeOffAndAPoolBeatenBeyondItsBand) {
  const BakeOffTarget fast = Target("fast", true);
  const BakeOffTarget slow = Target("slow", true);
  const RecordedPlan plan = PlanOf({fast, slow});
  EXPECT_THAT(Types(MissingProof(plan, {Ran(slow, 1)}, "slow")),
              ElementsAre("BAKE_OFF_INCOMPLETE"));
  const std::vector<BakeOffUpload> both = {Ran(fast, 0.5), Ran(slow, 1)};
  const std::vector<PreconditionViolation> missing =
      MissingProof(plan, both, "slow");
  EXPECT_THAT(Types(missing), ElementsAre("POOL_NOT_THE_WINNER"));
  EXPECT_THAT(missing[0].description,
              HasSubstr("fast wins beyond slow's band"));
  EXPECT_THAT(MissingProof(plan, both, "fast"), IsEmpty());
  // Within the winner's band it may be standardized.
  const std::vector<PreconditionViolation> within =
      MissingProof(plan, {Ran(fast, 1), Ran(slow, 1.01)}, "slow");
  EXPECT_THAT(Types(within), IsEmpty())
      << (within.empty() ? "" : within[0].description);
}

TEST(StandardProofTest, APoolThatFailedItsRunsIsNotProven) {
  const BakeOffTarget t = Target("l40s", true);
  EXPECT_THAT(
      Types(MissingProof(PlanOf({t}),
                         {Ran(t, 1, RunOutcome::kCollectiveTimeout)}, "l40s")),
      ElementsAre("MEASURED_RUNS_MISSING"));
  BakeOffUpload offloaded = Ran(t, 1);
  offloaded.run.offload = Offload::kCpu;
  EXPECT_THAT(Types(MissingProof(PlanOf({t}), {offloaded}, "l40s")),
              ElementsAre("POOL_FAILED_BAKE_OFF"));
}

// Eval criteria apply to WriteStandard as they do to PlacePlan: an eval
// that fails a criterion of the pool proves nothing.
TEST(StandardProofTest, AnEvalShortOfACriterionIsMissing) {
  BakeOffTarget t = Target("l40s", true);
  EvalCheck check;
  check.criterion.name = "ml-exact-match";
  check.criterion.metric = "exact_match";
  check.eval = EvalEvidence{};
  check.eval->run_id = "eval-run";
  check.eval->score = 0.41;
  t.eval = EvalStatus{"key-l40s", "L40S", Precision::kFp8, false, {}, {check}};
  const std::vector<PreconditionViolation> missing =
      MissingProof(PlanOf({t}), {Ran(t, 1)}, "l40s");
  ASSERT_THAT(Types(missing), ElementsAre("EVAL_MISSING"));
  EXPECT_THAT(missing[0].description,
              HasSubstr("criterion ml-exact-match is not passed (best "
                        "exact_match 0.41, run eval-run)"));
}

}  // namespace
}  // namespace placement::core
