// What the planner decides from evidence: a measured layout projected to
// the job's steps (start-up once, not per step), failures priced as rates
// of the pool instead of bans, and kept steps counted.

#include <cstdint>
#include <string>

#include "core/plan/job_cost.h"
#include "core/plan/planner.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/core/test_catalog.h"

namespace placement::core {
namespace {

using testing::TestCatalog;
using testing::TrainingPool;

constexpr char kL40s[] = "L40S-PCIE-48GB";

Recipe Lora8b() {
  Recipe r;
  r.model = "Llama-3.1-8B";
  r.method = FineTuneMethod::kLora;
  r.lora_rank = 16;
  r.target_modules = {"all-linear"};
  r.sequence_length = 2048;
  r.micro_batch_size = 2;
  r.gpu_count = 1;
  r.activation_checkpointing = ActivationCheckpointing::kOn;
  r.attention = AttentionImplementation::kFlash;
  return NormalizeRecipe(r);
}

// A run of `steps` steps at `step_s` a step after `startup_s` of start-up,
// as an agent reports it.
MeasuredRun TimedRun(const std::string& pool, int64_t steps, double step_s,
                     double startup_s,
                     RunOutcome outcome = RunOutcome::kSucceeded,
                     int64_t steps_kept = -1) {
  MeasuredRun run;
  run.pool_name = pool;
  run.sku_id = kL40s;
  run.gpu_count = 1;
  run.started = absl::FromUnixSeconds(1'700'000'000);
  run.ended = run.started + absl::Seconds(startup_s + steps * step_s);
  run.steps_attempted = steps;
  run.steps_succeeded = steps_kept >= 0 ? steps_kept : steps;
  run.step_time_mean_s = step_s;
  run.step_time_p50_s = step_s;
  run.step_time_p95_s = step_s * 1.05;
  run.peak_memory_gb = 24;
  run.outcome = outcome;
  return run;
}

PlanRequest Request(const Recipe& recipe, int64_t steps = 10'000) {
  PlanRequest request;
  request.recipe = recipe;
  request.total_steps = steps;
  return request;
}

const Candidate* Find(const PlanResult& plan, const std::string& pool) {
  for (const Candidate& c : plan.candidates) {
    if (c.pool_name == pool) return &c;
  }
  return nullptr;
}

// The trap: a 300-step measurement with 3 minutes of start-up used
// to look 1.5x dearer per step than the same layout's 10,000-step job.
TEST(PlannerDecisionsTest, AShortAndALongRunProjectTheSameCostPerStep) {
  const std::vector<Pool> pools = {
      TrainingPool("l40s", kL40s, Fabric::kPcie, 8, 1, 1'000'000)};
  InMemoryEvidence short_run;
  short_run.AddRun(Lora8b(), TimedRun("l40s", 300, 1.2, 180));
  InMemoryEvidence long_run;
  long_run.AddRun(Lora8b(), TimedRun("l40s", 10'000, 1.2, 180));
  auto from_short = Plan(Request(Lora8b()), pools, TestCatalog(), short_run);
  auto from_long = Plan(Request(Lora8b()), pools, TestCatalog(), long_run);
  ASSERT_TRUE(from_short.ok()) << from_short.status();
  ASSERT_TRUE(from_long.ok()) << from_long.status();
  const Candidate& s = from_short->candidates.at(0);
  const Candidate& l = from_long->candidates.at(0);
  EXPECT_EQ(s.basis, EvidenceBasis::kMeasured);
  EXPECT_NEAR(s.step_gpu_hours, 1.2 / 3600, 1e-12);
  EXPECT_NEAR(l.step_gpu_hours, 1.2 / 3600, 1e-12);
  EXPECT_TRUE(s.startup_measured);
  EXPECT_NEAR(s.startup_gpu_hours, 180.0 / 3600, 1e-9);
  // One start-up and 10,000 steps, from either run (failure priors equal).
  EXPECT_NEAR(static_cast<double>(s.expected_cost_micros) /
                  static_cast<double>(l.expected_cost_micros),
              1.0, 0.01);
  EXPECT_NEAR(s.expected_gpu_hours - s.rework_gpu_hours,
              (180 + 10'000 * 1.2) / 3600, 1e-6);
}

TEST(PlannerDecisionsTest, OnePreemptedRunDoesNotBanAPool) {
  const std::vector<Pool> pools = {
      TrainingPool("l40s", kL40s, Fabric::kPcie, 8, 1, 1'000'000)};
  InMemoryEvidence evidence;
  // Preempted before its first checkpoint: nothing kept.
  evidence.AddRun(Lora8b(),
                  TimedRun("l40s", 200, 1.2, 180, RunOutcome::kPreempted, 0));
  auto plan = Plan(Request(Lora8b()), pools, TestCatalog(), evidence);
  ASSERT_TRUE(plan.ok()) << plan.status();
  ASSERT_TRUE(plan->rejections.empty());
  const Candidate* l40s = Find(*plan, "l40s");
  ASSERT_NE(l40s, nullptr);
  EXPECT_EQ(l40s->failure_rate.failures, 1);
  EXPECT_GT(l40s->failure_rate.per_hour,
            kFailurePriorShape / kFailurePriorHours);
  EXPECT_GT(l40s->rework_gpu_hours, 0);
  // Its busy steps still measure the step time.
  EXPECT_NEAR(l40s->step_gpu_hours, 1.2 / 3600, 1e-12);
}

// Hardware errors are the pool's, whatever recipe met them: a recipe never
// run on either twin pool ranks the pool that fails by the hour second.
TEST(PlannerDecisionsTest, APoolWithManyHardwareErrorsRanksAfterAHealthyTwin) {
  const std::vector<Pool> pools = {
      TrainingPool("l40s-flaky", kL40s, Fabric::kPcie, 8, 1, 1'000'000),
      TrainingPool("l40s-steady", kL40s, Fabric::kPcie, 8, 1, 1'000'000)};
  Recipe other = Lora8b();
  other.sequence_length = 4096;
  other.lora_rank = 64;
  InMemoryEvidence evidence;
  for (int i = 0; i < 10; ++i) {
    evidence.AddRun(other, TimedRun("l40s-flaky", 3000, 1.2, 180,
                                    RunOutcome::kHardwareError, 1500));
    evidence.AddRun(other, TimedRun("l40s-steady", 3000, 1.2, 180));
  }
  const Recipe asked = Lora8b();
  ASSERT_NE(RecipeKey(asked), RecipeKey(other));
  auto plan = Plan(Request(asked), pools, TestCatalog(), evidence);
  ASSERT_TRUE(plan.ok()) << plan.status();
  ASSERT_EQ(plan->candidates.size(), 2u);
  EXPECT_EQ(plan->candidates[0].pool_name, "l40s-steady");
  const Candidate& flaky = plan->candidates[1];
  EXPECT_EQ(flaky.pool_name, "l40s-flaky");
  EXPECT_EQ(flaky.failure_rate.failures, 10);
  EXPECT_TRUE(flaky.failure_rate.lost_hours_measured);
  EXPECT_GT(flaky.rework_gpu_hours, 0.05 * flaky.expected_gpu_hours);
  EXPECT_GT(flaky.expected_cost_micros,
            plan->candidates[0].expected_cost_micros);
}

// A failed run's checkpoint-kept steps are successful steps: they divide
// its GPU-hours like any other.
TEST(PlannerDecisionsTest, CheckpointedStepsOfAFailedRunCount) {
  InMemoryEvidence evidence;
  evidence.AddRun(Lora8b(), TimedRun("l40s", 1000, 3.6, 0,
                                     RunOutcome::kHardwareError, 900));
  const std::optional<EvidenceStats> stats =
      evidence.Find(RecipeKey(Lora8b()), kL40s);
  ASSERT_TRUE(stats.has_value());
  EXPECT_EQ(stats->steps_succeeded, 900);
  EXPECT_EQ(stats->successful_runs, 0);
  // 1 GPU-hour over 900 kept steps.
  ASSERT_TRUE(stats->gpu_hours_per_successful_step.has_value());
  EXPECT_NEAR(*stats->gpu_hours_per_successful_step, 1.0 / 900, 1e-12);
}

// A card whose LoRA recipes run faster than its prior while its full
// fine-tunes do not: an unmeasured LoRA recipe's step time carries the
// method's term, and its reason says so (a planner that moved the figure
// without saying why would leave a user comparing two recipes of one model
// with no explanation).
TEST(PlannerDecisionsTest, TheFleetReasonNamesTheMethodsTermOnTheCard) {
  std::vector<FleetCell> cells;
  auto cell = [&](const std::string& key, const std::string& sku, double ratio,
                  FineTuneMethod method) {
    FleetCell c;
    c.recipe_key = key;
    c.sku_id = sku;
    c.method = method;
    c.prior_step_time_s = 1;
    c.measured_step_time_s = ratio;
    cells.push_back(c);
  };
  for (const char* key : {"lora-a", "lora-b"}) {
    cell(key, kL40s, 0.75, FineTuneMethod::kLora);
    cell(key, "A100-SXM4-80GB", 1.0, FineTuneMethod::kLora);
  }
  for (const char* key : {"full-a", "full-b"}) {
    cell(key, kL40s, 1.0, FineTuneMethod::kFull);
    cell(key, "A100-SXM4-80GB", 1.0, FineTuneMethod::kFull);
  }
  const FleetModel fleet = FleetModel::Fit(cells);
  const std::vector<Pool> pools = {
      TrainingPool("l40s", kL40s, Fabric::kPcie, 8, 1, 1'000'000)};
  const absl::StatusOr<PlanResult> plan =
      Plan(Request(Lora8b()), pools, TestCatalog(), InMemoryEvidence(), &fleet);
  ASSERT_TRUE(plan.ok()) << plan.status();
  const Candidate* l40s = Find(*plan, "l40s");
  ASSERT_NE(l40s, nullptr);
  EXPECT_THAT(l40s->reasons,
              ::testing::Contains(::testing::HasSubstr(
                  "is LORA recipes' own term on L40S-PCIE-48GB")));
}

}  // namespace
}  // namespace placement::core
