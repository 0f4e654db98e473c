#include "core/plan/bake_off.h"

#include <string>
#include <vector>

#include "core/plan/measurement_value.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace placement::core {
namespace {

using ::testing::HasSubstr;

// A ranked candidate on `sku` running `key`: one GPU at 1.00 an hour, a job
// of `steps_gpu_hours` plus `startup_gpu_hours`, the step time known within
// `band` (factors on 1 s).
Candidate Make(const std::string& pool, const std::string& sku,
               EvidenceBasis basis, double steps_gpu_hours,
               double startup_gpu_hours = 0.05, Band band = {0.75, 1.35},
               Fit fit = Fit::kFits, const std::string& key = "key-1") {
  Candidate c;
  c.pool_name = pool;
  c.sku_id = sku;
  c.gpu_count = 1;
  c.fit = fit;
  c.fits = true;
  c.basis = basis;
  c.recipe_key = key;
  c.recipe.model = "Llama-3.1-8B";
  c.step_time_s = 1;
  c.step_time_s_band = basis == EvidenceBasis::kMeasured ? Band{1, 1.1} : band;
  c.step_gpu_hours = steps_gpu_hours / 1000;
  c.startup_gpu_hours = startup_gpu_hours;
  c.expected_gpu_hours = steps_gpu_hours + startup_gpu_hours;
  c.expected_cost_micros =
      static_cast<int64_t>(c.expected_gpu_hours * 1'000'000);
  return c;
}

PlanRequest Request() {
  PlanRequest request;
  request.total_steps = 1000;
  return request;
}

TEST(ProposeBakeOffTest, NoneWhenEveryOtherCandidateIsMeasured) {
  std::vector<Candidate> candidates = {
      Make("a", "L40S-PCIE-48GB", EvidenceBasis::kEstimated, 10),
      Make("b", "A100-SXM4-80GB", EvidenceBasis::kMeasured, 10.5),
      Make("c", "H100-SXM5-80GB", EvidenceBasis::kMeasured, 11)};
  // The first is unmeasured, but the job itself measures it.
  EXPECT_FALSE(ProposeBakeOff(Request(), 1'000'000, &candidates).has_value());
  for (const Candidate& c : candidates) EXPECT_FALSE(c.measure_first);
}

// A close unmeasured rival whose run costs more than it can save over one
// job is not measured; the same rival facing twenty jobs' demand is.
TEST(ProposeBakeOffTest, ProposedOnlyWhenTheExpectedSavingPaysForTheRun) {
  auto ranked = [] {
    return std::vector<Candidate>{
        Make("a", "A100-SXM4-80GB", EvidenceBasis::kMeasured, 10),
        // 5% dearer by its estimate; a run of it costs half an hour of
        // start-up besides its steps.
        Make("b", "L40S-PCIE-48GB", EvidenceBasis::kEstimated, 10.5, 0.5)};
  };
  std::vector<Candidate> one_job = ranked();
  EXPECT_FALSE(ProposeBakeOff(Request(), 1000, &one_job).has_value());
  EXPECT_FALSE(one_job[1].measure_first);
  EXPECT_THAT(one_job[1].reasons.back(), HasSubstr("not worth measuring"));

  std::vector<Candidate> twenty_jobs = ranked();
  auto bake_off = ProposeBakeOff(Request(), 20'000, &twenty_jobs);
  ASSERT_TRUE(bake_off.has_value());
  ASSERT_EQ(bake_off->runs.size(), 1u);
  const BakeOffRun& run = bake_off->runs[0];
  EXPECT_EQ(run.pool_name, "b");
  EXPECT_EQ(bake_off->expected_demand_steps, 20'000);
  EXPECT_GT(run.expected_saving_micros, run.cost_micros);
  // A short run: its steps and its start-up, not the job.
  EXPECT_EQ(run.steps, kMinMeasurementSteps);
  EXPECT_NEAR(run.cost_micros, (0.5 + 10.5 * 50 / 1000) * 1e6, 1e3);
  EXPECT_GT(run.win_probability, 0.2);
  EXPECT_LT(run.win_probability, 0.5);
  EXPECT_TRUE(twenty_jobs[1].measure_first);
  EXPECT_THAT(run.reason, HasSubstr("expected to save"));
  EXPECT_THAT(bake_off->reason, HasSubstr("expected to save"));
}

// A BORDERLINE rival pays off only if it fits: at a 90% chance of running
// out of memory the run mostly shows that, for a start-up and a step, and
// the saving that paid for it at five jobs' demand no longer does.
TEST(ProposeBakeOffTest, ABorderlineRivalIsWorthOnlyItsChanceOfFitting) {
  auto ranked = [](double oom_probability) {
    std::vector<Candidate> c = {
        Make("a", "A100-SXM4-80GB", EvidenceBasis::kMeasured, 10),
        Make("b", "L40S-PCIE-48GB", EvidenceBasis::kEstimated, 10.5, 0.5,
             {0.75, 1.35}, Fit::kBorderline)};
    c[1].oom_probability = oom_probability;
    return c;
  };
  std::vector<Candidate> likely_fits = ranked(0.1);
  auto bake_off = ProposeBakeOff(Request(), 5'000, &likely_fits);
  ASSERT_TRUE(bake_off.has_value());
  ASSERT_EQ(bake_off->runs.size(), 1u);
  const BakeOffRun& run = bake_off->runs[0];
  EXPECT_TRUE(run.borderline);
  // 0.9 x (50 steps and a start-up) + 0.1 x (a step and a start-up).
  EXPECT_NEAR(
      run.cost_micros,
      (0.9 * (0.5 + 10.5 * 50 / 1000) + 0.1 * (0.5 + 10.5 / 1000)) * 1e6, 1e3);

  std::vector<Candidate> likely_not = ranked(0.9);
  EXPECT_FALSE(ProposeBakeOff(Request(), 5'000, &likely_not).has_value());
  EXPECT_THAT(likely_not[1].reasons.back(), HasSubstr("not worth measuring"));
}

// The guide's rule, in money: a candidate that loses even at the optimistic
// edge of its band is never measured, whatever the demand.
TEST(ProposeBakeOffTest, NeverMeasuresACandidateThatCannotWinAtItsBestEdge) {
  std::vector<Candidate> candidates = {
      Make("a", "A100-SXM4-80GB", EvidenceBasis::kMeasured, 10),
      // 0.75 x 14 = 10.5: dearer than 10 even at its lower edge.
      Make("b", "L40S-PCIE-48GB", EvidenceBasis::kEstimated, 14)};
  EXPECT_FALSE(ProposeBakeOff(Request(), 100'000'000, &candidates).has_value());
  EXPECT_THAT(candidates[1].reasons.back(), HasSubstr("optimistic edge"));
}

TEST(ProposeBakeOffTest, AtMostTwoRunsTheMostValuableFirst) {
  std::vector<Candidate> candidates = {
      Make("a", "A100-SXM4-80GB", EvidenceBasis::kMeasured, 10),
      Make("b", "L40S-PCIE-48GB", EvidenceBasis::kEstimated, 11),
      Make("c", "H100-SXM5-80GB", EvidenceBasis::kEstimated, 10.2),
      Make("d", "L4-PCIE-24GB", EvidenceBasis::kTransferred, 10.8)};
  auto bake_off = ProposeBakeOff(Request(), 1'000'000, &candidates);
  ASSERT_TRUE(bake_off.has_value());
  ASSERT_EQ(bake_off->runs.size(), 2u);
  EXPECT_EQ(bake_off->runs[0].pool_name, "c");  // the likeliest to win
  EXPECT_GE(bake_off->runs[0].expected_saving_micros,
            bake_off->runs[1].expected_saving_micros);
  EXPECT_EQ(bake_off->recipe_key, "key-1");
}

TEST(ProposeBakeOffTest, ATwinPoolOfAProposedSkuAddsNoRun) {
  std::vector<Candidate> candidates = {
      Make("a", "A100-SXM4-80GB", EvidenceBasis::kMeasured, 10),
      Make("b", "L40S-PCIE-48GB", EvidenceBasis::kEstimated, 10.2),
      Make("b-twin", "L40S-PCIE-48GB", EvidenceBasis::kEstimated, 10.2)};
  auto bake_off = ProposeBakeOff(Request(), 1'000'000, &candidates);
  ASSERT_TRUE(bake_off.has_value());
  ASSERT_EQ(bake_off->runs.size(), 1u);
  EXPECT_EQ(bake_off->runs[0].pool_name, "b");
}

// A BORDERLINE first choice is measured by the job itself, as any first
// choice: a short run of it would lose what the job loses should it run
// out of memory at its first steps (a start-up and a step, priced into its
// rank), and cost a start-up more when it fits. The runners-up are valued
// against it as against any first choice.
TEST(ProposeBakeOffTest, ABorderlineFirstChoiceIsMeasuredByTheJobItself) {
  std::vector<Candidate> candidates = {
      Make("a", "L4-PCIE-24GB", EvidenceBasis::kEstimated, 10, 0.05,
           {0.75, 1.35}, Fit::kBorderline, "key-2"),
      Make("b", "L40S-PCIE-48GB", EvidenceBasis::kMeasured, 20, 0.05, {1, 1.1},
           Fit::kBorderline)};
  EXPECT_FALSE(ProposeBakeOff(Request(), 1000, &candidates).has_value());
  EXPECT_FALSE(candidates[0].measure_first);

  candidates = {Make("a", "L4-PCIE-24GB", EvidenceBasis::kEstimated, 10, 0.05,
                     {0.75, 1.35}, Fit::kBorderline, "key-2"),
                Make("b", "L40S-PCIE-48GB", EvidenceBasis::kEstimated, 10.2)};
  auto bake_off = ProposeBakeOff(Request(), 1'000'000, &candidates);
  ASSERT_TRUE(bake_off.has_value());
  ASSERT_EQ(bake_off->runs.size(), 1u);
  EXPECT_EQ(bake_off->runs[0].pool_name, "b");
  EXPECT_FALSE(bake_off->runs[0].borderline);
  EXPECT_FALSE(candidates[0].measure_first);
  EXPECT_TRUE(candidates[1].measure_first);
}

// A first choice whose job measures another configuration of its pool
// ranks at the configuration measured there (10.05), not at the estimate it
// explores (6.05), and a runner-up is valued against the same figure: one
// estimated at 8.15 cannot beat 6.05 even at its optimistic edge, yet may
// well beat what the pool is known to cost.
TEST(ProposeBakeOffTest, RunnersUpOfAnExploringFirstChoiceFaceItsMeasuredCost) {
  auto ranked = [](bool exploring) {
    std::vector<Candidate> c = {
        Make("a", "A100-SXM4-80GB", EvidenceBasis::kEstimated, 6, 0.05,
             {0.75, 1.35}, Fit::kFits, "key-2"),
        Make("b", "L40S-PCIE-48GB", EvidenceBasis::kEstimated, 8.1)};
    if (exploring) {
      c[0].exploration = ConfigurationExploration{};
      c[0].exploration->measured_recipe_key = "key-1";
      c[0].exploration->measured_value_micros = 10.05e6;
    }
    return c;
  };
  std::vector<Candidate> estimate = ranked(/*exploring=*/false);
  EXPECT_FALSE(ProposeBakeOff(Request(), 20'000, &estimate).has_value());
  EXPECT_THAT(estimate[1].reasons.back(),
              HasSubstr("optimistic edge it would cost 6.11 against 6.05"));

  std::vector<Candidate> exploring = ranked(/*exploring=*/true);
  auto bake_off = ProposeBakeOff(Request(), 20'000, &exploring);
  ASSERT_TRUE(bake_off.has_value());
  ASSERT_EQ(bake_off->runs.size(), 1u);
  EXPECT_EQ(bake_off->runs[0].pool_name, "b");
  EXPECT_GT(bake_off->runs[0].win_probability, 0.5);
  EXPECT_THAT(bake_off->runs[0].reason, HasSubstr("against 10.05)"));
}

TEST(MeasurementValueTest, ShortfallAndProbabilityOfALognormal) {
  // Without spread the shortfall is the plain difference.
  EXPECT_DOUBLE_EQ(ExpectedShortfall(10, 8, 0), 2);
  EXPECT_DOUBLE_EQ(ExpectedShortfall(10, 12, 0), 0);
  // At the money: P = 1/2 and the shortfall grows with the spread.
  EXPECT_NEAR(ProbabilityBelow(10, 10, 0.2), 0.5, 1e-12);
  EXPECT_LT(ExpectedShortfall(10, 10, 0.1), ExpectedShortfall(10, 10, 0.3));
  // A p10-p90 band of x0.75-x1.35 is a sigma of ln(1.8) / 2.563.
  EXPECT_NEAR(LognormalSigmaOfBand({0.75, 1.35}), 0.2293, 1e-4);
  // Far out of the money the value vanishes.
  EXPECT_LT(ExpectedShortfall(10, 30, 0.2), 1e-6);
}

TEST(MeasurementValueTest, CloserRivalsNeedLongerRuns) {
  EXPECT_EQ(MeasurementSteps(10, 20, kAssumedStepTimeCv), kMinMeasurementSteps);
  EXPECT_GT(MeasurementSteps(10, 10.1, 0.3), kMinMeasurementSteps);
  EXPECT_LE(MeasurementSteps(10, 10.0001, 5), kMaxMeasurementSteps);
}

}  // namespace
}  // namespace placement::core
