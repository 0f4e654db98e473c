// Standards end to end, through the public API only: a real placementd on a
// real PostgreSQL. A standard is refused until the plan's bake-off is
// complete, its pool measured and judged on the planner's cost, and its
// eval requirement met under the pool's criteria, and accepted after (a
// retry of a committed write answers the standard); a plan under it ranks
// its pool first, warns once measured runs make another pool cheaper beyond
// both bands, and stops applying it once it is retired.

#include <string>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "placement/v1/catalog.grpc.pb.h"
#include "placement/v1/placement.grpc.pb.h"
#include "placement/v1/telemetry.grpc.pb.h"
#include "storage/schema/migrations.h"
#include "tests/support/api_client.h"
#include "tests/support/end_to_end_test.h"
#include "tests/support/fixtures.h"
#include "tests/support/metrics_scrape.h"
#include "tests/support/placementd_process.h"
#include "tests/support/test_database.h"

namespace placement {
namespace {

using ::placement::testing::ApiClient;
using ::placement::testing::Candidate;
using ::placement::testing::Deadline;
using ::placement::testing::EndToEndTest;
using ::placement::testing::Lora8b;
using ::placement::testing::PlacementdProcess;
using ::placement::testing::PlanFor;
using ::placement::testing::PreconditionTypes;
using ::placement::testing::TestDatabase;
using ::placement::testing::TrainingPool;
using ::testing::Contains;
using ::testing::HasSubstr;

constexpr char kL40s[] = "L40S-PCIE-48GB";
constexpr char kA100[] = "A100-SXM4-80GB";
constexpr char kH100[] = "H100-SXM5-80GB";

class StandardsTest : public EndToEndTest {
 protected:
  void SetUp() override {
    ASSERT_NO_FATAL_FAILURE(EndToEndTest::SetUp());
    client_->CreatePool(TrainingPool("l40s", kL40s, 1, 8, 1'000'000));
    client_->CreatePool(TrainingPool("a100", kA100, 1, 8, 1'300'000));
    client_->CreatePool(TrainingPool("h100", kH100, 1, 8, 3'000'000));
  }

  static v1::PlacePlanRequest Request() {
    v1::Recipe recipe = Lora8b();
    recipe.set_gpu_count(1);
    recipe.set_parallelism(v1::PARALLELISM_SINGLE);
    v1::PlacePlanRequest request = PlanFor(recipe, 200'000);
    // Served on the L40S in FP8: the plan requires an eval there.
    request.mutable_serving()->set_sku(kL40s);
    request.mutable_serving()->set_precision(v1::PRECISION_FP8);
    return request;
  }

  grpc::Status Write(const std::string& request_id, const std::string& plan_id,
                     const std::string& pool, const std::string& reason,
                     v1::WriteStandardResponse* response) {
    v1::WriteStandardRequest request;
    request.set_request_id(request_id);
    request.set_plan_id(plan_id);
    request.set_pool(pool);
    request.set_reason(reason);
    return client_->placement().WriteStandard(Deadline().get(), request,
                                              response);
  }

  // A run of `pool`'s configuration in `plan` (its candidate's recipe),
  // `step_s` a step, peaking at 60 GB.
  ApiClient::TimedRun RunOn(const v1::PlacePlanResponse& plan,
                            const std::string& pool, double step_s) {
    const v1::PlacementCandidate* candidate = Candidate(plan, pool);
    EXPECT_NE(candidate, nullptr);
    ApiClient::TimedRun run;
    run.pool = pool;
    run.sku = candidate->sku();
    run.recipe = candidate->recipe();
    run.steps_attempted = run.steps_succeeded = 500;
    run.step_s = step_s;
    run.startup_s = 60;
    run.peak_gb = 40;
    return run;
  }

  // The plan, with its bake-off (a100 and h100) carried out: the A100 the
  // cheaper of the two.
  v1::PlacePlanResponse PlanWithCompleteBakeOff() {
    v1::PlacePlanResponse plan =
        client_->PlanUntil(Request(), [](const v1::PlacePlanResponse& p) {
          return p.candidates_size() == 3;
        });
    EXPECT_TRUE(plan.has_bake_off());
    for (const v1::BakeOffRun& run : plan.bake_off().runs()) {
      ApiClient::TimedRun timed =
          RunOn(plan, run.pool(), run.pool() == "a100" ? 0.5 : 1.5);
      timed.plan_id = plan.plan_id();
      client_->UploadTimedRun(timed);
    }
    return plan;
  }

  // An eval of `pool`'s configuration on the serving SKU and precision.
  void UploadEval(const v1::PlacePlanResponse& plan, const std::string& pool,
                  double mmlu = 0.61) {
    ApiClient::TimedRun run = RunOn(plan, pool, 0.5);
    v1::EvalResult eval;
    eval.set_serving_sku(kL40s);
    eval.set_serving_precision(v1::PRECISION_FP8);
    eval.set_metric_name("mmlu");
    eval.set_score(mmlu);
    run.evals.push_back(eval);
    client_->UploadTimedRun(run);
  }
};

TEST_F(StandardsTest, IsRefusedBeforeProofAndAcceptedAfter) {
  v1::PlacePlanResponse plan = client_->PlanUntil(
      Request(),
      [](const v1::PlacePlanResponse& p) { return p.candidates_size() == 3; });
  ASSERT_TRUE(plan.has_bake_off());
  ASSERT_FALSE(plan.eval_requirement().empty());
  v1::WriteStandardResponse response;

  // Before its bake-off: refused, naming what is missing.
  grpc::Status refused =
      Write("k1", plan.plan_id(), "a100", "cheapest", &response);
  EXPECT_EQ(refused.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_THAT(PreconditionTypes(refused), Contains("BAKE_OFF_INCOMPLETE"));
  EXPECT_THAT(PreconditionTypes(refused), Contains("EVAL_MISSING"));
  EXPECT_THAT(refused.error_message(), HasSubstr("0 of 2 complete"));
  // A pool the plan did not rank is never provable by it.
  refused = Write("k2", plan.plan_id(), "nowhere", "x", &response);
  EXPECT_EQ(refused.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_THAT(PreconditionTypes(refused), Contains("POOL_NOT_A_CANDIDATE"));

  // The bake-off done, the eval still missing.
  for (const v1::BakeOffRun& run : plan.bake_off().runs()) {
    ApiClient::TimedRun timed = RunOn(plan, run.pool(), 0.5);
    timed.plan_id = plan.plan_id();
    client_->UploadTimedRun(timed);
  }
  refused = Write("k1", plan.plan_id(), "a100", "cheapest", &response);
  EXPECT_EQ(refused.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_THAT(PreconditionTypes(refused),
              ::testing::ElementsAre("EVAL_MISSING"));

  // With the eval on the serving SKU: written, and a retry returns it.
  UploadEval(plan, "a100");
  ASSERT_TRUE(Write("k1", plan.plan_id(), "a100", "cheapest", &response).ok());
  const v1::Standard& standard = response.standard();
  EXPECT_EQ(standard.pool(), "a100");
  EXPECT_EQ(standard.sku(), kA100);
  EXPECT_EQ(standard.plan_id(), plan.plan_id());
  EXPECT_TRUE(standard.active());
  EXPECT_EQ(standard.recipe_class().model(), plan.recipe().model());
  EXPECT_EQ(standard.recipe_class().lora_rank(), 16);
  EXPECT_EQ(standard.recipe_class().gpu_count(), 0);  // the layout is open
  EXPECT_GT(standard.cost_micros_per_successful_step_band().high(), 0);
  v1::WriteStandardResponse again;
  ASSERT_TRUE(Write("k1", plan.plan_id(), "a100", "cheapest", &again).ok());
  EXPECT_EQ(again.standard().standard_id(), standard.standard_id());
  EXPECT_EQ(
      Write("k1", plan.plan_id(), "a100", "other words", &again).error_code(),
      grpc::StatusCode::ALREADY_EXISTS);

  v1::GetStandardRequest get;
  get.set_standard_id(standard.standard_id());
  v1::GetStandardResponse got;
  ASSERT_TRUE(
      client_->placement().GetStandard(Deadline().get(), get, &got).ok());
  EXPECT_EQ(got.standard().reason(), "cheapest");
  v1::ListStandardsResponse listed;
  ASSERT_TRUE(
      client_->placement().ListStandards(Deadline().get(), {}, &listed).ok());
  ASSERT_EQ(listed.standards_size(), 1);
}

TEST_F(StandardsTest, RanksItsPoolFirstWarnsWhenContradictedAndStopsOnRetire) {
  // A second replica on the same database learns of standards as it learns
  // of pools: by notification, without a database read per plan.
  auto other_process = PlacementdProcess::Start(db_.url());
  ASSERT_TRUE(other_process.ok()) << other_process.status();
  ASSERT_TRUE((*other_process)->WaitForHealth(true, absl::Seconds(10)));
  ApiClient other((*other_process)->channel());
  const v1::PlacePlanResponse plan = PlanWithCompleteBakeOff();
  UploadEval(plan, "a100");
  v1::WriteStandardResponse written;
  ASSERT_TRUE(
      Write("std-1", plan.plan_id(), "a100", "won the bake-off", &written)
          .ok());
  const std::string id = written.standard().standard_id();

  // The writing replica's next plan applies it: a100 first.
  v1::PlacePlanResponse under;
  ASSERT_TRUE(client_->Plan(Request(), &under).ok());
  ASSERT_TRUE(under.has_standard());
  EXPECT_EQ(under.standard().standard_id(), id);
  EXPECT_TRUE(under.standard().applied());
  EXPECT_FALSE(under.standard().contradicted());
  EXPECT_EQ(under.candidates(0).pool(), "a100");
  EXPECT_EQ(under.candidates(0).rank(), 1);
  const v1::PlacePlanResponse elsewhere =
      other.PlanUntil(Request(), [&](const v1::PlacePlanResponse& p) {
        return p.has_standard() && p.standard().standard_id() == id;
      });
  EXPECT_EQ(elsewhere.candidates(0).pool(), "a100");

  // Measured runs make the L40S far cheaper: still first, with a warning.
  for (int i = 0; i < 5; ++i) {
    client_->UploadTimedRun(RunOn(plan, "l40s", 0.05));
  }
  const v1::PlacePlanResponse contradicted =
      client_->PlanUntil(Request(), [](const v1::PlacePlanResponse& p) {
        return p.has_standard() && p.standard().contradicted();
      });
  EXPECT_EQ(contradicted.candidates(0).pool(), "a100");
  EXPECT_THAT(contradicted.standard().contradictions(0),
              HasSubstr("l40s measured cheaper beyond both bands"));
  EXPECT_THAT(contradicted.warnings(),
              Contains(HasSubstr("standard_contradicted")));
  EXPECT_THAT(
      testing::ScrapeMetrics(placementd_->metrics_port()),
      HasSubstr("placement_standard_contradicted_total{pool=\"a100\"}"));

  // Retired: plans stop applying it.
  v1::RetireStandardRequest retire;
  retire.set_standard_id(id);
  retire.set_reason("the graphs say otherwise");
  v1::RetireStandardResponse retired;
  ASSERT_TRUE(client_->placement()
                  .RetireStandard(Deadline().get(), retire, &retired)
                  .ok());
  EXPECT_FALSE(retired.standard().active());
  EXPECT_EQ(retired.standard().retire_reason(), "the graphs say otherwise");
  v1::PlacePlanResponse after;
  ASSERT_TRUE(client_->Plan(Request(), &after).ok());
  EXPECT_FALSE(after.has_standard());
  EXPECT_EQ(after.candidates(0).pool(), "l40s");
  other.PlanUntil(Request(), [](const v1::PlacePlanResponse& p) {
    return !p.has_standard();
  });
}

// A plan that proposed no bake-off used to be "complete, 0 of 0", so any
// candidate it ranked, never measured, could become a standard "proven by
// its bake-off". Now the pool needs measured runs of the plan's recipe and
// layout, judged on the planner's cost.
TEST_F(StandardsTest, APoolNeverMeasuredIsNotProvenByAPlanWithoutBakeOff) {
  v1::Recipe recipe = Lora8b();
  recipe.set_gpu_count(1);
  recipe.set_parallelism(v1::PARALLELISM_SINGLE);
  // A job too short for any measurement run to pay.
  const v1::PlacePlanResponse plan = client_->PlanUntil(
      PlanFor(recipe, 50),
      [](const v1::PlacePlanResponse& p) { return p.candidates_size() == 3; });
  ASSERT_FALSE(plan.has_bake_off());
  const std::string last = plan.candidates(2).pool();
  v1::WriteStandardResponse response;
  grpc::Status refused = Write("never", plan.plan_id(), last, "x", &response);
  EXPECT_EQ(refused.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_THAT(PreconditionTypes(refused),
              ::testing::ElementsAre("MEASURED_RUNS_MISSING"));
  // A run of another layout naming the plan measures something else.
  ApiClient::TimedRun other = RunOn(plan, last, 0.5);
  other.recipe.set_lora_rank(64);
  other.plan_id = plan.plan_id();
  client_->UploadTimedRun(other);
  refused = Write("never", plan.plan_id(), last, "x", &response);
  EXPECT_THAT(PreconditionTypes(refused),
              ::testing::ElementsAre("MEASURED_RUNS_MISSING"));
  // Its own layout measured, and cheapest per step of the job: proven.
  ApiClient::TimedRun measured = RunOn(plan, last, 0.01);
  measured.plan_id = plan.plan_id();
  client_->UploadTimedRun(measured);
  EXPECT_TRUE(Write("never", plan.plan_id(), last, "x", &response).ok());
}

// Eval criteria hold for WriteStandard as they do for PlacePlan: an eval
// below the pool's floor proves nothing. A retry of the write once it
// committed answers the standard, whatever has changed since.
TEST_F(StandardsTest, AnEvalShortOfThePoolsCriterionIsNoProof) {
  auto catalog = v1::CatalogService::NewStub(placementd_->channel());
  v1::SetEvalCriterionRequest set;
  set.mutable_criterion()->set_name("mmlu-floor");
  set.mutable_criterion()->set_pool("a100");
  set.mutable_criterion()->set_metric_name("mmlu");
  set.mutable_criterion()->set_min_score(0.7);
  v1::SetEvalCriterionResponse set_response;
  ASSERT_TRUE(
      catalog->SetEvalCriterion(Deadline().get(), set, &set_response).ok());
  const v1::PlacePlanResponse plan = PlanWithCompleteBakeOff();
  UploadEval(plan, "a100", 0.61);
  v1::WriteStandardResponse response;
  grpc::Status refused = Write("c1", plan.plan_id(), "a100", "x", &response);
  EXPECT_EQ(refused.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_THAT(PreconditionTypes(refused),
              ::testing::ElementsAre("EVAL_MISSING"));
  EXPECT_THAT(refused.error_message(), HasSubstr("mmlu-floor"));

  UploadEval(plan, "a100", 0.74);
  ASSERT_TRUE(Write("c1", plan.plan_id(), "a100", "x", &response).ok());
  // The floor raised after the commit: a retry still answers the standard.
  set.mutable_criterion()->set_min_score(0.9);
  ASSERT_TRUE(
      catalog->SetEvalCriterion(Deadline().get(), set, &set_response).ok());
  v1::WriteStandardResponse retried;
  ASSERT_TRUE(Write("c1", plan.plan_id(), "a100", "x", &retried).ok());
  EXPECT_EQ(retried.standard().standard_id(),
            response.standard().standard_id());
}

// A binary serves schemas older than its newest migration (its window
// starts at 17): on 18, the RPCs of the tables and columns 19 to 23 add answer
// FAILED_PRECONDITION naming the version they need, never UNAVAILABLE
// (which clients retry for ever) nor, for a list, an empty page.
TEST(MissingTableTest, NewRpcsOnAnOlderSchemaAnswerFailedPrecondition) {
  TestDatabase db;
  {
    storage::DbSession session(db.url());
    storage::Migrator migrator(session, storage::EmbeddedMigrations());
    ASSERT_TRUE(migrator.Up(18).ok());
  }
  auto process = PlacementdProcess::Start(db.url());
  ASSERT_TRUE(process.ok()) << process.status();
  ASSERT_TRUE((*process)->WaitForHealth(true, absl::Seconds(10)));
  auto catalog = v1::CatalogService::NewStub((*process)->channel());
  auto telemetry = v1::TelemetryService::NewStub((*process)->channel());
  auto placement = v1::PlacementService::NewStub((*process)->channel());
  auto expect_needs = [](const grpc::Status& status, const char* version) {
    EXPECT_EQ(status.error_code(), grpc::StatusCode::FAILED_PRECONDITION)
        << status.error_message();
    EXPECT_THAT(status.error_message(),
                HasSubstr(absl::StrCat("schema version ", version)));
  };
  v1::ListStandardsResponse standards;
  expect_needs(placement->ListStandards(Deadline().get(), {}, &standards),
               "21");
  v1::GetStandardRequest get;
  get.set_standard_id(testing::NewUuid());
  v1::GetStandardResponse got;
  expect_needs(placement->GetStandard(Deadline().get(), get, &got), "21");
  v1::ListEvalCriteriaResponse criteria;
  expect_needs(catalog->ListEvalCriteria(Deadline().get(), {}, &criteria),
               "20");
  v1::DeleteEvalCriterionRequest remove;
  remove.set_name("exact-match");
  v1::DeleteEvalCriterionResponse removed;
  expect_needs(catalog->DeleteEvalCriterion(Deadline().get(), remove, &removed),
               "20");
  v1::ListEvalResultsResponse evals;
  expect_needs(telemetry->ListEvalResults(Deadline().get(), {}, &evals), "19");
  // A token's teams need 23; an unbound token is made as before.
  v1::CreateTokenRequest token;
  token.set_name("agent-a");
  token.set_role(v1::ROLE_AGENT);
  v1::CreateTokenResponse created;
  EXPECT_TRUE(catalog->CreateToken(Deadline().get(), token, &created).ok());
  token.add_teams("a");
  expect_needs(catalog->CreateToken(Deadline().get(), token, &created), "23");
}

}  // namespace
}  // namespace placement
