#include "core/evidence/eval_criterion.h"

#include <string>
#include <vector>

#include "core/evidence/eval_evidence.h"
#include "core/evidence/evidence.h"
#include "core/plan/planner.h"
#include "gtest/gtest.h"

namespace placement::core {
namespace {

EvalEvidence Eval(const std::string& run_id, Precision precision,
                  const std::string& metric, double score) {
  EvalEvidence e;
  e.run_id = run_id;
  e.recipe_key = "key-a";
  e.serving_sku_id = "L4";
  e.serving_precision = precision;
  e.metric = metric;
  e.score = score;
  e.recorded = absl::FromUnixSeconds(1'700'000'000);
  return e;
}

EvalCriterion Floor(const std::string& name, const std::string& metric,
                    double min) {
  EvalCriterion c;
  c.name = name;
  c.pool_name = "a100-east";
  c.metric = metric;
  c.min_score = min;
  return c;
}

Pool PoolNamed(const std::string& name,
               std::map<std::string, std::string> labels = {}) {
  Pool pool;
  pool.name = name;
  pool.labels = std::move(labels);
  return pool;
}

TEST(EvalCriterionTest, AppliesToItsPoolOrToEveryPoolCarryingItsLabel) {
  EvalCriterion by_pool = Floor("qa-floor", "exact_match", 0.6);
  EvalCriterion by_label = by_pool;
  by_label.pool_name.clear();
  by_label.label_key = "team";
  by_label.label_value = "nlp";
  EXPECT_TRUE(AppliesTo(by_pool, PoolNamed("a100-east")));
  EXPECT_FALSE(AppliesTo(by_pool, PoolNamed("l40s-west")));
  EXPECT_TRUE(AppliesTo(by_label, PoolNamed("l40s-west", {{"team", "nlp"}})));
  EXPECT_FALSE(
      AppliesTo(by_label, PoolNamed("l40s-west", {{"team", "vision"}})));
  EXPECT_FALSE(AppliesTo(by_label, PoolNamed("l40s-west")));
}

TEST(EvalCriterionTest, BoundsAreInclusiveFloorsAndCeilings) {
  EvalCriterion loss = Floor("loss-ceiling", "eval_loss", 0);
  loss.min_score.reset();
  loss.max_score = 1.2;
  EXPECT_TRUE(Passes(loss, 1.2));
  EXPECT_FALSE(Passes(loss, 1.21));
  EvalCriterion floor = Floor("qa-floor", "exact_match", 0.6);
  EXPECT_TRUE(Passes(floor, 0.6));
  EXPECT_FALSE(Passes(floor, 0.59));
}

TEST(EvalCriterionTest, ValidationNamesEachBrokenField) {
  EvalCriterion bad;
  bad.name = "Bad Name";
  bad.pool_name = "a100-east";
  bad.label_key = "team";
  bad.min_score = 2;
  bad.max_score = 1;
  std::vector<std::string> fields;
  for (const FieldViolation& v : ValidateEvalCriterion(bad, "criterion.")) {
    fields.push_back(v.field);
  }
  EXPECT_EQ(fields, (std::vector<std::string>{
                        "criterion.name", "criterion.pool",
                        "criterion.metric_name", "criterion.max_score"}));
  EvalCriterion unbounded = Floor("qa-floor", "exact_match", 0);
  unbounded.min_score.reset();
  ASSERT_EQ(ValidateEvalCriterion(unbounded, "").size(), 1u);
  EXPECT_EQ(ValidateEvalCriterion(unbounded, "")[0].field, "min_score");
  EXPECT_TRUE(
      ValidateEvalCriterion(Floor("qa-floor", "exact_match", 0.6), "").empty());
}

TEST(MatchEvalWithCriteriaTest, EveryCriterionNeedsAPassingEvalOfItsMetric) {
  const std::vector<EvalEvidence> evals = {
      Eval("r1", Precision::kFp8, "exact_match", 0.55),
      Eval("r2", Precision::kFp8, "exact_match", 0.58),
      Eval("r3", Precision::kFp8, "eval_loss", 1.1),
      // Another precision says nothing about FP8.
      Eval("r4", Precision::kBf16, "exact_match", 0.9),
  };
  const std::vector<EvalCriterion> criteria = {
      Floor("qa-floor", "exact_match", 0.6)};
  EvalStatus short_of_it =
      MatchEval(evals, "key-a", "L4", Precision::kFp8, criteria);
  EXPECT_FALSE(short_of_it.met);
  EXPECT_FALSE(short_of_it.eval.has_value());
  ASSERT_EQ(short_of_it.checks.size(), 1u);
  EXPECT_FALSE(short_of_it.checks[0].passed);
  // The closest to passing is shown.
  ASSERT_TRUE(short_of_it.checks[0].eval.has_value());
  EXPECT_EQ(short_of_it.checks[0].eval->run_id, "r2");
  // Without criteria, the same evals meet the requirement.
  EXPECT_TRUE(MatchEval(evals, "key-a", "L4", Precision::kFp8).met);

  std::vector<EvalEvidence> better = evals;
  better.push_back(Eval("r5", Precision::kFp8, "exact_match", 0.61));
  EvalCriterion loss = Floor("loss-ceiling", "eval_loss", 0);
  loss.min_score.reset();
  loss.max_score = 1.2;
  EvalStatus met = MatchEval(better, "key-a", "L4", Precision::kFp8,
                             {Floor("qa-floor", "exact_match", 0.6), loss});
  EXPECT_TRUE(met.met);
  ASSERT_EQ(met.checks.size(), 2u);
  EXPECT_EQ(met.checks[0].eval->run_id, "r5");
  EXPECT_EQ(met.checks[1].eval->run_id, "r3");
  EXPECT_EQ(met.eval->run_id, "r5");

  // A criterion whose metric no eval reports is missing, not failed open.
  EvalStatus no_metric = MatchEval(better, "key-a", "L4", Precision::kFp8,
                                   {Floor("qa-floor", "exact_match", 0.6),
                                    Floor("rouge-floor", "rouge_l", 0.3)});
  EXPECT_FALSE(no_metric.met);
  EXPECT_FALSE(no_metric.checks[1].eval.has_value());
}

TEST(MatchEvalWithCriteriaTest, PlansHoldEachCandidateToItsOwnPoolsCriteria) {
  InMemoryEvidence evidence;
  evidence.AddEval(Eval("r1", Precision::kFp8, "exact_match", 0.55));
  EvalCriterion strict = Floor("nlp-floor", "exact_match", 0.6);
  strict.pool_name.clear();
  strict.label_key = "team";
  strict.label_value = "nlp";
  evidence.SetEvalCriteria({strict});
  PlanRequest request;
  request.serving = ServingTarget{"L4", Precision::kFp8};
  std::vector<Candidate> candidates(2);
  for (Candidate& c : candidates) {
    c.recipe_key = "key-a";
    c.eval_requirement = "export and eval on L4 in FP8";
  }
  candidates[0].pool_name = "a100-nlp";
  candidates[1].pool_name = "l40s-shared";
  const std::vector<Pool> pools = {PoolNamed("a100-nlp", {{"team", "nlp"}}),
                                   PoolNamed("l40s-shared")};
  MarkEvalStatus(request, pools, evidence, &candidates);
  EXPECT_FALSE(candidates[0].eval_status->met);
  EXPECT_EQ(candidates[0].eval_status->checks.size(), 1u);
  EXPECT_TRUE(candidates[1].eval_status->met);
  EXPECT_TRUE(candidates[1].eval_status->checks.empty());
}

}  // namespace
}  // namespace placement::core
