// The guide's cases end to end: a real placementd process on a real
// PostgreSQL, driven only through the public API (pools through
// CatalogService, evidence through TelemetryService, decisions from
// PlacePlan). Also the audit and feedback loop, two replicas sharing one
// database, and plans recorded after they are answered.
#include <signal.h>

#include <algorithm>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "placement/v1/placement.grpc.pb.h"
#include "tests/support/api_client.h"
#include "tests/support/end_to_end_test.h"
#include "tests/support/fixtures.h"
#include "tests/support/placementd_process.h"
#include "tests/support/test_database.h"

namespace placement {
namespace {

using ::placement::testing::ApiClient;
using ::placement::testing::Candidate;
using ::placement::testing::Deadline;
using ::placement::testing::EndToEndTest;
using ::placement::testing::Lora8b;
using ::placement::testing::Measured;
using ::placement::testing::PlacementdProcess;
using ::placement::testing::PlanFor;
using ::placement::testing::Qlora70b;
using ::placement::testing::Rejection;
using ::placement::testing::RunCommand;
using ::placement::testing::TestDatabase;
using ::placement::testing::TrainingPool;
using ::placement::testing::ViolatedFields;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr char kL40s[] = "L40S-PCIE-48GB";
constexpr char kA100[] = "A100-SXM4-80GB";

bool HasWarning(const v1::PlacementCandidate& c, const std::string& prefix) {
  return std::any_of(
      c.warnings().begin(), c.warnings().end(),
      [&](const std::string& w) { return absl::StartsWith(w, prefix); });
}

class PlacementGuideTest : public EndToEndTest {};

// The guide: an 8B LoRA that fits an L40S with room goes to the L40S when it
// is measured cheaper per successful step; the 80 GB A100 is over-bought.
TEST_F(PlacementGuideTest, SmallLoraGoesToTheMeasuredCheaperL40s) {
  client_->CreatePool(TrainingPool("a100-train", kA100, 1, 8, 2'500'000));
  client_->CreatePool(TrainingPool("l40s-train", kL40s, 1, 8, 1'200'000));
  for (int i = 0; i < 3; ++i) {
    client_->UploadRun("l40s-train", kL40s, Lora8b(), 10, 10'000, 24);
    // 1.8 s per step on one A100 ($12.50): the unmeasured 2-GPU tensor
    // parallel layout is estimated at $10.60 but $14.30 at its
    // pessimistic edge, so the measured layout stays.
    client_->UploadRun("a100-train", kA100, Lora8b(), 5, 10'000, 25);
  }
  v1::PlacePlanResponse plan =
      client_->PlanUntil(PlanFor(Lora8b()), [](const v1::PlacePlanResponse& p) {
        return Measured("l40s-train", 3)(p) && Measured("a100-train", 3)(p);
      });
  ASSERT_EQ(plan.candidates_size(), 2);
  const v1::PlacementCandidate& best = plan.candidates(0);
  EXPECT_EQ(best.pool(), "l40s-train");
  EXPECT_EQ(best.basis(), v1::EVIDENCE_BASIS_MEASURED);
  // 10 GPU-h x 1.20, and the rework the failure prior expects of a pool
  // with no failure yet (one failure per 200 run-hours): under 0.1%.
  EXPECT_NEAR(best.gpu_hours_per_1k_successful_steps(), 1.0, 1e-3);
  EXPECT_NEAR(best.expected_cost_micros(), 12'000'000, 12'000);
  EXPECT_GT(best.rework_gpu_hours(), 0);
  EXPECT_FALSE(HasWarning(best, "over_bought"));
  EXPECT_NEAR(plan.candidates(1).expected_cost_micros(), 12'500'000, 12'500);
  EXPECT_TRUE(HasWarning(plan.candidates(1), "over_bought"));
  EXPECT_FALSE(plan.has_bake_off());
  EXPECT_FALSE(plan.plan_id().empty());
}

TEST_F(PlacementGuideTest, FullWeight70bNeverLandsOnL40s) {
  client_->CreatePool(TrainingPool("l40s-train", kL40s, 2, 8));
  client_->CreatePool(TrainingPool("a100-train", kA100, 2, 8));
  v1::Recipe recipe;
  recipe.set_model("Llama-3.1-70B");
  recipe.set_method(v1::FINE_TUNE_METHOD_FULL);
  recipe.set_sequence_length(4096);
  recipe.set_activation_checkpointing_mode(v1::ACTIVATION_CHECKPOINTING_ON);
  recipe.set_attention(v1::ATTENTION_IMPLEMENTATION_FLASH);
  recipe.set_fp32_master_weights(true);
  recipe.set_gpu_count(8);
  recipe.set_parallelism(v1::PARALLELISM_FSDP);
  v1::PlacePlanResponse plan;
  ASSERT_TRUE(client_->Plan(PlanFor(recipe), &plan).ok());
  EXPECT_EQ(Candidate(plan, "l40s-train"), nullptr);
  ASSERT_NE(Rejection(plan, "l40s-train"), nullptr);
  // Nothing fits: a plan with zero candidates and every pool explained.
  EXPECT_EQ(plan.candidates_size(), 0);
  EXPECT_EQ(plan.rejections_size(), 2);
  for (const auto& r : plan.rejections()) EXPECT_FALSE(r.reason().empty());
}

// On one card: with the GPU count open the planner may shard it instead.
TEST_F(PlacementGuideTest, QloraOn70bFitsL40sOnlyWhileNoRunNeededOffload) {
  client_->CreatePool(TrainingPool("l40s-train", kL40s, 1, 8));
  v1::Recipe recipe = Qlora70b();
  recipe.set_gpu_count(1);
  client_->UploadRun("l40s-train", kL40s, recipe, 20, 1000, 42.5);
  v1::PlacePlanResponse plan =
      client_->PlanUntil(PlanFor(recipe), Measured("l40s-train", 1));
  ASSERT_EQ(plan.candidates_size(), 1);
  EXPECT_NEAR(plan.candidates(0).peak_memory_gb(), 42.5, 0.01);

  client_->UploadRun("l40s-train", kL40s, recipe, 30, 1000, 47,
                     v1::RUN_OUTCOME_SUCCEEDED, 0, v1::OFFLOAD_CPU);
  plan = client_->PlanUntil(
      PlanFor(recipe),
      [](const v1::PlacePlanResponse& p) { return p.candidates_size() == 0; });
  ASSERT_EQ(plan.candidates_size(), 0);
  ASSERT_NE(Rejection(plan, "l40s-train"), nullptr);
  EXPECT_EQ(Rejection(plan, "l40s-train")->rule(), "fit_without_offload");
  EXPECT_THAT(Rejection(plan, "l40s-train")->reason(), HasSubstr("offload"));
}

TEST_F(PlacementGuideTest, TensorParallelAcrossAPcieL40sBoxIsRejected) {
  client_->CreatePool(TrainingPool("l40s-train", kL40s, 1, 8));
  client_->CreatePool(TrainingPool("a100-train", kA100, 1, 8));
  v1::Recipe recipe = Lora8b();
  recipe.set_gpu_count(4);
  recipe.set_parallelism(v1::PARALLELISM_TENSOR);
  v1::PlacePlanResponse plan;
  ASSERT_TRUE(client_->Plan(PlanFor(recipe), &plan).ok());
  ASSERT_NE(Rejection(plan, "l40s-train"), nullptr);
  EXPECT_EQ(Rejection(plan, "l40s-train")->rule(), "collectives_need_fabric");
  ASSERT_EQ(plan.candidates_size(), 1);
  EXPECT_EQ(plan.candidates(0).pool(), "a100-train");
}

// The guide: a "cheaper" L40S that fails collectives every night is more
// expensive than an A100 that finishes.
TEST_F(PlacementGuideTest, CheaperCardThatFailsAndRetriesLoses) {
  client_->CreatePool(TrainingPool("a100-train", kA100, 1, 8, 2'000'000));
  client_->CreatePool(TrainingPool("l40s-train", kL40s, 1, 8, 1'000'000));
  v1::Recipe recipe = Lora8b();
  recipe.set_gpu_count(2);
  recipe.set_parallelism(v1::PARALLELISM_DDP);
  client_->UploadRun("l40s-train", kL40s, recipe, 10, 5'000, 26);
  client_->UploadRun("l40s-train", kL40s, recipe, 10, 0, 26,
                     v1::RUN_OUTCOME_COLLECTIVE_TIMEOUT, 3);
  client_->UploadRun("l40s-train", kL40s, recipe, 10, 0, 26,
                     v1::RUN_OUTCOME_COLLECTIVE_TIMEOUT, 2);
  client_->UploadRun("a100-train", kA100, recipe, 8, 5'000, 27);
  v1::PlacePlanResponse plan =
      client_->PlanUntil(PlanFor(recipe), [](const v1::PlacePlanResponse& p) {
        return Measured("l40s-train", 3)(p) && Measured("a100-train", 1)(p);
      });
  ASSERT_EQ(plan.candidates_size(), 2);
  EXPECT_EQ(plan.candidates(0).pool(), "a100-train");
  const v1::PlacementCandidate* l40s = Candidate(plan, "l40s-train");
  ASSERT_NE(l40s, nullptr);
  // Its two timed-out runs, every attempt of them (4 and 3: retries 3 and
  // 2), price the fabric for two-GPU layouts: dearer than the 6 GPU-hours
  // per 1,000 steps its runs spent so far.
  EXPECT_EQ(l40s->failure_rate().failures(), 7);
  EXPECT_TRUE(l40s->failure_rate().lost_hours_measured());
  EXPECT_GT(l40s->rework_gpu_hours(), 0);
  EXPECT_GT(l40s->gpu_hours_per_1k_successful_steps(), 6.0);
  EXPECT_GT(l40s->expected_cost_micros(),
            plan.candidates(0).expected_cost_micros());
  EXPECT_TRUE(HasWarning(*l40s, "retries_cost_money"));
}

// Two unmeasured SKUs: the job measures the first; the runner-up is worth a
// short run at the same settings, since what it may save over the class's
// demand (40,000 steps) is more than twice what the run costs.
TEST_F(PlacementGuideTest, UnmeasuredPairProposesAnEqualSettingsBakeOff) {
  client_->CreatePool(TrainingPool("l40s-train", kL40s, 1, 8));
  client_->CreatePool(TrainingPool("a100-train", kA100, 1, 8));
  v1::PlacePlanRequest request = PlanFor(Lora8b(), 40'000);
  request.mutable_serving()->set_sku("l40s-pcie-48gb");
  request.mutable_serving()->set_precision(v1::PRECISION_FP8);
  v1::PlacePlanResponse plan;
  ASSERT_TRUE(client_->Plan(request, &plan).ok());
  ASSERT_EQ(plan.candidates_size(), 2);
  for (const auto& c : plan.candidates()) {
    EXPECT_EQ(c.basis(), v1::EVIDENCE_BASIS_ESTIMATED);
    EXPECT_EQ(c.confidence(), v1::CONFIDENCE_LOW);
    // The cost's make-up: a prior start-up, busy hours per step, and the
    // pool's failure rate from the prior alone (no run yet).
    EXPECT_GT(c.startup_gpu_hours(), 0);
    EXPECT_FALSE(c.startup_measured());
    EXPECT_GT(c.step_gpu_hours(), 0);
    EXPECT_GE(c.rework_gpu_hours(), 0);
    ASSERT_TRUE(c.has_failure_rate());
    EXPECT_GT(c.failure_rate().per_hour(), 0);
    EXPECT_EQ(c.failure_rate().failures(), 0);
    EXPECT_NEAR(c.expected_gpu_hours(),
                c.startup_gpu_hours() +
                    request.total_steps() * c.step_gpu_hours() +
                    c.rework_gpu_hours(),
                0.01 * c.expected_gpu_hours());
  }
  ASSERT_TRUE(plan.has_bake_off());
  EXPECT_EQ(plan.bake_off().recipe().sequence_length(), 2048);
  EXPECT_EQ(plan.bake_off().recipe().lora_rank(), 16);
  EXPECT_EQ(plan.bake_off().recipe().precision(), v1::PRECISION_BF16);
  EXPECT_GE(plan.bake_off().expected_demand_steps(), request.total_steps());
  // One run, of the runner-up, at the settings the first runs with.
  ASSERT_EQ(plan.bake_off().runs_size(), 1);
  const v1::BakeOffRun& run = plan.bake_off().runs(0);
  EXPECT_EQ(run.sku(), plan.candidates(1).sku());
  EXPECT_EQ(run.pool(), plan.candidates(1).pool());
  EXPECT_EQ(run.recipe_key(), plan.candidates(1).recipe_key());
  EXPECT_EQ(plan.candidates(1).recipe().sequence_length(),
            plan.candidates(0).recipe().sequence_length());
  EXPECT_EQ(plan.candidates(1).recipe().lora_rank(),
            plan.candidates(0).recipe().lora_rank());
  EXPECT_EQ(plan.candidates(1).recipe().precision(),
            plan.candidates(0).recipe().precision());
  EXPECT_TRUE(plan.candidates(1).measure_first());
  EXPECT_FALSE(plan.candidates(0).measure_first());
  EXPECT_FALSE(run.borderline());
  EXPECT_GE(run.steps(), 50);
  EXPECT_LT(run.steps(), request.total_steps());
  EXPECT_GT(run.cost_micros(), 0);
  EXPECT_GT(run.expected_saving_micros(), run.cost_micros());
  EXPECT_GT(run.win_probability(), 0);
  EXPECT_LT(run.win_probability(), 1);
  EXPECT_FALSE(run.reason().empty());
  // Serving in FP8 after training in BF16 requires an eval on the serving SKU.
  EXPECT_FALSE(plan.eval_requirement().empty());
  EXPECT_FALSE(plan.bake_off().eval_requirement().empty());
}

TEST_F(PlacementGuideTest, ServingAndSharedPoolsAreNeverCandidates) {
  v1::Pool serving = TrainingPool("h100-serve", "H100-SXM5-80GB", 1, 8);
  serving.set_purpose(v1::POOL_PURPOSE_SERVING);
  client_->CreatePool(serving);
  v1::Pool shared = TrainingPool("a100-shared", kA100, 1, 8);
  shared.set_exclusive(false);
  client_->CreatePool(shared);
  client_->CreatePool(TrainingPool("l40s-train", kL40s, 1, 8));
  v1::PlacePlanResponse plan;
  ASSERT_TRUE(client_->Plan(PlanFor(Lora8b()), &plan).ok());
  ASSERT_EQ(plan.candidates_size(), 1);
  EXPECT_EQ(plan.candidates(0).pool(), "l40s-train");
  EXPECT_EQ(Rejection(plan, "h100-serve")->rule(),
            "training_stays_off_serving_pools");
  EXPECT_EQ(Rejection(plan, "a100-shared")->rule(),
            "training_stays_off_serving_pools");
}

TEST_F(PlacementGuideTest, QuotaCapsTheGpusAPlanMayTake) {
  v1::Pool pool = TrainingPool("a100-train", kA100, 2, 8);
  pool.set_gpu_quota(4);
  client_->CreatePool(pool);
  v1::Recipe recipe = Lora8b();
  recipe.set_gpu_count(8);
  recipe.set_parallelism(v1::PARALLELISM_DDP);
  v1::PlacePlanResponse plan;
  ASSERT_TRUE(client_->Plan(PlanFor(recipe), &plan).ok());
  EXPECT_EQ(plan.candidates_size(), 0);
  EXPECT_EQ(Rejection(plan, "a100-train")->rule(), "quota");
}

TEST_F(PlacementGuideTest, BadRecipeAndMissingTrainingPoolAreRefused) {
  v1::PlacePlanResponse plan;
  // No training pool at all.
  grpc::Status status = client_->Plan(PlanFor(Lora8b()), &plan);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::FAILED_PRECONDITION);

  client_->CreatePool(TrainingPool("l40s-train", kL40s, 1, 8));
  v1::PlacePlanRequest bad = PlanFor(Lora8b());
  bad.mutable_recipe()->set_lora_rank(0);
  bad.set_total_steps(0);
  absl::SleepFor(absl::Milliseconds(500));  // the pool reaches the snapshot
  status = client_->Plan(bad, &plan);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(ViolatedFields(status),
              ElementsAre("recipe.lora_rank", "total_steps"));

  v1::PlacePlanRequest ambiguous_serving = PlanFor(Lora8b());
  ambiguous_serving.mutable_serving()->set_sku("H100");
  status = client_->Plan(ambiguous_serving, &plan);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(ViolatedFields(status), ElementsAre("serving.sku"));
}

TEST_F(PlacementGuideTest, PlansAreAuditedAndRunsMeasureTheirAccuracy) {
  client_->CreatePool(TrainingPool("l40s-train", kL40s, 1, 8, 1'200'000));
  client_->UploadRun("l40s-train", kL40s, Lora8b(), 10, 10'000, 24);
  v1::PlacePlanResponse plan =
      client_->PlanUntil(PlanFor(Lora8b()), Measured("l40s-train", 1));
  ASSERT_EQ(plan.candidates_size(), 1);

  // The audit record reads back as answered.
  v1::GetPlanRequest get;
  get.set_plan_id(plan.plan_id());
  v1::GetPlanResponse stored;
  ASSERT_TRUE(
      client_->placement().GetPlan(Deadline().get(), get, &stored).ok());
  EXPECT_EQ(stored.plan().SerializeAsString(), plan.SerializeAsString());
  EXPECT_EQ(stored.request().recipe().model(), "Llama-3.1-8B");

  // A run carries the plan out: 12 GPU-hours for 10,000 steps against the
  // predicted 10, peak 30 GB against the measured 24.
  client_->UploadRun("l40s-train", kL40s, Lora8b(), 12, 10'000, 30,
                     v1::RUN_OUTCOME_SUCCEEDED, 0, v1::OFFLOAD_NONE,
                     plan.plan_id());
  v1::GetPlanAccuracyRequest request;
  v1::GetPlanAccuracyResponse accuracy;
  ASSERT_TRUE(client_->placement()
                  .GetPlanAccuracy(Deadline().get(), request, &accuracy)
                  .ok());
  ASSERT_EQ(accuracy.skus_size(), 1);
  EXPECT_EQ(accuracy.skus(0).sku(), kL40s);
  EXPECT_EQ(accuracy.skus(0).runs(), 1);
  // (10 - 12) / 12 = -16.7% on GPU-hours per step.
  EXPECT_NEAR(accuracy.skus(0).gpu_hours_per_step_mean_error_pct(), -100.0 / 6,
              0.5);
  const double predicted_peak = plan.candidates(0).peak_memory_gb();
  EXPECT_NEAR(accuracy.skus(0).peak_memory_mean_error_pct(),
              100 * (predicted_peak - 30) / 30, 0.01);
  // Beside it, the analytic prior's error on the same run.
  EXPECT_EQ(accuracy.skus(0).prior().runs(), 1);
  EXPECT_NEAR(accuracy.skus(0).prior().peak_memory_mean_error_pct(),
              100 * (plan.candidates(0).prior_peak_memory_gb() - 30) / 30,
              0.01);
  const double prior_gpu_hours_per_step =
      plan.candidates(0).prior_step_time_s() / 3600;  // one GPU
  EXPECT_NEAR(
      accuracy.skus(0).prior().gpu_hours_per_step_mean_error_pct(),
      100 * (prior_gpu_hours_per_step - 12.0 / 10'000) / (12.0 / 10'000), 0.01);

  std::string metrics;
  ASSERT_EQ(RunCommand(absl::StrCat("curl -sf http://127.0.0.1:",
                                    placementd_->metrics_port(), "/metrics"),
                       &metrics),
            0);
  EXPECT_THAT(metrics,
              HasSubstr("placement_prediction_error_ratio_count{quantity=\""
                        "gpu_hours_per_step\",sku=\"L40S-PCIE-48GB\"} 1"));
  EXPECT_THAT(metrics, HasSubstr("placement_plans_total{objective=\"LOWEST_"
                                 "COST\",outcome=\"placed\"}"));
  EXPECT_THAT(metrics, HasSubstr("placement_plan_chosen_sku_total{sku=\""
                                 "L40S-PCIE-48GB\"}"));
  EXPECT_THAT(metrics, HasSubstr("placement_plan_evidence_basis_total{basis="
                                 "\"MEASURED\"}"));
}

TEST_F(PlacementGuideTest, RetryWithTheSameRequestIdReturnsTheRecordedPlan) {
  client_->CreatePool(TrainingPool("l40s-train", kL40s, 1, 8));
  absl::SleepFor(absl::Milliseconds(500));
  v1::PlacePlanRequest request = PlanFor(Lora8b());
  request.set_request_id("orchestrator-job-42");
  v1::PlacePlanResponse first, retry;
  ASSERT_TRUE(client_->Plan(request, &first).ok());
  ASSERT_TRUE(client_->Plan(request, &retry).ok());
  EXPECT_EQ(retry.plan_id(), first.plan_id());
  EXPECT_EQ(db_.QueryValue("SELECT count(*) FROM placements"), "1");
}

// Two placementd processes on one database: a run uploaded to one changes
// the other's plan within a second.
TEST(TwoReplicasTest, RunUploadedToOneChangesTheOthersPlanWithinASecond) {
  TestDatabase db;
  db.Migrate();
  auto a = PlacementdProcess::Start(db.url());
  auto b = PlacementdProcess::Start(db.url());
  ASSERT_TRUE(a.ok() && b.ok());
  ASSERT_TRUE((*a)->WaitForHealth(true, absl::Seconds(10)));
  ASSERT_TRUE((*b)->WaitForHealth(true, absl::Seconds(10)));
  ApiClient on_a((*a)->channel());
  ApiClient on_b((*b)->channel());

  on_a.CreatePool(TrainingPool("l40s-train", kL40s, 1, 8));
  // The pool created on A reaches B's memory too.
  v1::PlacePlanResponse plan = on_b.PlanUntil(
      PlanFor(Lora8b()),
      [](const v1::PlacePlanResponse& p) { return p.candidates_size() == 1; });
  ASSERT_EQ(plan.candidates_size(), 1);
  EXPECT_EQ(plan.candidates(0).basis(), v1::EVIDENCE_BASIS_ESTIMATED);

  on_a.UploadRun("l40s-train", kL40s, Lora8b(), 10, 10'000, 24);
  const absl::Time uploaded = absl::Now();
  plan = on_b.PlanUntil(PlanFor(Lora8b()), Measured("l40s-train", 1),
                        absl::Seconds(1));
  const absl::Duration visible_after = absl::Now() - uploaded;
  EXPECT_TRUE(Measured("l40s-train", 1)(plan))
      << "B still plans without A's run after " << visible_after;
  std::cout << "run uploaded to replica A visible to replica B's PlacePlan "
            << "after " << absl::FormatDuration(visible_after) << "\n";
  EXPECT_EQ((*a)->Stop(SIGTERM, absl::Seconds(15)), 0);
  EXPECT_EQ((*b)->Stop(SIGTERM, absl::Seconds(15)), 0);
}

// Deferred records (--plan_records=deferred): a plan is answered before its
// record commits, yet its caller can look it up at once on the same replica,
// and a clean shutdown records every plan answered.
TEST(DeferredPlanRecordsTest, AnsweredPlansCanBeLookedUpAtOnceAndAreRecorded) {
  TestDatabase db;
  db.Migrate();
  // A long interval, so that the lookups below come before the commits.
  auto process = PlacementdProcess::Start(
      db.url(), {"--plan_records=deferred", "--deferred_record_ms=300"});
  ASSERT_TRUE(process.ok()) << process.status();
  ASSERT_TRUE((*process)->WaitForHealth(true, absl::Seconds(10)));
  ApiClient client((*process)->channel());
  client.CreatePool(TrainingPool("l40s-train", kL40s, 1, 8));
  client.PlanUntil(PlanFor(Lora8b()), [](const v1::PlacePlanResponse& p) {
    return p.candidates_size() == 1;
  });

  std::vector<std::string> plan_ids;
  for (int i = 0; i < 20; ++i) {
    v1::PlacePlanResponse plan;
    ASSERT_TRUE(client.Plan(PlanFor(Lora8b()), &plan).ok());
    plan_ids.push_back(plan.plan_id());
    if (i % 5 == 0) {
      v1::GetPlanRequest get;
      get.set_plan_id(plan.plan_id());
      v1::GetPlanResponse stored;
      const grpc::Status status =
          client.placement().GetPlan(Deadline().get(), get, &stored);
      ASSERT_TRUE(status.ok()) << status.error_message();
      EXPECT_EQ(stored.plan().SerializeAsString(), plan.SerializeAsString());
    }
  }
  for (int i = 0; i < 30; ++i) {
    v1::PlacePlanResponse plan;
    ASSERT_TRUE(client.Plan(PlanFor(Lora8b()), &plan).ok());
    plan_ids.push_back(plan.plan_id());
  }
  EXPECT_EQ((*process)->Stop(SIGTERM, absl::Seconds(15)), 0);
  EXPECT_EQ(db.QueryValue(absl::StrCat(
                "SELECT count(*) FROM placements WHERE plan_id = ANY('{",
                absl::StrJoin(plan_ids, ","), "}'::uuid[])")),
            "50");
}

// With deferred records, GetPlan of an id this replica has not queued (one
// never issued, here a random one) answers NOT_FOUND at once, whatever is
// queued: waiting for the queue is for plans in it, and it holds no
// database worker, so a burst of such lookups starves nothing.
TEST(DeferredPlanRecordsTest, LookupsOfUnknownPlansNeitherWaitNorStarveOthers) {
  TestDatabase db;
  db.Migrate();
  // One worker, and records committed at most once every 20 s.
  auto process = PlacementdProcess::Start(
      db.url(), {"--plan_records=deferred", "--deferred_record_ms=20000",
                 "--db_workers=1"});
  ASSERT_TRUE(process.ok()) << process.status();
  ASSERT_TRUE((*process)->WaitForHealth(true, absl::Seconds(10)));
  ApiClient client((*process)->channel());
  client.CreatePool(TrainingPool("l40s-train", kL40s, 1, 8));
  const v1::PlacePlanResponse first = client.PlanUntil(
      PlanFor(Lora8b()),
      [](const v1::PlacePlanResponse& p) { return p.candidates_size() == 1; });
  // Once a commit has started, the next waits for the interval: this plan's
  // record stays queued while the lookups below run.
  {
    v1::GetPlanRequest get;
    get.set_plan_id(first.plan_id());
    v1::GetPlanResponse stored;
    const grpc::Status status =
        client.placement().GetPlan(Deadline(30).get(), get, &stored);
    ASSERT_TRUE(status.ok()) << status.error_message();
  }
  v1::PlacePlanResponse queued;
  ASSERT_TRUE(client.Plan(PlanFor(Lora8b()), &queued).ok());

  std::vector<std::thread> lookups;
  std::vector<grpc::Status> statuses(8);
  for (size_t i = 0; i < statuses.size(); ++i) {
    lookups.emplace_back([&, i] {
      v1::GetPlanRequest get;
      get.set_plan_id(testing::NewUuid());
      v1::GetPlanResponse stored;
      statuses[i] = client.placement().GetPlan(Deadline(5).get(), get, &stored);
    });
  }
  for (std::thread& t : lookups) t.join();
  for (const grpc::Status& status : statuses) {
    EXPECT_EQ(status.error_code(), grpc::StatusCode::NOT_FOUND)
        << status.error_message();
  }
  v1::GetPlanAccuracyRequest accuracy;
  v1::GetPlanAccuracyResponse report;
  const grpc::Status other =
      client.placement().GetPlanAccuracy(Deadline(5).get(), accuracy, &report);
  EXPECT_TRUE(other.ok()) << other.error_message();
  EXPECT_EQ((*process)->Stop(SIGTERM, absl::Seconds(15)), 0);
  EXPECT_EQ(db.QueryValue(absl::StrCat(
                "SELECT count(*) FROM placements WHERE plan_id = '",
                queued.plan_id(), "'")),
            "1");
}

}  // namespace
}  // namespace placement
