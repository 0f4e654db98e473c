// What uploaded runs teach across SKUs, through the public API on a real
// PostgreSQL: a recipe measured on L40S only gives the A100 candidate its
// peak memory (TRANSFERRED, naming L40S), and its A100 step time follows
// the A100 / L40S ratio learned from other recipes measured on both.
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "placement/v1/placement.grpc.pb.h"
#include "placement/v1/telemetry.grpc.pb.h"
#include "tests/support/api_client.h"
#include "tests/support/fixtures.h"
#include "tests/support/in_process_server.h"

namespace placement {
namespace {

using ::placement::testing::ApiClient;
using ::placement::testing::Candidate;
using ::placement::testing::Deadline;
using ::placement::testing::InProcessServer;
using ::placement::testing::PlanFor;
using ::placement::testing::SucceededRun;
using ::placement::testing::TrainingPool;

constexpr char kL40s[] = "L40S-PCIE-48GB";
constexpr char kA100[] = "A100-SXM4-80GB";

class FleetLearningTest : public ::testing::Test {
 protected:
  FleetLearningTest()
      : server_([](services::ServerOptions& options) {
          // Re-fit on every snapshot, so the test need not wait for it.
          options.fleet_refit_interval = absl::ZeroDuration();
        }),
        placement_(v1::PlacementService::NewStub(server_.channel())),
        telemetry_(v1::TelemetryService::NewStub(server_.channel())) {
    ApiClient client(server_.channel());
    for (const v1::Pool& pool : {TrainingPool("l40s", kL40s, 1, 4),
                                 TrainingPool("a100", kA100, 1, 8)}) {
      client.CreatePool(pool);
    }
  }

  // A single-GPU LoRA of `model` (no other recipe on the same SKU is a
  // nearby recipe of another model's: only the fleet model connects them).
  static v1::Recipe RecipeOf(const std::string& model) {
    v1::Recipe recipe = SucceededRun("l40s", kL40s).recipe();
    recipe.set_model(model);
    return recipe;
  }

  v1::PlacePlanResponse Plan(const v1::Recipe& recipe) {
    v1::PlacePlanResponse plan;
    grpc::Status status =
        placement_->PlacePlan(Deadline().get(), PlanFor(recipe), &plan);
    EXPECT_TRUE(status.ok()) << status.error_message();
    return plan;
  }

  // The analytic step time the planner gives `recipe` on `pool`.
  double PriorStepTime(const v1::Recipe& recipe, const std::string& pool) {
    const v1::PlacePlanResponse plan = Plan(recipe);  // outlives `c`
    const v1::PlacementCandidate* c = Candidate(plan, pool);
    EXPECT_NE(c, nullptr) << pool;
    return c != nullptr ? c->prior_step_time_s() : 0;
  }

  // Three succeeded runs of `recipe` on `pool` at `step_time_s`.
  void Upload(const v1::Recipe& recipe, const std::string& pool,
              const std::string& sku, double step_time_s, double peak_gb) {
    for (int i = 0; i < 3; ++i) {
      v1::UploadBenchmarkRunRequest request;
      v1::BenchmarkRun* run = request.mutable_run();
      *run = SucceededRun(pool, sku);
      *run->mutable_recipe() = recipe;
      const int64_t end = run->end_time().seconds();
      run->mutable_start_time()->set_seconds(
          end - static_cast<int64_t>(step_time_s * 1000));
      run->set_step_time_mean_seconds(step_time_s);
      run->set_step_time_p50_seconds(step_time_s);
      run->set_step_time_p95_seconds(step_time_s * 1.1);
      run->set_tokens_per_second(0);
      run->set_peak_memory_gb(peak_gb);
      v1::UploadBenchmarkRunResponse response;
      grpc::Status status =
          telemetry_->UploadBenchmarkRun(Deadline().get(), request, &response);
      ASSERT_TRUE(status.ok()) << status.error_message();
    }
  }

  // One succeeded run of `recipe` on `pool` per peak, at the analytic step
  // time; each reports the allocator's peaks too.
  void UploadPeaks(const v1::Recipe& recipe, const std::string& pool,
                   const std::string& sku, const std::vector<double>& peaks) {
    for (double peak_gb : peaks) {
      v1::UploadBenchmarkRunRequest request;
      v1::BenchmarkRun* run = request.mutable_run();
      *run = SucceededRun(pool, sku);
      *run->mutable_recipe() = recipe;
      run->set_peak_memory_gb(peak_gb);
      run->set_peak_memory_allocated_gb(peak_gb - 1.5);
      run->set_peak_memory_reserved_gb(peak_gb);
      v1::UploadBenchmarkRunResponse response;
      grpc::Status status =
          telemetry_->UploadBenchmarkRun(Deadline().get(), request, &response);
      ASSERT_TRUE(status.ok()) << status.error_message();
    }
  }

  InProcessServer server_;
  std::unique_ptr<v1::PlacementService::Stub> placement_;
  std::unique_ptr<v1::TelemetryService::Stub> telemetry_;
};

TEST_F(FleetLearningTest, L40sRunsTeachTheA100CandidateMemoryAndStepTime) {
  // Two other recipes measured on both cards: on A100 at half the analytic
  // step time, on L40S at the analytic step time (A100 / L40S = 0.5 x the
  // prior's ratio).
  for (const char* model : {"Llama-3.2-3B", "Mistral-7B"}) {
    const v1::Recipe other = RecipeOf(model);
    const double on_a100 = PriorStepTime(other, "a100");
    const double on_l40s = PriorStepTime(other, "l40s");
    ASSERT_GT(on_a100, 0);
    ASSERT_GT(on_l40s, 0);
    Upload(other, "a100", kA100, 0.5 * on_a100, 20);
    Upload(other, "l40s", kL40s, on_l40s, 20);
  }
  // The recipe asked for: measured on L40S only, at its analytic figure.
  const v1::Recipe recipe = RecipeOf("Llama-3.1-8B");
  const double prior_a100 = PriorStepTime(recipe, "a100");
  const double prior_l40s = PriorStepTime(recipe, "l40s");
  ASSERT_GT(prior_a100, 0);
  Upload(recipe, "l40s", kL40s, prior_l40s, 23.5);

  // The uploads (and the re-fit) reach the planner's snapshot.
  const v1::PlacementCandidate* a100 = nullptr;
  v1::PlacePlanResponse plan;
  for (int i = 0; i < 100; ++i) {
    plan = Plan(recipe);
    a100 = Candidate(plan, "a100");
    const v1::PlacementCandidate* l40s = Candidate(plan, "l40s");
    if (a100 != nullptr && l40s != nullptr &&
        l40s->basis() == v1::EVIDENCE_BASIS_MEASURED &&
        a100->basis() == v1::EVIDENCE_BASIS_TRANSFERRED &&
        a100->step_time_s() < 0.95 * a100->prior_step_time_s()) {
      break;
    }
    absl::SleepFor(absl::Milliseconds(50));
  }
  ASSERT_NE(a100, nullptr);
  const v1::PlacementCandidate* l40s = Candidate(plan, "l40s");
  ASSERT_NE(l40s, nullptr);
  EXPECT_EQ(l40s->basis(), v1::EVIDENCE_BASIS_MEASURED);

  // Memory: the L40S peak, named as such; not the analytic figure.
  EXPECT_EQ(a100->basis(), v1::EVIDENCE_BASIS_TRANSFERRED);
  EXPECT_EQ(a100->transferred_from_sku(), kL40s);
  EXPECT_EQ(a100->transferred_from_recipe_key(), plan.recipe_key());
  EXPECT_DOUBLE_EQ(a100->peak_memory_gb(), l40s->peak_memory_gb());
  EXPECT_NEAR(a100->peak_memory_gb(), 23.5, 0.06 * 23.5);
  bool named = false;
  for (const std::string& reason : a100->reasons()) {
    named |= absl::StrContains(
        reason, "TRANSFERRED from the same recipe measured on L40S-PCIE-48GB");
  }
  EXPECT_TRUE(named);

  // Step time: moved from the prior toward half of it (the ratio learned
  // from the two recipes measured on both cards; shrinkage toward the
  // prior and 19% wide histogram buckets keep it from 0.5 exactly).
  EXPECT_DOUBLE_EQ(a100->prior_step_time_s(), prior_a100);
  const double moved = a100->step_time_s() / prior_a100;
  EXPECT_LT(moved, 0.85);
  EXPECT_GT(moved, 0.4);
  EXPECT_LT(a100->step_time_s_band().low(), a100->step_time_s());
  EXPECT_GT(a100->step_time_s_band().high(), a100->step_time_s());
  bool fleet_reason = false;
  for (const std::string& reason : a100->reasons()) {
    fleet_reason |= absl::StrContains(reason, "from the fleet model") &&
                    absl::StrContains(reason, "this recipe measured on " +
                                                  std::string(kL40s));
  }
  EXPECT_TRUE(fleet_reason);
}

TEST_F(FleetLearningTest, MeasuredPeakComesBackExactlyNotAsABucketMiddle) {
  // 40.0 GB lies in the peak-memory histogram's bucket [35.9, 40.3) GB,
  // whose middle is 38.05 GB: read from the histogram it would come back 5%
  // low, on L40S (MEASURED) and on A100 (TRANSFERRED from L40S).
  const v1::Recipe recipe = RecipeOf("Llama-3.1-8B");
  UploadPeaks(recipe, "l40s", kL40s, {39.2, 40.0, 38.7});

  const v1::PlacementCandidate* a100 = nullptr;
  const v1::PlacementCandidate* l40s = nullptr;
  v1::PlacePlanResponse plan;
  for (int i = 0; i < 100; ++i) {
    plan = Plan(recipe);
    a100 = Candidate(plan, "a100");
    l40s = Candidate(plan, "l40s");
    if (a100 != nullptr && l40s != nullptr &&
        l40s->basis() == v1::EVIDENCE_BASIS_MEASURED &&
        l40s->evidence_runs() == 3 &&
        a100->basis() == v1::EVIDENCE_BASIS_TRANSFERRED) {
      break;
    }
    absl::SleepFor(absl::Milliseconds(50));
  }
  ASSERT_NE(l40s, nullptr);
  ASSERT_NE(a100, nullptr);
  EXPECT_EQ(l40s->basis(), v1::EVIDENCE_BASIS_MEASURED);
  EXPECT_EQ(l40s->peak_memory_gb(), 40.0);
  EXPECT_DOUBLE_EQ(l40s->peak_memory_gb_band().high(), 40.0 * 1.06);
  EXPECT_EQ(a100->basis(), v1::EVIDENCE_BASIS_TRANSFERRED);
  EXPECT_EQ(a100->transferred_from_sku(), kL40s);
  EXPECT_DOUBLE_EQ(a100->peak_memory_gb(), 40.0);

  // A fourth run peaking at 41.3 GB (bucket middle 42.7 GB) moves both.
  UploadPeaks(recipe, "l40s", kL40s, {41.3});
  for (int i = 0; i < 100; ++i) {
    plan = Plan(recipe);
    l40s = Candidate(plan, "l40s");
    if (l40s != nullptr && l40s->evidence_runs() == 4) break;
    absl::SleepFor(absl::Milliseconds(50));
  }
  ASSERT_NE(l40s, nullptr);
  EXPECT_EQ(l40s->peak_memory_gb(), 41.3);
  a100 = Candidate(plan, "a100");
  ASSERT_NE(a100, nullptr);
  EXPECT_DOUBLE_EQ(a100->peak_memory_gb(), 41.3);
}

}  // namespace
}  // namespace placement
