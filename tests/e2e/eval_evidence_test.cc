// Evals as evidence, end to end through the public API: a real placementd on
// a real PostgreSQL. An eval uploaded with a run, on the serving SKU in the
// serving precision, meets a plan's serve_what_you_evaluated requirement
// (and says by which run, metric and score); one in another precision does
// not. ListEvalResults lists the stored evals by recipe key, serving SKU and
// precision, page by page.

#include <memory>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "placement/v1/placement.grpc.pb.h"
#include "placement/v1/telemetry.grpc.pb.h"
#include "tests/support/api_client.h"
#include "tests/support/end_to_end_test.h"
#include "tests/support/fixtures.h"

namespace placement {
namespace {

using ::placement::testing::ApiClient;
using ::placement::testing::Candidate;
using ::placement::testing::EndToEndTest;
using ::placement::testing::EvalOn;
using ::placement::testing::Lora8b;
using ::placement::testing::Measured;
using ::placement::testing::MeasuredRun;
using ::placement::testing::OneGpu;
using ::placement::testing::PlanFor;
using ::placement::testing::TrainingPool;
using ::testing::HasSubstr;

constexpr char kL40s[] = "L40S-PCIE-48GB";
constexpr char kA100[] = "A100-SXM4-80GB";

// Trained on L40S in BF16, served on A100 in FP16: an eval is required.
v1::PlacePlanRequest ServedOnA100InFp16(const v1::Recipe& recipe) {
  v1::PlacePlanRequest request = PlanFor(recipe);
  request.mutable_serving()->set_sku(kA100);
  request.mutable_serving()->set_precision(v1::PRECISION_FP16);
  return request;
}

class EvalEvidenceTest : public EndToEndTest {
 protected:
  void SetUp() override {
    ASSERT_NO_FATAL_FAILURE(EndToEndTest::SetUp());
    client_->CreatePool(TrainingPool("l40s", kL40s, 1, 8, 1'000'000));
  }

  std::string UploadWithEvals(const v1::Recipe& recipe,
                              std::vector<v1::EvalResult> evals) {
    ApiClient::TimedRun run = MeasuredRun("l40s", kL40s, recipe, 300, 1.2, 120);
    run.evals = std::move(evals);
    return client_->UploadTimedRun(run).run_id();
  }
};

TEST_F(EvalEvidenceTest, AnEvalOnTheServingSkuAndPrecisionMeetsTheRequirement) {
  const v1::Recipe recipe = OneGpu(Lora8b());
  // Evaluated on the serving SKU, but in BF16: says nothing of FP16.
  const std::string bf16_run = UploadWithEvals(
      recipe, {EvalOn(kA100, v1::PRECISION_BF16, "exact_match", 0.74)});
  const v1::PlacePlanResponse before =
      client_->PlanUntil(ServedOnA100InFp16(recipe), Measured("l40s", 1));
  EXPECT_THAT(before.eval_requirement(), HasSubstr("A100-SXM4-80GB in FP16"));
  ASSERT_TRUE(before.has_eval_status());
  EXPECT_FALSE(before.eval_status().met());
  EXPECT_EQ(before.eval_status().serving_sku(), kA100);
  EXPECT_EQ(before.eval_status().serving_precision(), v1::PRECISION_FP16);
  EXPECT_EQ(before.eval_status().recipe_key(), before.recipe_key());
  EXPECT_EQ(before.eval_status().run_id(), "");

  // The same recipe evaluated on A100 in FP16 (two metrics, and a lower
  // score of the first in name order from a third run).
  const std::string fp16_run = UploadWithEvals(
      recipe, {EvalOn(kA100, v1::PRECISION_FP16, "exact_match", 0.71),
               EvalOn(kA100, v1::PRECISION_FP16, "rouge_l", 0.42)});
  UploadWithEvals(recipe,
                  {EvalOn(kA100, v1::PRECISION_FP16, "exact_match", 0.55)});
  const v1::PlacePlanResponse after =
      client_->PlanUntil(ServedOnA100InFp16(recipe), Measured("l40s", 3));
  ASSERT_TRUE(after.has_eval_status());
  const v1::EvalStatus& status = after.eval_status();
  EXPECT_TRUE(status.met());
  EXPECT_EQ(status.run_id(), fp16_run);
  EXPECT_EQ(status.metric_name(), "exact_match");
  EXPECT_DOUBLE_EQ(status.score(), 0.71);
  EXPECT_EQ(status.serving_sku(), kA100);
  EXPECT_EQ(status.serving_precision(), v1::PRECISION_FP16);
  // The candidate says the same.
  const v1::PlacementCandidate* l40s = Candidate(after, "l40s");
  ASSERT_NE(l40s, nullptr);
  EXPECT_TRUE(l40s->eval_status().met());
  EXPECT_EQ(l40s->eval_status().run_id(), fp16_run);

  // Served in BF16 instead: the first run's eval meets it.
  v1::PlacePlanRequest in_bf16 = ServedOnA100InFp16(recipe);
  in_bf16.mutable_serving()->set_precision(v1::PRECISION_BF16);
  v1::PlacePlanResponse bf16_plan;
  ASSERT_TRUE(client_->Plan(in_bf16, &bf16_plan).ok());
  EXPECT_TRUE(bf16_plan.eval_status().met());
  EXPECT_EQ(bf16_plan.eval_status().run_id(), bf16_run);
}

TEST_F(EvalEvidenceTest, AnEvalInAnotherPrecisionDoesNotMeetTheRequirement) {
  const v1::Recipe recipe = OneGpu(Lora8b());
  UploadWithEvals(recipe,
                  {EvalOn(kA100, v1::PRECISION_INT8, "exact_match", 0.7),
                   EvalOn(kL40s, v1::PRECISION_FP16, "exact_match", 0.7)});
  const v1::PlacePlanResponse plan =
      client_->PlanUntil(ServedOnA100InFp16(recipe), Measured("l40s", 1));
  ASSERT_TRUE(plan.has_eval_status());
  EXPECT_FALSE(plan.eval_status().met());
  EXPECT_FALSE(plan.eval_requirement().empty());
}

TEST_F(EvalEvidenceTest, ListEvalResultsFiltersAndPages) {
  const v1::Recipe recipe = OneGpu(Lora8b());
  const std::string run = UploadWithEvals(
      recipe, {EvalOn(kA100, v1::PRECISION_FP16, "exact_match", 0.71),
               EvalOn(kA100, v1::PRECISION_BF16, "exact_match", 0.74),
               EvalOn(kL40s, v1::PRECISION_FP16, "rouge_l", 0.40)});

  v1::ListEvalResultsRequest fp16_on_a100;
  fp16_on_a100.set_serving_sku(kA100);
  fp16_on_a100.set_serving_precision(v1::PRECISION_FP16);
  const v1::ListEvalResultsResponse one =
      client_->ListEvalResults(fp16_on_a100);
  ASSERT_EQ(one.evals_size(), 1);
  EXPECT_EQ(one.evals(0).run_id(), run);
  EXPECT_EQ(one.evals(0).eval().metric_name(), "exact_match");
  EXPECT_DOUBLE_EQ(one.evals(0).eval().score(), 0.71);
  EXPECT_FALSE(one.evals(0).recipe_key().empty());
  EXPECT_TRUE(one.evals(0).has_record_time());

  // All three, two to a page.
  v1::ListEvalResultsRequest paged;
  paged.set_recipe_key(one.evals(0).recipe_key());
  paged.set_page_size(2);
  const v1::ListEvalResultsResponse first = client_->ListEvalResults(paged);
  ASSERT_EQ(first.evals_size(), 2);
  ASSERT_FALSE(first.next_page_token().empty());
  paged.set_page_token(first.next_page_token());
  const v1::ListEvalResultsResponse second = client_->ListEvalResults(paged);
  ASSERT_EQ(second.evals_size(), 1);
  EXPECT_TRUE(second.next_page_token().empty());
  EXPECT_EQ(second.evals(0).eval().metric_name(), "exact_match");
  EXPECT_EQ(second.evals(0).eval().serving_precision(), v1::PRECISION_FP16);

  v1::ListEvalResultsRequest other_key;
  other_key.set_recipe_key("no-such-key");
  EXPECT_EQ(client_->ListEvalResults(other_key).evals_size(), 0);
}

}  // namespace
}  // namespace placement
