#include "core/plan/planner.h"

#include <algorithm>
#include <cstdint>
#include <limits>

#include "core/plan/bake_off.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/core/test_catalog.h"

namespace placement::core {
namespace {

using testing::TestCatalog;
using testing::TrainingPool;

constexpr char kL40s[] = "L40S-PCIE-48GB";
constexpr char kA100[] = "A100-SXM4-80GB";

Recipe Lora8b() {
  Recipe r;
  r.model = "Llama-3.1-8B";
  r.method = FineTuneMethod::kLora;
  r.lora_rank = 16;
  r.target_modules = {"all-linear"};
  r.sequence_length = 2048;
  r.micro_batch_size = 2;
  r.activation_checkpointing = ActivationCheckpointing::kOn;
  r.attention = AttentionImplementation::kFlash;
  return NormalizeRecipe(r);
}

Recipe Qlora70b() {
  Recipe r;
  r.model = "Llama-3.1-70B";
  r.method = FineTuneMethod::kQlora;
  r.lora_rank = 16;
  r.double_quantization = true;
  r.sequence_length = 1024;
  r.activation_checkpointing = ActivationCheckpointing::kOn;
  r.attention = AttentionImplementation::kFlash;
  return NormalizeRecipe(r);
}

MeasuredRun MakeRun(const std::string& sku, double gpu_hours, int64_t steps_ok,
                    double peak_gb, RunOutcome outcome = RunOutcome::kSucceeded,
                    int retries = 0, Offload offload = Offload::kNone) {
  MeasuredRun run;
  run.sku_id = sku;
  run.gpu_count = 1;
  run.started = absl::FromUnixSeconds(1'700'000'000);
  run.ended = run.started + absl::Hours(gpu_hours);
  run.steps_attempted = steps_ok;
  run.steps_succeeded = steps_ok;
  run.step_time_p50_s = steps_ok > 0 ? gpu_hours * 3600 / steps_ok : 0;
  run.step_time_p95_s = run.step_time_p50_s * 1.1;
  run.peak_memory_gb = peak_gb;
  run.offload = offload;
  run.retries = retries;
  run.outcome = outcome;
  return run;
}

PlanRequest Request(const Recipe& recipe) {
  PlanRequest request;
  request.recipe = recipe;
  request.total_steps = 10'000;
  return request;
}

const Candidate* FindCandidate(const PlanResult& plan,
                               const std::string& pool) {
  for (const Candidate& c : plan.candidates) {
    if (c.pool_name == pool) return &c;
  }
  return nullptr;
}

const Rejection* FindRejection(const PlanResult& plan,
                               const std::string& pool) {
  for (const Rejection& r : plan.rejections) {
    if (r.pool_name == pool) return &r;
  }
  return nullptr;
}

bool HasWarning(const Candidate& c, const std::string& prefix) {
  return std::any_of(
      c.warnings.begin(), c.warnings.end(),
      [&](const std::string& w) { return w.rfind(prefix, 0) == 0; });
}

// The guide: an 8B LoRA that fits an L40S with room goes to the L40S when it
// is measured cheaper per successful step; the 80 GB A100 is over-bought.
TEST(PlannerTest, SmallLoraGoesToL40sAndA100IsOverBought) {
  const std::vector<Pool> pools = {
      TrainingPool("a100-train", kA100, Fabric::kNvlink, 8, 1, 2'500'000),
      TrainingPool("l40s-train", kL40s, Fabric::kPcie, 8, 1, 1'200'000)};
  InMemoryEvidence evidence;
  for (int i = 0; i < 3; ++i) {
    evidence.AddRun(Lora8b(), MakeRun(kL40s, 10, 10'000, 24));
    evidence.AddRun(Lora8b(), MakeRun(kA100, 6, 10'000, 25));
  }
  auto plan = Plan(Request(Lora8b()), pools, TestCatalog(), evidence);
  ASSERT_TRUE(plan.ok()) << plan.status();
  ASSERT_EQ(plan->candidates.size(), 2u);
  const Candidate& best = plan->candidates[0];
  EXPECT_EQ(best.pool_name, "l40s-train");
  EXPECT_EQ(best.basis, EvidenceBasis::kMeasured);
  EXPECT_EQ(best.confidence, Confidence::kHigh);
  EXPECT_EQ(best.evidence_runs, 3);
  EXPECT_NEAR(best.gpu_hours_per_1k_successful_steps, 1.0, 1e-9);
  EXPECT_NEAR(best.expected_gpu_hours, 10.0, 1e-9);
  EXPECT_EQ(best.expected_cost_micros, 12'000'000);  // 10 h x $1.20
  EXPECT_EQ(best.expected_wall_time, absl::Hours(10));
  EXPECT_FALSE(HasWarning(best, kOverBoughtRule));
  const Candidate& a100 = plan->candidates[1];
  EXPECT_EQ(a100.expected_cost_micros, 15'000'000);  // 6 h x $2.50
  EXPECT_TRUE(HasWarning(a100, kOverBoughtRule));
  EXPECT_FALSE(plan->bake_off.has_value());
}

TEST(PlannerTest, ShortestTimeObjectivePrefersTheFasterCard) {
  const std::vector<Pool> pools = {
      TrainingPool("a100-train", kA100, Fabric::kNvlink, 8, 1, 2'500'000),
      TrainingPool("l40s-train", kL40s, Fabric::kPcie, 8, 1, 1'200'000)};
  InMemoryEvidence evidence;
  evidence.AddRun(Lora8b(), MakeRun(kL40s, 10, 10'000, 24));
  evidence.AddRun(Lora8b(), MakeRun(kA100, 6, 10'000, 25));
  PlanRequest request = Request(Lora8b());
  request.constraints.objective = Objective::kShortestTime;
  auto plan = Plan(request, pools, TestCatalog(), evidence);
  ASSERT_TRUE(plan.ok());
  EXPECT_EQ(plan->candidates[0].pool_name, "a100-train");
}

TEST(PlannerTest, FullWeight70bNeverLandsOnL40s) {
  Recipe r;
  r.model = "Llama-3.1-70B";
  r.method = FineTuneMethod::kFull;
  r.sequence_length = 4096;
  r.activation_checkpointing = ActivationCheckpointing::kOn;
  r.attention = AttentionImplementation::kFlash;
  r.fp32_master_weights = true;
  for (int gpus : {1, 2, 8}) {
    r.gpu_count = gpus;
    r.parallelism = gpus == 1 ? Parallelism::kSingle : Parallelism::kFsdp;
    const std::vector<Pool> pools = {
        TrainingPool("l40s-train", kL40s, Fabric::kPcie, 8, 2),
        TrainingPool("a100-train", kA100, Fabric::kNvlink, 8, 2)};
    auto plan = Plan(Request(r), pools, TestCatalog(), InMemoryEvidence());
    ASSERT_TRUE(plan.ok()) << plan.status();
    EXPECT_EQ(FindCandidate(*plan, "l40s-train"), nullptr) << gpus;
    ASSERT_NE(FindRejection(*plan, "l40s-train"), nullptr);
  }
  // Even 8 NVLink A100s cannot hold it: 70.6B params x 16 bytes (fp32
  // weights, grads, AdamW) / 8 = 141 GB per GPU.
  r.gpu_count = 8;
  r.parallelism = Parallelism::kFsdp;
  auto plan = Plan(Request(r),
                   {TrainingPool("a100-train", kA100, Fabric::kNvlink, 8, 2)},
                   TestCatalog(), InMemoryEvidence());
  ASSERT_TRUE(plan.ok());
  EXPECT_EQ(FindRejection(*plan, "a100-train")->rule, kFitWithoutOffloadRule);
}

TEST(PlannerTest, QloraOn70bFitsL40sOnlyWithoutOffload) {
  const std::vector<Pool> pools = {
      TrainingPool("l40s-train", kL40s, Fabric::kPcie)};
  InMemoryEvidence clean;
  clean.AddRun(Qlora70b(), MakeRun(kL40s, 20, 1000, 42.5));
  auto plan = Plan(Request(Qlora70b()), pools, TestCatalog(), clean);
  ASSERT_TRUE(plan.ok()) << plan.status();
  ASSERT_EQ(plan->candidates.size(), 1u);
  EXPECT_EQ(plan->candidates[0].basis, EvidenceBasis::kMeasured);
  EXPECT_NEAR(plan->candidates[0].peak_memory_gb, 42.5, 0.01);

  InMemoryEvidence offloaded = clean;
  offloaded.AddRun(
      Qlora70b(),
      MakeRun(kL40s, 30, 1000, 47, RunOutcome::kSucceeded, 0, Offload::kCpu));
  plan = Plan(Request(Qlora70b()), pools, TestCatalog(), offloaded);
  ASSERT_TRUE(plan.ok());
  EXPECT_TRUE(plan->candidates.empty());
  ASSERT_NE(FindRejection(*plan, "l40s-train"), nullptr);
  EXPECT_EQ(FindRejection(*plan, "l40s-train")->rule, kFitWithoutOffloadRule);
  EXPECT_THAT(FindRejection(*plan, "l40s-train")->reason,
              ::testing::HasSubstr("offload"));
}

TEST(PlannerTest, TensorParallelAcrossPcieL40sIsRejected) {
  Recipe r = Lora8b();
  r.gpu_count = 4;
  r.parallelism = Parallelism::kTensor;
  r.tensor_parallel_degree = 0;
  r.data_parallel_degree = 0;
  r.pipeline_parallel_degree = 0;
  const std::vector<Pool> pools = {
      TrainingPool("l40s-train", kL40s, Fabric::kPcie),
      TrainingPool("a100-train", kA100, Fabric::kNvlink)};
  auto plan = Plan(Request(r), pools, TestCatalog(), InMemoryEvidence());
  ASSERT_TRUE(plan.ok()) << plan.status();
  ASSERT_NE(FindRejection(*plan, "l40s-train"), nullptr);
  EXPECT_EQ(FindRejection(*plan, "l40s-train")->rule,
            kCollectivesNeedFabricRule);
  ASSERT_EQ(plan->candidates.size(), 1u);
  EXPECT_EQ(plan->candidates[0].pool_name, "a100-train");
}

// The guide: a "cheaper" L40S that fails collectives every night is more
// expensive than an A100 that finishes.
TEST(PlannerTest, CheaperCardThatFailsAndRetriesLoses) {
  Recipe r = Lora8b();
  r.gpu_count = 2;
  r.parallelism = Parallelism::kDdp;
  r.data_parallel_degree = 0;
  const std::vector<Pool> pools = {
      TrainingPool("a100-train", kA100, Fabric::kNvlink, 8, 1, 2'000'000),
      TrainingPool("l40s-train", kL40s, Fabric::kPcie, 8, 1, 1'000'000)};
  InMemoryEvidence evidence;
  // L40S: per GPU-hour half the price, but 2 of 3 runs die in collectives
  // after burning hours, with retries: 3 x 10 h = 30 GPU-hours for 5,000
  // steps. A100: 8 GPU-hours for 5,000 steps.
  evidence.AddRun(r, MakeRun(kL40s, 10, 5'000, 26));
  evidence.AddRun(r,
                  MakeRun(kL40s, 10, 0, 26, RunOutcome::kCollectiveTimeout, 3));
  evidence.AddRun(r,
                  MakeRun(kL40s, 10, 0, 26, RunOutcome::kCollectiveTimeout, 2));
  evidence.AddRun(r, MakeRun(kA100, 8, 5'000, 27));
  auto plan = Plan(Request(r), pools, TestCatalog(), evidence);
  ASSERT_TRUE(plan.ok()) << plan.status();
  ASSERT_EQ(plan->candidates.size(), 2u);
  EXPECT_EQ(plan->candidates[0].pool_name, "a100-train");
  const Candidate* l40s = FindCandidate(*plan, "l40s-train");
  ASSERT_NE(l40s, nullptr);
  EXPECT_NEAR(l40s->gpu_hours_per_1k_successful_steps, 6.0, 1e-9);
  EXPECT_GT(l40s->expected_cost_micros,
            plan->candidates[0].expected_cost_micros);
  EXPECT_TRUE(HasWarning(*l40s, kRetriesCostMoneyRule));
}

// Neither card measured: the job will measure the first; the runner-up is
// worth a short run at equal settings over 40,000 steps of demand (at
// 10,000 it would not save twice its cost).
TEST(PlannerTest, UnmeasuredPairProposesAnEqualSettingsRunOfTheRunnerUp) {
  const std::vector<Pool> pools = {
      TrainingPool("l40s-train", kL40s, Fabric::kPcie),
      TrainingPool("a100-train", kA100, Fabric::kNvlink)};
  PlanRequest request = Request(Lora8b());
  request.serving = ServingTarget{kL40s, Precision::kFp8};
  auto short_demand = Plan(request, pools, TestCatalog(), InMemoryEvidence());
  ASSERT_TRUE(short_demand.ok()) << short_demand.status();
  EXPECT_FALSE(short_demand->bake_off.has_value());
  EXPECT_THAT(short_demand->candidates[1].reasons.back(),
              ::testing::HasSubstr("under the 2x its cost a measurement must "
                                   "save"));

  request.total_steps = 40'000;
  auto plan = Plan(request, pools, TestCatalog(), InMemoryEvidence());
  ASSERT_TRUE(plan.ok()) << plan.status();
  ASSERT_EQ(plan->candidates.size(), 2u);
  for (const Candidate& c : plan->candidates) {
    EXPECT_EQ(c.basis, EvidenceBasis::kEstimated);
    EXPECT_EQ(c.confidence, Confidence::kLow);
  }
  ASSERT_TRUE(plan->bake_off.has_value());
  const BakeOff& b = *plan->bake_off;
  EXPECT_EQ(b.recipe_key, RecipeKey(Lora8b()));
  EXPECT_EQ(b.recipe.sequence_length, 2048);
  EXPECT_EQ(b.recipe.lora_rank, 16);
  EXPECT_EQ(b.recipe.precision, Precision::kBf16);
  EXPECT_THAT(b.settings, ::testing::HasSubstr("sequence_length=2048"));
  EXPECT_THAT(b.settings, ::testing::HasSubstr("lora_rank=16"));
  EXPECT_THAT(b.settings, ::testing::HasSubstr("precision=BF16"));
  ASSERT_EQ(b.runs.size(), 1u);
  EXPECT_EQ(b.runs[0].sku_id, plan->candidates[1].sku_id);
  EXPECT_EQ(b.runs[0].recipe_key, RecipeKey(Lora8b()));
  EXPECT_GT(b.runs[0].expected_saving_micros,
            kMeasurementHurdle * b.runs[0].cost_micros);
  EXPECT_TRUE(plan->candidates[1].measure_first);
  EXPECT_FALSE(plan->candidates[0].measure_first);
  // Serving in FP8 after training in BF16 needs an eval.
  EXPECT_TRUE(b.eval_requirement.has_value());
  EXPECT_TRUE(plan->eval_requirement.has_value());
}

TEST(PlannerTest, TransferredEvidenceIsLabelled) {
  Recipe shorter = Lora8b();
  shorter.sequence_length = 1024;
  InMemoryEvidence evidence;
  evidence.AddRun(shorter, MakeRun(kL40s, 5, 10'000, 18));
  auto plan = Plan(Request(Lora8b()),
                   {TrainingPool("l40s-train", kL40s, Fabric::kPcie)},
                   TestCatalog(), evidence);
  ASSERT_TRUE(plan.ok());
  ASSERT_EQ(plan->candidates.size(), 1u);
  const Candidate& c = plan->candidates[0];
  EXPECT_EQ(c.basis, EvidenceBasis::kTransferred);
  EXPECT_EQ(c.transferred_from_recipe_key, RecipeKey(shorter));
  // Twice the tokens: about twice the GPU-hours per step.
  EXPECT_GT(c.gpu_hours_per_1k_successful_steps, 0.5 * 1.9);
  EXPECT_LT(c.gpu_hours_per_1k_successful_steps, 0.5 * 2.3);
  // The only pool: the job itself measures it, no run before it.
  EXPECT_FALSE(plan->bake_off.has_value());
}

TEST(PlannerTest, ServingSharedAndDisallowedPoolsAndDeadline) {
  Pool serving = TrainingPool("h100-serve", "H100-SXM5-80GB", Fabric::kNvlink);
  serving.purpose = PoolPurpose::kServing;
  Pool shared = TrainingPool("l40s-shared", kL40s, Fabric::kPcie);
  shared.exclusive = false;
  Pool ambiguous = TrainingPool("mystery", "A100", Fabric::kNvlink);
  Pool other = TrainingPool("zz-other", kL40s, Fabric::kPcie);
  const std::vector<Pool> pools = {
      serving, shared, ambiguous, other,
      TrainingPool("a100-train", kA100, Fabric::kNvlink)};
  PlanRequest request = Request(Lora8b());
  request.constraints.allowed_pools = {"h100-serve", "l40s-shared", "mystery",
                                       "a100-train"};
  request.constraints.deadline = absl::Minutes(1);
  auto plan = Plan(request, pools, TestCatalog(), InMemoryEvidence());
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_TRUE(plan->candidates.empty());
  EXPECT_EQ(FindRejection(*plan, "h100-serve")->rule,
            kTrainingStaysOffServingPoolsRule);
  EXPECT_EQ(FindRejection(*plan, "l40s-shared")->rule,
            kTrainingStaysOffServingPoolsRule);
  EXPECT_EQ(FindRejection(*plan, "mystery")->rule, kExactSkuRule);
  EXPECT_EQ(FindRejection(*plan, "zz-other")->rule, kConstraintsRule);
  EXPECT_EQ(FindRejection(*plan, "a100-train")->rule, kDeadlineRule);
  // Rejections come in pool-name order.
  EXPECT_EQ(plan->rejections.front().pool_name, "a100-train");
}

TEST(PlannerTest, DeterministicWithNameTieBreak) {
  std::vector<Pool> pools = {TrainingPool("l40s-b", kL40s, Fabric::kPcie),
                             TrainingPool("l40s-a", kL40s, Fabric::kPcie)};
  auto first =
      Plan(Request(Lora8b()), pools, TestCatalog(), InMemoryEvidence());
  std::reverse(pools.begin(), pools.end());
  auto second =
      Plan(Request(Lora8b()), pools, TestCatalog(), InMemoryEvidence());
  ASSERT_TRUE(first.ok() && second.ok());
  EXPECT_EQ(first->candidates[0].pool_name, "l40s-a");
  EXPECT_EQ(second->candidates[0].pool_name, "l40s-a");
  EXPECT_EQ(first->candidates[1].expected_cost_micros,
            second->candidates[1].expected_cost_micros);
}

TEST(PlannerTest, InvalidRequestIsInvalidArgument) {
  PlanRequest request = Request(Lora8b());
  request.recipe.lora_rank = 0;
  request.total_steps = 0;
  auto plan = Plan(request, {}, TestCatalog(), InMemoryEvidence());
  EXPECT_EQ(plan.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(plan.status().message()),
              ::testing::HasSubstr("recipe.lora_rank"));
  EXPECT_THAT(std::string(plan.status().message()),
              ::testing::HasSubstr("total_steps"));
}

TEST(PlannerTest, TotalStepsAboveTheBoundIsInvalidArgument) {
  PlanRequest request = Request(Lora8b());
  request.total_steps = kMaxTotalSteps;
  EXPECT_TRUE(ValidatePlanRequest(request).empty());
  for (int64_t steps : {kMaxTotalSteps + 1, int64_t{100'000'000'000'000'000}}) {
    request.total_steps = steps;
    const FieldViolations violations = ValidatePlanRequest(request);
    ASSERT_EQ(violations.size(), 1u) << steps;
    EXPECT_EQ(violations[0].field, "total_steps");
    auto plan = Plan(request, {}, TestCatalog(), InMemoryEvidence());
    EXPECT_EQ(plan.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(std::string(plan.status().message()),
                ::testing::HasSubstr("total_steps"));
  }
}

// At the step bound and the largest rate a pool may charge, the dearer
// pool's cost is past int64 micros: it saturates and ranks last, where a
// wrapped (negative) cost would have ranked first.
TEST(PlannerTest, SaturatedCostRanksAfterTheFiniteCheaperPool) {
  const std::vector<Pool> pools = {
      TrainingPool("a-dear", kL40s, Fabric::kPcie, 8, 1,
                   kMaxRateMicrosPerGpuHour),
      TrainingPool("b-cheap", kL40s, Fabric::kPcie, 8, 1, 1'200'000)};
  PlanRequest request = Request(Lora8b());
  request.total_steps = kMaxTotalSteps;
  auto plan = Plan(request, pools, TestCatalog(), InMemoryEvidence());
  ASSERT_TRUE(plan.ok()) << plan.status();
  ASSERT_EQ(plan->candidates.size(), 2u);
  EXPECT_EQ(plan->candidates[0].pool_name, "b-cheap");
  EXPECT_GT(plan->candidates[0].expected_cost_micros, 0);
  EXPECT_EQ(plan->candidates[1].pool_name, "a-dear");
  EXPECT_EQ(plan->candidates[1].expected_cost_micros,
            std::numeric_limits<int64_t>::max());
}

// The validated entry point plans exactly what Plan does.
TEST(PlannerTest, PlanValidatedRequestMatchesPlan) {
  const std::vector<Pool> pools = {
      TrainingPool("a100-train", kA100, Fabric::kNvlink, 8, 1, 2'500'000),
      TrainingPool("l40s-train", kL40s, Fabric::kPcie, 8, 1, 1'200'000)};
  InMemoryEvidence evidence;
  evidence.AddRun(Lora8b(), MakeRun(kL40s, 10, 10'000, 24));
  auto checked = Plan(Request(Lora8b()), pools, TestCatalog(), evidence);
  auto validated =
      PlanValidatedRequest(Request(Lora8b()), pools, TestCatalog(), evidence);
  ASSERT_TRUE(checked.ok() && validated.ok());
  ASSERT_EQ(checked->candidates.size(), validated->candidates.size());
  for (size_t i = 0; i < checked->candidates.size(); ++i) {
    EXPECT_EQ(checked->candidates[i].pool_name,
              validated->candidates[i].pool_name);
    EXPECT_EQ(checked->candidates[i].expected_cost_micros,
              validated->candidates[i].expected_cost_micros);
    EXPECT_EQ(checked->candidates[i].reasons, validated->candidates[i].reasons);
  }
  EXPECT_EQ(checked->recipe_key, validated->recipe_key);
  EXPECT_EQ(checked->bake_off.has_value(), validated->bake_off.has_value());
}

}  // namespace
}  // namespace placement::core
