// A plan's bake-off tracked to its verdict through the public API only: a
// real placementd on a real PostgreSQL. Uploads that carry the plan's id,
// or run a proposed recipe key on its pool after the plan, complete its
// runs; once all are in, the verdict names the winner and the guide's
// findings (over-bought memory, offload as a miss). The runs are read from
// their columns, not their stored uploads.

#include <string>

#include "gmock/gmock.h"
#include "google/protobuf/util/message_differencer.h"
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
using ::placement::testing::NewUuid;
using ::placement::testing::PlanFor;
using ::placement::testing::TrainingPool;
using ::testing::HasSubstr;

constexpr char kL40s[] = "L40S-PCIE-48GB";
constexpr char kA100[] = "A100-SXM4-80GB";
constexpr char kH100[] = "H100-SXM5-80GB";

class BakeOffStatusTest : public EndToEndTest {
 protected:
  grpc::Status Status(const std::string& plan_id,
                      v1::GetBakeOffStatusResponse* response) {
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() +
                         std::chrono::seconds(10));
    v1::GetBakeOffStatusRequest request;
    request.set_plan_id(plan_id);
    return client_->placement().GetBakeOffStatus(&context, request, response);
  }

  v1::GetBakeOffStatusResponse StatusOk(const std::string& plan_id) {
    v1::GetBakeOffStatusResponse response;
    const grpc::Status status = Status(plan_id, &response);
    EXPECT_TRUE(status.ok()) << status.error_message();
    return response;
  }

  // Waits until the service's evidence includes the upload acknowledged
  // with `ack` (a plan asked with its evidence_version waits for it): the
  // pools' failure records a verdict reads come from that evidence.
  void AwaitEvidence(const v1::UploadBenchmarkRunResponse& ack) {
    v1::Recipe recipe = Lora8b();
    recipe.set_gpu_count(1);
    recipe.set_parallelism(v1::PARALLELISM_SINGLE);
    v1::PlacePlanRequest request = PlanFor(recipe, 200'000);
    request.set_min_evidence_version(ack.evidence_version());
    v1::PlacePlanResponse plan;
    ASSERT_TRUE(client_->Plan(request, &plan).ok());
  }

  // A run of the bake-off's `run`, as the plan configured it for its pool.
  ApiClient::TimedRun RunOf(const v1::PlacePlanResponse& plan,
                            const v1::BakeOffRun& run) {
    const v1::PlacementCandidate* candidate = Candidate(plan, run.pool());
    EXPECT_NE(candidate, nullptr);
    ApiClient::TimedRun timed;
    timed.pool = run.pool();
    timed.sku = run.sku();
    timed.recipe = candidate->recipe();
    timed.steps_attempted = run.steps();
    timed.steps_succeeded = run.steps();
    timed.step_s = 1.0;
    timed.startup_s = 120;
    return timed;
  }

  // Three unmeasured pools, the L40S cheapest by estimate (the A100 estimates
  // 1.2x faster than the L40S: at 1.3x its rate it is dearer): a long class
  // makes both runners-up worth a run.
  v1::PlacePlanResponse PlanProposingTwoRuns() {
    client_->CreatePool(TrainingPool("l40s", kL40s, 1, 8, 1'000'000));
    client_->CreatePool(TrainingPool("a100", kA100, 1, 8, 1'300'000));
    client_->CreatePool(TrainingPool("h100", kH100, 1, 8, 3'000'000));
    v1::Recipe recipe = Lora8b();
    recipe.set_gpu_count(1);
    recipe.set_parallelism(v1::PARALLELISM_SINGLE);
    return client_->PlanUntil(PlanFor(recipe, 200'000),
                              [](const v1::PlacePlanResponse& p) {
                                return p.candidates_size() == 3;
                              });
  }

  // The job itself on the plan's first choice, the L40S, needing CPU
  // offload to finish.
  void UploadOffloadedJob(const v1::PlacePlanResponse& plan) {
    ASSERT_EQ(plan.candidates(0).sku(), kL40s);
    ApiClient::TimedRun job;
    job.pool = plan.candidates(0).pool();
    job.sku = kL40s;
    job.recipe = plan.candidates(0).recipe();
    job.steps_attempted = job.steps_succeeded = 1000;
    job.step_s = 0.5;
    job.peak_gb = 47;
    job.offload = v1::OFFLOAD_CPU;
    job.plan_id = plan.plan_id();
    client_->UploadTimedRun(job);
  }
};

TEST_F(BakeOffStatusTest, MovesFromNoneToAllRunsAndGivesItsVerdict) {
  const v1::PlacePlanResponse plan = PlanProposingTwoRuns();
  ASSERT_TRUE(plan.has_bake_off());
  ASSERT_EQ(plan.bake_off().runs_size(), 2);

  const v1::GetBakeOffStatusResponse before = StatusOk(plan.plan_id());
  EXPECT_TRUE(before.proposed());
  EXPECT_EQ(before.runs_complete(), 0);
  EXPECT_EQ(before.runs_total(), 2);
  EXPECT_EQ(before.progress(), "0 of 2 complete");
  EXPECT_FALSE(before.complete());
  EXPECT_FALSE(before.has_verdict());

  // The first proposed run carries the plan's id and over-buys its card:
  // 30 GB peak of 80 GB.
  const v1::BakeOffRun& first = plan.bake_off().runs(0);
  const v1::BakeOffRun& second = plan.bake_off().runs(1);
  ASSERT_NE(first.sku(), kL40s);
  ApiClient::TimedRun first_run = RunOf(plan, first);
  first_run.plan_id = plan.plan_id();
  first_run.peak_gb = 30;
  client_->UploadTimedRun(first_run);
  // A run of another recipe on the second pool does not count.
  ApiClient::TimedRun unrelated = RunOf(plan, second);
  unrelated.recipe.set_lora_rank(64);
  client_->UploadTimedRun(unrelated);
  const v1::GetBakeOffStatusResponse halfway = StatusOk(plan.plan_id());
  EXPECT_EQ(halfway.progress(), "1 of 2 complete");
  EXPECT_FALSE(halfway.complete());
  ASSERT_EQ(halfway.runs_size(), 2);
  ASSERT_EQ(halfway.runs(0).uploads_size(), 1);
  EXPECT_TRUE(halfway.runs(0).uploads(0).carries_plan_id());
  EXPECT_EQ(halfway.runs(1).uploads_size(), 0);
  EXPECT_THAT(halfway.reason(), HasSubstr(second.pool()));

  // The second matches by its recipe key on its pool, without the plan id,
  // at a fifth of the first's GPU time per step and a tight peak.
  ApiClient::TimedRun second_run = RunOf(plan, second);
  second_run.step_s = 0.2;
  second_run.startup_s = 0;
  second_run.peak_gb = 70;
  client_->UploadTimedRun(second_run);

  // The job itself ran on the plan's first choice and needed CPU offload:
  // not a proposed run, but judged.
  UploadOffloadedJob(plan);

  const v1::GetBakeOffStatusResponse done = StatusOk(plan.plan_id());
  EXPECT_EQ(done.progress(), "2 of 2 complete");
  EXPECT_TRUE(done.complete());
  ASSERT_TRUE(done.has_verdict());
  EXPECT_EQ(done.verdict().winner_pool(), second.pool());
  ASSERT_EQ(done.verdict().pools_size(), 3);
  const v1::BakeOffPoolVerdict* judged_first = nullptr;
  for (const v1::BakeOffPoolVerdict& p : done.verdict().pools()) {
    if (p.pool() == first.pool()) judged_first = &p;
  }
  ASSERT_NE(judged_first, nullptr);
  EXPECT_TRUE(judged_first->over_bought());
  EXPECT_NEAR(judged_first->idle_memory_gb(), 50, 0.5);
  EXPECT_THAT(judged_first->findings(),
              ::testing::Contains(HasSubstr("50 GB idle")));
  const v1::BakeOffPoolVerdict& offloaded = done.verdict().pools(2);
  EXPECT_EQ(offloaded.pool(), "l40s");
  EXPECT_TRUE(offloaded.first_choice());
  EXPECT_TRUE(offloaded.offload_miss());
  EXPECT_FALSE(offloaded.eligible());
  EXPECT_THAT(offloaded.findings(),
              ::testing::Contains(HasSubstr("did not fit")));
  const v1::BakeOffPoolVerdict& winner = done.verdict().pools(0);
  EXPECT_EQ(winner.pool(), second.pool());
  EXPECT_GT(winner.cost_micros_per_successful_step(), 0);
  EXPECT_LE(winner.cost_micros_per_successful_step_band().low(),
            winner.cost_micros_per_successful_step());
  EXPECT_GE(winner.cost_micros_per_successful_step_band().high(),
            winner.cost_micros_per_successful_step());
  EXPECT_THAT(done.verdict().summary(), HasSubstr(second.pool() + " wins"));
}

// A stored upload is as large as the message limit allows (unknown fields
// are kept), and a bake-off may match 300 of them: GetBakeOffStatus (and
// WriteStandard, which reads the same) reads the runs' columns instead,
// their failure reasons from run_failure_reasons. With every stored upload
// replaced by bytes that do not even parse, it answers the same. A failed
// run whose reason has no row (stored before migration 0025) has its reason
// read from its upload, which is small, and so are its retries' causes
// when benchmark_runs holds none for it (stored before migration 0022).
TEST_F(BakeOffStatusTest, ReadsTheRunsColumnsNotTheirUploads) {
  const v1::PlacePlanResponse plan = PlanProposingTwoRuns();
  ASSERT_EQ(plan.bake_off().runs_size(), 2);
  ApiClient::TimedRun failed = RunOf(plan, plan.bake_off().runs(0));
  failed.plan_id = plan.plan_id();
  failed.outcome = v1::RUN_OUTCOME_OUT_OF_MEMORY;
  failed.steps_succeeded = 0;
  failed.failure_reason = "attempt 3 OUT_OF_MEMORY: CUDA out of memory";
  failed.retries = 2;
  failed.retry_outcomes = {v1::RUN_OUTCOME_PREEMPTED,
                           v1::RUN_OUTCOME_HARDWARE_ERROR};
  client_->UploadTimedRun(failed);
  AwaitEvidence(client_->UploadTimedRun(RunOf(plan, plan.bake_off().runs(1))));
  const v1::GetBakeOffStatusResponse before = StatusOk(plan.plan_id());
  ASSERT_EQ(before.runs(0).uploads_size(), 1);
  EXPECT_EQ(before.runs(0).uploads(0).failure_reason(), failed.failure_reason);
  EXPECT_EQ(before.runs(0).uploads(0).retries(), 2);
  EXPECT_EQ(db_.QueryValue("SELECT count(*) FROM run_failure_reasons"), "1");
  EXPECT_EQ(db_.QueryValue("SELECT array_to_string(retry_outcomes, ',') "
                           "FROM benchmark_runs WHERE outcome <> 'SUCCEEDED'"),
            "PREEMPTED,HARDWARE_ERROR");

  db_.Execute(
      "CREATE TABLE kept_uploads AS SELECT run_id, upload FROM benchmark_runs;"
      "UPDATE benchmark_runs SET upload = '\\xff'");
  v1::GetBakeOffStatusResponse unread = StatusOk(plan.plan_id());
  EXPECT_TRUE(
      google::protobuf::util::MessageDifferencer::Equals(before, unread))
      << before.DebugString() << "\n"
      << unread.DebugString();

  // Stored before migrations 0022 and 0025: the reason and the retries'
  // causes are in the failed run's upload.
  db_.Execute(
      "UPDATE benchmark_runs b SET upload = k.upload, retry_outcomes = NULL "
      "FROM kept_uploads k "
      "WHERE b.run_id = k.run_id AND b.outcome <> 'SUCCEEDED';"
      "DELETE FROM run_failure_reasons");
  v1::GetBakeOffStatusResponse from_upload = StatusOk(plan.plan_id());
  EXPECT_TRUE(
      google::protobuf::util::MessageDifferencer::Equals(before, from_upload))
      << before.DebugString() << "\n"
      << from_upload.DebugString();
}

// Each pool is judged by the planner's cost of the plan's job, not by its
// runs' GPU-hours over their steps: a 50-step measurement carrying a whole
// start-up used to lose to the first choice's long job though every one of
// its steps was cheaper. Only runs of the recipe key the plan chose count.
TEST_F(BakeOffStatusTest, AShortMeasurementCheaperPerStepBeatsTheLongJob) {
  const v1::PlacePlanResponse plan = PlanProposingTwoRuns();
  ASSERT_EQ(plan.bake_off().runs_size(), 2);
  ASSERT_EQ(plan.candidates(0).sku(), kL40s);
  // The job on the first choice: 5,000 steps of 1 s after 300 s.
  ApiClient::TimedRun job;
  job.pool = plan.candidates(0).pool();
  job.sku = kL40s;
  job.recipe = plan.candidates(0).recipe();
  job.steps_attempted = job.steps_succeeded = 5000;
  job.step_s = 1;
  job.startup_s = 300;
  job.peak_gb = 40;
  job.plan_id = plan.plan_id();
  client_->UploadTimedRun(job);
  // Measurements: 50 steps of 0.25 s after 300 s on the first proposed pool
  // (6.25 s of GPU time per kept step as it ran; per step of a long job
  // 0.25 s at three times the first choice's rate, 0.75 of its cost), and
  // a slow one on the other.
  const v1::BakeOffRun& quick = plan.bake_off().runs(0);
  ApiClient::TimedRun measured = RunOf(plan, quick);
  measured.steps_attempted = measured.steps_succeeded = 50;
  measured.step_s = 0.25;
  measured.startup_s = 300;
  measured.peak_gb = 60;
  client_->UploadTimedRun(measured);
  ApiClient::TimedRun slow = RunOf(plan, plan.bake_off().runs(1));
  slow.step_s = 5;
  slow.peak_gb = 60;
  client_->UploadTimedRun(slow);

  const v1::GetBakeOffStatusResponse done = StatusOk(plan.plan_id());
  ASSERT_TRUE(done.has_verdict());
  const v1::BakeOffVerdict& verdict = done.verdict();
  EXPECT_EQ(verdict.projected_steps(), 200'000);
  EXPECT_EQ(verdict.winner_pool(), quick.pool()) << verdict.summary();
  EXPECT_TRUE(verdict.decisive()) << verdict.summary();
  const v1::BakeOffPoolVerdict& winner = verdict.pools(0);
  EXPECT_TRUE(winner.measured());
  // As it ran it looks dearer per step than the job did; per step of the
  // plan's job it is cheaper.
  EXPECT_GT(winner.observed().gpu_hours_per_successful_step(),
            verdict.pools(1).observed().gpu_hours_per_successful_step());
  EXPECT_NEAR(winner.startup_gpu_hours(), 300.0 / 3600, 300.0 / 3600 * 0.1);
}

// A verdict needs every pool it compares measured: a first choice with no
// upload is judged "not measured", not dropped, and one measured pool is
// not decisive.
TEST_F(BakeOffStatusTest, AnUnmeasuredFirstChoiceKeepsTheVerdictOpen) {
  const v1::PlacePlanResponse plan = PlanProposingTwoRuns();
  for (const v1::BakeOffRun& run : plan.bake_off().runs()) {
    client_->UploadTimedRun(RunOf(plan, run));
  }
  const v1::GetBakeOffStatusResponse done = StatusOk(plan.plan_id());
  ASSERT_TRUE(done.has_verdict());
  EXPECT_FALSE(done.verdict().decisive());
  ASSERT_EQ(done.verdict().pools_size(), 3);
  EXPECT_THAT(done.verdict().missing(),
              ::testing::Contains(
                  HasSubstr(plan.candidates(0).pool() + " has no run")));
}

TEST_F(BakeOffStatusTest, APlanWithoutABakeOffIsCompleteAtZeroOfZero) {
  client_->CreatePool(TrainingPool("l40s", kL40s, 1, 8, 1'000'000));
  v1::Recipe recipe = Lora8b();
  recipe.set_gpu_count(1);
  recipe.set_parallelism(v1::PARALLELISM_SINGLE);
  v1::PlacePlanResponse plan;
  ASSERT_TRUE(client_->Plan(PlanFor(recipe, 100), &plan).ok());
  ASSERT_FALSE(plan.has_bake_off());
  const v1::GetBakeOffStatusResponse status = StatusOk(plan.plan_id());
  EXPECT_FALSE(status.proposed());
  EXPECT_TRUE(status.complete());
  EXPECT_EQ(status.progress(), "0 of 0 complete");
  EXPECT_THAT(status.reason(), HasSubstr("no bake-off proposed"));
}

TEST_F(BakeOffStatusTest, UnknownAndMalformedPlanIds) {
  v1::GetBakeOffStatusResponse response;
  EXPECT_EQ(Status(NewUuid(), &response).error_code(),
            grpc::StatusCode::NOT_FOUND);
  EXPECT_EQ(Status("not-a-uuid", &response).error_code(),
            grpc::StatusCode::INVALID_ARGUMENT);
}

}  // namespace
}  // namespace placement
