// A configuration measured on a pool must not keep every later job of its
// recipe class off a cheaper configuration of that pool that was never run:
// where measuring it is worth more than it may cost, the job measures it,
// and the pool still ranks at what its measured configuration is worth.

#include "core/plan/configuration_exploration.h"

#include <string>
#include <vector>

#include "core/plan/bake_off.h"
#include "core/plan/planner.h"
#include "core/plan/ranking.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/core/test_catalog.h"

namespace placement::core {
namespace {

using ::testing::Contains;
using ::testing::HasSubstr;
using testing::TestCatalog;
using testing::TrainingPool;

constexpr char kA100[] = "A100-SXM4-80GB";
constexpr int64_t kSteps = 1'000;
constexpr int64_t kRate = 2'000'000;  // TrainingPool's, per GPU-hour

// The replay's 1B full fine-tune (bf16 with fp32 master weights and AdamW,
// 4096 x 8) over two GPUs with DDP, checkpointing left open.
Recipe OpenCheckpointing1bFull() {
  Recipe r;
  r.model = "Llama-3.2-1B";
  r.method = FineTuneMethod::kFull;
  r.sequence_length = 4096;
  r.micro_batch_size = 8;
  r.precision = Precision::kBf16;
  r.fp32_master_weights = true;
  r.optimizer = Optimizer::kAdamW;
  r.gpu_count = 2;
  r.parallelism = Parallelism::kDdp;
  return r;
}

PlanRequest Request(const Recipe& recipe, int64_t total_steps) {
  PlanRequest request;
  request.recipe = recipe;
  request.total_steps = total_steps;
  return request;
}

// The plan's one candidate for `recipe` on one A100-80GB pool.
Candidate OnlyCandidate(const Recipe& recipe, const EvidenceSource& evidence,
                        int64_t total_steps) {
  auto plan = Plan(Request(recipe, total_steps),
                   {TrainingPool("a100", kA100, Fabric::kNvlink)},
                   TestCatalog(), evidence);
  EXPECT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->candidates.size(), 1u);
  return plan->candidates.empty() ? Candidate() : plan->candidates[0];
}

// Adds `runs` succeeded runs of `kSteps` steps of `recipe` on one A100,
// each costing `cost_micros` at the pool's rate.
void AddMeasured(const Recipe& recipe, int runs, double cost_micros,
                 InMemoryEvidence* evidence) {
  const double gpu_hours = cost_micros / kRate;
  for (int i = 0; i < runs; ++i) {
    MeasuredRun run;
    run.sku_id = kA100;
    run.gpu_count = 2;
    run.started = absl::FromUnixSeconds(1'700'000'000 + i * 86'400);
    run.ended = run.started + absl::Seconds(gpu_hours * 3600 / 2);
    run.steps_attempted = kSteps;
    run.steps_succeeded = kSteps;
    run.step_time_p50_s = gpu_hours * 3600 / 2 / kSteps;
    run.step_time_p95_s = run.step_time_p50_s * 1.1;
    run.peak_memory_gb = 30;
    run.offload = Offload::kNone;
    run.outcome = RunOutcome::kSucceeded;
    evidence->AddRun(recipe, run);
  }
}

InMemoryEvidence Measured(const Recipe& recipe, int runs, double cost_micros) {
  InMemoryEvidence evidence;
  AddMeasured(recipe, runs, cost_micros, &evidence);
  return evidence;
}

// The 1B full fine-tune over two A100-80GB with checkpointing on was
// measured (a deadline's job chose it, say). Without checkpointing it is
// estimated from that run (TRANSFERRED) at about 0.75x the cost, but at its
// pessimistic edge a little above the measured cost: read as the ranking
// reads estimates, it never beats the measured configuration, and so would
// never be run. For a job of the class's length, measuring it is worth what
// it may cost, and the job runs it; for a job a hundred times the class's
// history (a class asked for 1% of it so far), it is not.
TEST(ConfigurationExplorationTest,
     AJobMeasuresTheCheaperConfigurationOfItsPool) {
  const Recipe open = OpenCheckpointing1bFull();
  Recipe on = open;
  on.activation_checkpointing = ActivationCheckpointing::kOn;
  Recipe off = open;
  off.activation_checkpointing = ActivationCheckpointing::kOff;
  const Candidate on_estimate = OnlyCandidate(on, InMemoryEvidence(), kSteps);
  const InMemoryEvidence on_measured =
      Measured(on_estimate.recipe, 1,
               static_cast<double>(on_estimate.expected_cost_micros));

  // The lock-in: the configuration without checkpointing, alone, is cheaper
  // on its estimate and dearer at its pessimistic edge.
  const Candidate measured = OnlyCandidate(on, on_measured, kSteps);
  const Candidate transferred = OnlyCandidate(off, on_measured, kSteps);
  ASSERT_EQ(measured.basis, EvidenceBasis::kMeasured);
  ASSERT_EQ(transferred.basis, EvidenceBasis::kTransferred);
  ASSERT_LT(transferred.expected_cost_micros, measured.expected_cost_micros);
  ASSERT_GT(RankingValue(transferred, Objective::kLowestCost),
            static_cast<double>(measured.expected_cost_micros));

  const Candidate explored = OnlyCandidate(open, on_measured, kSteps);
  EXPECT_EQ(explored.recipe.activation_checkpointing,
            ActivationCheckpointing::kOff);
  EXPECT_EQ(explored.basis, EvidenceBasis::kTransferred);
  ASSERT_TRUE(explored.exploration.has_value());
  const ConfigurationExploration& x = *explored.exploration;
  EXPECT_EQ(x.measured_recipe_key, measured.recipe_key);
  EXPECT_DOUBLE_EQ(x.measured_value_micros,
                   static_cast<double>(measured.expected_cost_micros));
  EXPECT_EQ(x.demand_steps, kSteps);
  EXPECT_GT(x.premium_micros, 0);
  EXPECT_GT(x.expected_saving_micros, kMeasurementHurdle * x.premium_micros);
  EXPECT_GT(x.win_probability, 0.5);
  EXPECT_THAT(explored.reasons,
              Contains(HasSubstr("the job measures this configuration, never "
                                 "run on A100-SXM4-80GB, in place of the "
                                 "pool's MEASURED")));

  const Candidate long_job = OnlyCandidate(open, on_measured, 100 * kSteps);
  EXPECT_EQ(long_job.recipe.activation_checkpointing,
            ActivationCheckpointing::kOn);
  EXPECT_FALSE(long_job.exploration.has_value());

  // Once both are measured, evidence decides, at no premium: without
  // checkpointing at 0.9x the measured cost with it, it is chosen on its
  // own figure.
  InMemoryEvidence both = on_measured;
  AddMeasured(explored.recipe, 1,
              0.9 * static_cast<double>(measured.expected_cost_micros), &both);
  const Candidate settled = OnlyCandidate(open, both, kSteps);
  EXPECT_EQ(settled.recipe.activation_checkpointing,
            ActivationCheckpointing::kOff);
  EXPECT_EQ(settled.basis, EvidenceBasis::kMeasured);
  EXPECT_FALSE(settled.exploration.has_value());
}

// ExploreConfiguration alone: a measured configuration at $10 over two
// GPUs and one estimated at $8 (band $6-$10.80, so $10.80 at its
// pessimistic edge), BORDERLINE, its risk priced against the measured one.
// At a 30% risk, over two GPUs or one, it is worth measuring over ten jobs
// still expected; at 60% it is not measured whatever it might save, nor
// over four GPUs, nor over no job still expected.
TEST(ConfigurationExplorationTest,
     NeitherLikelierToFailThanToRunNorOverMoreGpusNorForNoDemand) {
  int explored_gpus = 2;
  auto outcome = [&](EvidenceBasis basis, int64_t cost, Band band, Fit fit,
                     double oom) {
    ConfigurationOutcome o;
    const bool measured = basis == EvidenceBasis::kMeasured;
    o.recipe_key = measured ? "measured" : "estimated";
    o.recipe.gpu_count = measured ? 2 : explored_gpus;
    Candidate& c = o.candidate;
    c.basis = basis;
    c.fit = fit;
    c.oom_probability = oom;
    c.expected_cost_micros = cost;
    c.step_time_s = 1.0;
    c.step_time_s_band = band;
    return o;
  };
  auto outcomes = [&](double oom) {
    return std::vector<ConfigurationOutcome>{
        outcome(EvidenceBasis::kMeasured, 10'000'000, {1.0, 1.0}, Fit::kFits,
                0),
        outcome(EvidenceBasis::kTransferred, 8'000'000, {0.75, 1.35},
                Fit::kBorderline, oom)};
  };
  const auto explored =
      ExploreConfiguration(outcomes(0.3), 0, std::nullopt, kSteps, 10 * kSteps);
  ASSERT_TRUE(explored.has_value());
  EXPECT_EQ(explored->index, 1u);
  // 0.7 x 10.80 + 0.3 x 10 (and 0.09 x nothing lost per attempt) - 10.
  EXPECT_NEAR(explored->exploration.premium_micros, 560'000, 1);
  EXPECT_EQ(explored->exploration.measured_recipe_key, "measured");
  EXPECT_FALSE(
      ExploreConfiguration(outcomes(0.6), 0, std::nullopt, kSteps, 10 * kSteps)
          .has_value());
  EXPECT_FALSE(ExploreConfiguration(outcomes(0.3), 0, std::nullopt, kSteps, 0)
                   .has_value());
  explored_gpus = 1;
  EXPECT_TRUE(
      ExploreConfiguration(outcomes(0.3), 0, std::nullopt, kSteps, 10 * kSteps)
          .has_value());
  explored_gpus = 4;
  EXPECT_FALSE(
      ExploreConfiguration(outcomes(0.3), 0, std::nullopt, kSteps, 10 * kSteps)
          .has_value());
}

Candidate Priced(const std::string& pool, EvidenceBasis basis, int64_t cost) {
  Candidate c;
  c.pool_name = pool;
  c.basis = basis;
  c.fit = Fit::kFits;
  c.fits = true;
  c.expected_cost_micros = cost;
  c.expected_wall_time = absl::Hours(1);
  c.step_time_s = 1.0;
  c.step_time_s_band =
      basis == EvidenceBasis::kMeasured ? Band{1.0, 1.1} : Band{0.75, 1.35};
  return c;
}

// A pool whose job measures a configuration ranks at its measured one's
// value ($15), not at the explored estimate's pessimistic edge ($16.875):
// above a measured $16 pool, below a measured $14 one.
TEST(ConfigurationExplorationTest, APoolThatMeasuresRanksAtItsMeasuredValue) {
  Candidate exploring =
      Priced("exploring", EvidenceBasis::kEstimated, 12'500'000);
  exploring.exploration = ConfigurationExploration{};
  exploring.exploration->measured_value_micros = 15'000'000;
  std::vector<Candidate> c = {
      Priced("measured-16", EvidenceBasis::kMeasured, 16'000'000), exploring,
      Priced("measured-14", EvidenceBasis::kMeasured, 14'000'000)};
  RankCandidates(Objective::kLowestCost, &c);
  std::vector<std::string> order;
  for (const Candidate& cand : c) order.push_back(cand.pool_name);
  EXPECT_THAT(
      order, ::testing::ElementsAre("measured-14", "exploring", "measured-16"));
  // It says why in its own reasons, not in the ranking's.
  EXPECT_THAT(c[1].reasons, ::testing::IsEmpty());
}

}  // namespace
}  // namespace placement::core
