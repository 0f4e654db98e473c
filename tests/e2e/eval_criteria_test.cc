// Eval criteria, end to end through the public API, on two placementd
// replicas sharing one PostgreSQL: a criterion declared on one replica
// (CatalogService.SetEvalCriterion) holds on the other's plans; an eval
// below a pool's floor leaves the requirement unmet ("short", naming the
// criterion, the run and its score) where without the criterion it was met;
// a label's criterion holds for every pool with the label and no other; a
// deleted criterion stops applying. Bad criteria are refused with the field
// named, and change nothing.

#include <memory>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "placement/v1/catalog.grpc.pb.h"
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
using ::placement::testing::EvalOn;
using ::placement::testing::Lora8b;
using ::placement::testing::MeasuredRun;
using ::placement::testing::OneGpu;
using ::placement::testing::PlacementdProcess;
using ::placement::testing::PlanFor;
using ::placement::testing::StartServingPlacementd;
using ::placement::testing::TestDatabase;
using ::placement::testing::TrainingPool;
using ::placement::testing::ViolatedFields;

constexpr char kL40s[] = "L40S-PCIE-48GB";
constexpr char kA100[] = "A100-SXM4-80GB";

v1::EvalResult Eval(const std::string& metric, double score) {
  return EvalOn(kA100, v1::PRECISION_FP8, metric, score);
}

// Trained in BF16, served on A100 in FP8: an eval is required.
v1::PlacePlanRequest ServedInFp8(const v1::Recipe& recipe) {
  v1::PlacePlanRequest request = PlanFor(recipe);
  request.mutable_serving()->set_sku(kA100);
  request.mutable_serving()->set_precision(v1::PRECISION_FP8);
  return request;
}

v1::EvalCriterion Floor(const std::string& name, const std::string& metric,
                        double min_score) {
  v1::EvalCriterion c;
  c.set_name(name);
  c.set_metric_name(metric);
  c.set_min_score(min_score);
  return c;
}

class EvalCriteriaTest : public ::testing::Test {
 protected:
  void SetUp() override {
    db_.Migrate();
    ASSERT_NO_FATAL_FAILURE(StartServingPlacementd(db_, &first_));
    ASSERT_NO_FATAL_FAILURE(StartServingPlacementd(db_, &second_));
    writer_ = std::make_unique<ApiClient>(first_->channel());
    planner_ = std::make_unique<ApiClient>(second_->channel());
    catalog_ = v1::CatalogService::NewStub(first_->channel());
    v1::Pool nlp = TrainingPool("l40s-nlp", kL40s, 1, 8, 1'000'000);
    (*nlp.mutable_labels())["team"] = "nlp";
    writer_->CreatePool(nlp);
    writer_->CreatePool(TrainingPool("l40s-shared", kL40s, 1, 8, 1'000'000));
  }

  // A measured run on each pool, with `evals` on the first one's.
  void UploadRuns(const v1::Recipe& recipe, std::vector<v1::EvalResult> evals) {
    for (const char* pool : {"l40s-nlp", "l40s-shared"}) {
      ApiClient::TimedRun run = MeasuredRun(pool, kL40s, recipe, 300, 1.2, 120);
      if (evals_run_id_.empty()) run.evals = evals;
      const std::string id = writer_->UploadTimedRun(run).run_id();
      if (evals_run_id_.empty()) evals_run_id_ = id;
    }
  }

  grpc::Status Set(const v1::EvalCriterion& criterion,
                   v1::SetEvalCriterionResponse* response) {
    v1::SetEvalCriterionRequest request;
    *request.mutable_criterion() = criterion;
    return catalog_->SetEvalCriterion(Deadline().get(), request, response);
  }

  // The second replica's plan once both pools' candidates carry a status
  // that `done` accepts (the criterion reaches it by notification).
  v1::PlacePlanResponse PlanWhen(
      const v1::Recipe& recipe,
      const std::function<bool(const v1::EvalStatus& nlp,
                               const v1::EvalStatus& shared)>& done) {
    return planner_->PlanUntil(
        ServedInFp8(recipe), [&](const v1::PlacePlanResponse& plan) {
          const v1::PlacementCandidate* nlp = Candidate(plan, "l40s-nlp");
          const v1::PlacementCandidate* shared = Candidate(plan, "l40s-shared");
          return nlp != nullptr && shared != nullptr &&
                 nlp->has_eval_status() && shared->has_eval_status() &&
                 done(nlp->eval_status(), shared->eval_status());
        });
  }

  TestDatabase db_;
  std::unique_ptr<PlacementdProcess> first_;
  std::unique_ptr<PlacementdProcess> second_;
  std::unique_ptr<ApiClient> writer_;
  std::unique_ptr<ApiClient> planner_;
  std::unique_ptr<v1::CatalogService::Stub> catalog_;
  std::string evals_run_id_;
};

TEST_F(EvalCriteriaTest, AFloorBelowTheEvalLeavesTheRequirementShort) {
  const v1::Recipe recipe = OneGpu(Lora8b());
  UploadRuns(recipe, {Eval("exact_match", 0.58), Eval("eval_loss", 1.1)});
  // No criterion: any eval on the serving SKU and precision meets it.
  PlanWhen(recipe, [](const v1::EvalStatus& nlp, const v1::EvalStatus& shared) {
    return nlp.met() && shared.met();
  });

  // The nlp team's floor, declared by label on the other replica.
  v1::EvalCriterion nlp_floor = Floor("nlp-exact-match", "exact_match", 0.6);
  nlp_floor.set_label_key("team");
  nlp_floor.set_label_value("nlp");
  v1::SetEvalCriterionResponse set;
  ASSERT_TRUE(Set(nlp_floor, &set).ok());
  EXPECT_EQ(set.criterion().name(), "nlp-exact-match");
  EXPECT_TRUE(set.criterion().has_update_time());

  const v1::PlacePlanResponse shorted = PlanWhen(
      recipe, [](const v1::EvalStatus& nlp, const v1::EvalStatus& shared) {
        return !nlp.met() && shared.met();
      });
  const v1::EvalStatus& nlp = Candidate(shorted, "l40s-nlp")->eval_status();
  ASSERT_EQ(nlp.checks_size(), 1);
  EXPECT_EQ(nlp.checks(0).criterion(), "nlp-exact-match");
  EXPECT_FALSE(nlp.checks(0).passed());
  EXPECT_EQ(nlp.checks(0).run_id(), evals_run_id_);
  EXPECT_DOUBLE_EQ(nlp.checks(0).score(), 0.58);
  EXPECT_DOUBLE_EQ(nlp.checks(0).min_score(), 0.6);
  // The pool without the label is held to nothing more.
  EXPECT_EQ(Candidate(shorted, "l40s-shared")->eval_status().checks_size(), 0);

  // A ceiling on the loss for the shared pool, which the eval passes.
  v1::EvalCriterion loss_ceiling;
  loss_ceiling.set_name("shared-loss");
  loss_ceiling.set_pool("l40s-shared");
  loss_ceiling.set_metric_name("eval_loss");
  loss_ceiling.set_max_score(1.2);
  ASSERT_TRUE(Set(loss_ceiling, &set).ok());
  const v1::PlacePlanResponse both = PlanWhen(
      recipe, [](const v1::EvalStatus& nlp, const v1::EvalStatus& shared) {
        return !nlp.met() && shared.checks_size() == 1;
      });
  const v1::EvalStatus& shared = Candidate(both, "l40s-shared")->eval_status();
  EXPECT_TRUE(shared.met());
  EXPECT_TRUE(shared.checks(0).passed());
  EXPECT_DOUBLE_EQ(shared.checks(0).score(), 1.1);

  // Deleted: the floor stops applying.
  v1::DeleteEvalCriterionRequest del;
  del.set_name("nlp-exact-match");
  v1::DeleteEvalCriterionResponse deleted;
  ASSERT_TRUE(
      catalog_->DeleteEvalCriterion(Deadline().get(), del, &deleted).ok());
  EXPECT_TRUE(deleted.deleted());
  ASSERT_TRUE(
      catalog_->DeleteEvalCriterion(Deadline().get(), del, &deleted).ok());
  EXPECT_FALSE(deleted.deleted());
  PlanWhen(recipe, [](const v1::EvalStatus& nlp, const v1::EvalStatus&) {
    return nlp.met() && nlp.checks_size() == 0;
  });

  v1::ListEvalCriteriaRequest list;
  list.set_page_size(1);
  v1::ListEvalCriteriaResponse listed;
  ASSERT_TRUE(catalog_->ListEvalCriteria(Deadline().get(), list, &listed).ok());
  ASSERT_EQ(listed.criteria_size(), 1);
  EXPECT_EQ(listed.criteria(0).name(), "shared-loss");
  EXPECT_TRUE(listed.next_page_token().empty());
}

TEST_F(EvalCriteriaTest, BadCriteriaAreRefusedWithTheFieldNamed) {
  v1::EvalCriterion both_selectors = Floor("qa-floor", "exact_match", 0.6);
  both_selectors.set_pool("l40s-nlp");
  both_selectors.set_label_key("team");
  both_selectors.set_label_value("nlp");
  v1::SetEvalCriterionResponse response;
  grpc::Status status = Set(both_selectors, &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(ViolatedFields(status), ::testing::Contains("criterion.pool"));

  v1::EvalCriterion inverted = Floor("qa-floor", "exact_match", 0.9);
  inverted.set_pool("l40s-nlp");
  inverted.set_max_score(0.5);
  status = Set(inverted, &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(ViolatedFields(status),
              ::testing::Contains("criterion.max_score"));

  v1::EvalCriterion no_pool = Floor("qa-floor", "exact_match", 0.6);
  no_pool.set_pool("no-such-pool");
  EXPECT_EQ(Set(no_pool, &response).error_code(), grpc::StatusCode::NOT_FOUND);

  // Nothing was stored by any of them.
  v1::ListEvalCriteriaResponse listed;
  ASSERT_TRUE(catalog_
                  ->ListEvalCriteria(Deadline().get(),
                                     v1::ListEvalCriteriaRequest(), &listed)
                  .ok());
  EXPECT_EQ(listed.criteria_size(), 0);
}

}  // namespace
}  // namespace placement
