// The decision policy end to end, through the public API only: a real
// placementd on a real PostgreSQL. A measured layout projects one start-up
// and its busy step time to the job's steps; failures price a pool through
// its failure rate instead of banning it; a measurement run is proposed
// only when it pays for itself; a failed run's checkpointed steps count.

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "placement/v1/placement.grpc.pb.h"
#include "tests/support/api_client.h"
#include "tests/support/end_to_end_test.h"
#include "tests/support/fixtures.h"

namespace placement {
namespace {

using ::placement::testing::ApiClient;
using ::placement::testing::Candidate;
using ::placement::testing::EndToEndTest;
using ::placement::testing::Lora8b;
using ::placement::testing::Measured;
using ::placement::testing::MeasuredRun;
using ::placement::testing::OneGpu;
using ::placement::testing::PlanFor;
using ::placement::testing::TrainingPool;
using ::testing::HasSubstr;

constexpr char kL40s[] = "L40S-PCIE-48GB";
constexpr char kA100[] = "A100-SXM4-80GB";

class DecisionsTest : public EndToEndTest {};

// A 300-step measurement with 3 minutes of start-up projects the same cost
// for a 10,000-step job as a 10,000-step run of the layout does.
TEST_F(DecisionsTest, AShortAndALongRunProjectTheSameCostPerStep) {
  client_->CreatePool(TrainingPool("l40s", kL40s, 1, 8, 1'000'000));
  const v1::Recipe recipe = OneGpu(Lora8b());
  client_->UploadTimedRun(MeasuredRun("l40s", kL40s, recipe, 300, 1.2, 180));
  const v1::PlacePlanResponse after_short =
      client_->PlanUntil(PlanFor(recipe), Measured("l40s", 1));
  const v1::PlacementCandidate* s = Candidate(after_short, "l40s");
  ASSERT_NE(s, nullptr);
  EXPECT_TRUE(s->startup_measured());
  EXPECT_NEAR(s->startup_gpu_hours(), 180.0 / 3600, 1e-3);
  EXPECT_NEAR(s->step_gpu_hours(), 1.2 / 3600, 1e-8);
  // One start-up and 10,000 steps at 1.00 a GPU-hour, and the small
  // rework the failure prior expects.
  const double job = (180 + 10'000 * 1.2) / 3600;
  EXPECT_NEAR(s->expected_cost_micros() / 1e6, job, 0.01 * job);

  client_->UploadTimedRun(MeasuredRun("l40s", kL40s, recipe, 10'000, 1.2, 180));
  const v1::PlacePlanResponse after_long =
      client_->PlanUntil(PlanFor(recipe), Measured("l40s", 2));
  const v1::PlacementCandidate* l = Candidate(after_long, "l40s");
  ASSERT_NE(l, nullptr);
  EXPECT_NEAR(static_cast<double>(l->expected_cost_micros()),
              static_cast<double>(s->expected_cost_micros()),
              0.01 * static_cast<double>(s->expected_cost_micros()));
}

TEST_F(DecisionsTest, OnePreemptedRunDoesNotBanAPool) {
  client_->CreatePool(TrainingPool("l40s", kL40s, 1, 8, 1'000'000));
  const v1::Recipe recipe = OneGpu(Lora8b());
  ApiClient::TimedRun preempted =
      MeasuredRun("l40s", kL40s, recipe, 200, 1.2, 180);
  preempted.steps_succeeded = 0;  // before its first checkpoint
  preempted.outcome = v1::RUN_OUTCOME_PREEMPTED;
  client_->UploadTimedRun(preempted);
  const v1::PlacePlanResponse plan =
      client_->PlanUntil(PlanFor(recipe), [](const v1::PlacePlanResponse& p) {
        const v1::PlacementCandidate* c = Candidate(p, "l40s");
        return c != nullptr && c->failure_rate().failures() == 1;
      });
  EXPECT_EQ(plan.rejections_size(), 0);
  const v1::PlacementCandidate* l40s = Candidate(plan, "l40s");
  ASSERT_NE(l40s, nullptr);
  EXPECT_EQ(l40s->rank(), 1);
  EXPECT_GT(l40s->failure_rate().per_hour(), 0);
  EXPECT_LT(l40s->failure_rate().per_hour_band().low(),
            l40s->failure_rate().per_hour());
  EXPECT_GT(l40s->failure_rate().per_hour_band().high(),
            l40s->failure_rate().per_hour());
  EXPECT_GT(l40s->rework_gpu_hours(), 0);
}

// Hardware errors belong to the pool, whatever recipe met them.
TEST_F(DecisionsTest, APoolWithManyHardwareErrorsRanksAfterAHealthyOne) {
  client_->CreatePool(TrainingPool("l40s-flaky", kL40s, 1, 8, 1'000'000));
  client_->CreatePool(TrainingPool("l40s-steady", kL40s, 1, 8, 1'000'000));
  v1::Recipe other = OneGpu(Lora8b());
  other.set_lora_rank(64);
  for (int i = 0; i < 8; ++i) {
    ApiClient::TimedRun failed =
        MeasuredRun("l40s-flaky", kL40s, other, 3000, 1.2, 180);
    failed.steps_succeeded = 1500;  // kept by its checkpoint
    failed.outcome = v1::RUN_OUTCOME_HARDWARE_ERROR;
    client_->UploadTimedRun(failed);
    client_->UploadTimedRun(
        MeasuredRun("l40s-steady", kL40s, other, 3000, 1.2, 180));
  }
  const v1::Recipe asked = OneGpu(Lora8b());
  const v1::PlacePlanResponse plan =
      client_->PlanUntil(PlanFor(asked), [](const v1::PlacePlanResponse& p) {
        const v1::PlacementCandidate* c = Candidate(p, "l40s-flaky");
        return c != nullptr && c->failure_rate().failures() == 8;
      });
  ASSERT_EQ(plan.candidates_size(), 2);
  EXPECT_EQ(plan.candidates(0).pool(), "l40s-steady");
  const v1::PlacementCandidate& flaky = plan.candidates(1);
  EXPECT_EQ(flaky.pool(), "l40s-flaky");
  EXPECT_TRUE(flaky.failure_rate().lost_hours_measured());
  EXPECT_GT(flaky.rework_gpu_hours(), 0.05 * flaky.expected_gpu_hours());
}

// A close, unmeasured runner-up is not worth a run for one short job, and is
// once the fleet has run the recipe class for long.
TEST_F(DecisionsTest, AMeasurementRunIsProposedOnlyWhenItPays) {
  client_->CreatePool(TrainingPool("a100", kA100, 1, 8, 2'000'000));
  client_->CreatePool(TrainingPool("l40s", kL40s, 1, 8, 1'000'000));
  const v1::Recipe recipe = OneGpu(Lora8b());
  // The A100 (at twice the rate) measured 3% cheaper than the L40S's
  // estimate, start-up included: the L40S may still win, within its band.
  const v1::PlacePlanResponse prior = client_->PlanUntil(
      PlanFor(recipe, 1000),
      [](const v1::PlacePlanResponse& p) { return p.candidates_size() == 2; });
  const v1::PlacementCandidate* l40s_prior = Candidate(prior, "l40s");
  ASSERT_NE(l40s_prior, nullptr);
  const double a100_step_s =
      (0.97 * (180 + 1000 * l40s_prior->step_time_s()) / 2 - 180) / 1000;
  client_->UploadTimedRun(
      MeasuredRun("a100", kA100, recipe, 1000, a100_step_s, 180));
  const v1::PlacePlanResponse one_job =
      client_->PlanUntil(PlanFor(recipe, 1000), Measured("a100", 1));
  ASSERT_EQ(one_job.candidates(0).pool(), "a100");
  EXPECT_FALSE(one_job.has_bake_off());
  EXPECT_THAT(Candidate(one_job, "l40s")->reasons(),
              ::testing::Contains(HasSubstr("not worth measuring")));

  // Forty jobs of the class later, the same question is worth a run.
  for (int i = 0; i < 40; ++i) {
    client_->UploadTimedRun(
        MeasuredRun("a100", kA100, recipe, 1000, a100_step_s, 180));
  }
  const v1::PlacePlanResponse many_jobs =
      client_->PlanUntil(PlanFor(recipe, 1000), Measured("a100", 41));
  ASSERT_TRUE(many_jobs.has_bake_off());
  ASSERT_EQ(many_jobs.bake_off().runs_size(), 1);
  const v1::BakeOffRun& run = many_jobs.bake_off().runs(0);
  EXPECT_EQ(run.pool(), "l40s");
  EXPECT_GE(run.steps(), 50);
  EXPECT_LT(run.steps(), 1000);
  EXPECT_GT(run.expected_saving_micros(), run.cost_micros());
  EXPECT_GE(many_jobs.bake_off().expected_demand_steps(), 41'000);
  EXPECT_THAT(run.reason(), HasSubstr("expected to save"));
}

// Steps a failed run kept by its checkpoints are successful steps.
TEST_F(DecisionsTest, CheckpointedStepsOfAFailedRunCount) {
  client_->CreatePool(TrainingPool("l40s", kL40s, 1, 8, 1'000'000));
  const v1::Recipe recipe = OneGpu(Lora8b());
  ApiClient::TimedRun failed = MeasuredRun("l40s", kL40s, recipe, 1000, 3.6, 0);
  failed.steps_succeeded = 900;
  failed.outcome = v1::RUN_OUTCOME_HARDWARE_ERROR;
  client_->UploadTimedRun(failed);
  const v1::PlacePlanResponse plan =
      client_->PlanUntil(PlanFor(recipe), Measured("l40s", 1));
  const v1::PlacementCandidate* l40s = Candidate(plan, "l40s");
  ASSERT_NE(l40s, nullptr);
  EXPECT_EQ(l40s->basis(), v1::EVIDENCE_BASIS_MEASURED);
  // Busy time per step attempted, failures priced apart.
  EXPECT_NEAR(l40s->step_gpu_hours(), 3.6 / 3600, 1e-8);
  EXPECT_EQ(l40s->failure_rate().failures(), 1);
}

}  // namespace
}  // namespace placement
