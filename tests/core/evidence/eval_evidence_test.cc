#include "core/evidence/eval_evidence.h"

#include <string>
#include <vector>

#include "core/evidence/evidence.h"
#include "core/plan/planner.h"
#include "gtest/gtest.h"

namespace placement::core {
namespace {

EvalEvidence Eval(const std::string& run_id, const std::string& sku,
                  Precision precision, const std::string& metric,
                  double score) {
  EvalEvidence e;
  e.run_id = run_id;
  e.recipe_key = "key-a";
  e.serving_sku_id = sku;
  e.serving_precision = precision;
  e.metric = metric;
  e.score = score;
  e.recorded = absl::FromUnixSeconds(1'700'000'000);
  return e;
}

TEST(MatchEvalTest, OnlyTheServingSkuAndPrecisionOfTheSameKeyCount) {
  const std::vector<EvalEvidence> evals = {
      Eval("r1", "A100", Precision::kBf16, "exact_match", 0.9),
      Eval("r2", "L40S", Precision::kFp16, "exact_match", 0.9),
  };
  EvalStatus missing = MatchEval(evals, "key-a", "A100", Precision::kFp16);
  EXPECT_FALSE(missing.met);
  EXPECT_FALSE(missing.eval.has_value());
  EXPECT_EQ(missing.serving_sku_id, "A100");
  EXPECT_EQ(missing.serving_precision, Precision::kFp16);
  EXPECT_FALSE(MatchEval(evals, "key-b", "A100", Precision::kBf16).met);

  EvalStatus met = MatchEval(evals, "key-a", "A100", Precision::kBf16);
  ASSERT_TRUE(met.met);
  EXPECT_EQ(met.eval->run_id, "r1");
}

TEST(MatchEvalTest, ShowsTheBestScoreOfTheFirstMetric) {
  const std::vector<EvalEvidence> evals = {
      Eval("r1", "A100", Precision::kFp16, "rouge_l", 0.99),
      Eval("r2", "A100", Precision::kFp16, "exact_match", 0.61),
      Eval("r3", "A100", Precision::kFp16, "exact_match", 0.72),
      Eval("r4", "A100", Precision::kFp16, "exact_match", 0.55),
  };
  EvalStatus met = MatchEval(evals, "key-a", "A100", Precision::kFp16);
  ASSERT_TRUE(met.met);
  EXPECT_EQ(met.eval->run_id, "r3");
  EXPECT_EQ(met.eval->metric, "exact_match");
  EXPECT_DOUBLE_EQ(met.eval->score, 0.72);
}

TEST(InMemoryEvidenceEvalsTest, FindsByKeySkuAndPrecisionAndReplacesARepeat) {
  InMemoryEvidence evidence;
  evidence.AddEval(Eval("r1", "A100", Precision::kFp16, "exact_match", 0.5));
  evidence.AddEval(Eval("r1", "A100", Precision::kFp16, "exact_match", 0.5));
  evidence.AddEval(Eval("r2", "A100", Precision::kBf16, "exact_match", 0.6));
  const InMemoryEvidence copy = evidence;
  evidence.AddEval(Eval("r3", "A100", Precision::kFp16, "exact_match", 0.7));
  EXPECT_EQ(evidence.FindEvals("key-a", "A100", Precision::kFp16).size(), 2u);
  EXPECT_EQ(evidence.FindEvals("key-a", "A100", Precision::kBf16).size(), 1u);
  EXPECT_TRUE(evidence.FindEvals("key-a", "L40S", Precision::kFp16).empty());
  // A copy is a snapshot: what is added later is not in it.
  EXPECT_EQ(copy.FindEvals("key-a", "A100", Precision::kFp16).size(), 1u);
}

TEST(MarkEvalStatusTest, OnlyCandidatesWithARequirementGetAStatus) {
  InMemoryEvidence evidence;
  evidence.AddEval(Eval("r1", "A100", Precision::kFp16, "exact_match", 0.8));
  PlanRequest request;
  request.serving = ServingTarget{"A100", Precision::kFp16};
  std::vector<Candidate> candidates(2);
  candidates[0].recipe_key = "key-a";
  candidates[0].eval_requirement = "export and eval on A100 in FP16";
  candidates[1].recipe_key = "key-a";  // trained on A100 in FP16: none
  MarkEvalStatus(request, {}, evidence, &candidates);
  ASSERT_TRUE(candidates[0].eval_status.has_value());
  EXPECT_TRUE(candidates[0].eval_status->met);
  EXPECT_EQ(candidates[0].eval_status->eval->run_id, "r1");
  EXPECT_FALSE(candidates[1].eval_status.has_value());
}

TEST(MarkEvalStatusTest, AnUnspecifiedServingPrecisionIsTheTrainingOne) {
  InMemoryEvidence evidence;
  evidence.AddEval(Eval("r1", "A100", Precision::kBf16, "exact_match", 0.8));
  PlanRequest request;
  request.serving = ServingTarget{"A100", Precision::kUnspecified};
  std::vector<Candidate> candidates(1);
  candidates[0].recipe_key = "key-a";
  candidates[0].recipe.precision = Precision::kBf16;
  candidates[0].eval_requirement = "export and eval on A100 in BF16";
  MarkEvalStatus(request, {}, evidence, &candidates);
  ASSERT_TRUE(candidates[0].eval_status.has_value());
  EXPECT_TRUE(candidates[0].eval_status->met);
  EXPECT_EQ(candidates[0].eval_status->serving_precision, Precision::kBf16);
}

}  // namespace
}  // namespace placement::core
