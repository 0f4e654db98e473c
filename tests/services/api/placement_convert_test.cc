// services/api/placement_convert: a PlacePlan request as the planner takes
// it (constraints, an optional deadline and serving target, the default
// objective) and the planner's result as the API shows it (optional
// figures present only when the planner has them).
#include "services/api/placement_convert.h"

#include <string>

#include "absl/time/time.h"
#include "gtest/gtest.h"

namespace placement::services {
namespace {

TEST(PlanRequestFromProtoTest, MapsTheConstraints) {
  v1::PlacePlanRequest in;
  in.mutable_recipe()->set_model("llama-3.1-8b");
  in.set_total_steps(5000);
  in.set_team("search");
  v1::PlanConstraints* c = in.mutable_constraints();
  c->add_allowed_pools("pool-a");
  c->add_allowed_pools("pool-b");
  (*c->mutable_required_labels())["region"] = "eu";
  c->set_max_gpus(16);
  c->mutable_deadline()->set_seconds(3600);
  c->mutable_deadline()->set_nanos(500'000'000);
  c->set_objective(v1::OBJECTIVE_SHORTEST_TIME);
  const core::PlanRequest out = PlanRequestFromProto(in);
  EXPECT_EQ(out.recipe.model, "llama-3.1-8b");
  EXPECT_EQ(out.total_steps, 5000);
  EXPECT_EQ(out.team, "search");
  EXPECT_EQ(out.constraints.allowed_pools,
            (std::vector<std::string>{"pool-a", "pool-b"}));
  EXPECT_EQ(out.constraints.required_labels.at("region"), "eu");
  EXPECT_EQ(out.constraints.max_gpus, 16);
  EXPECT_EQ(out.constraints.deadline,
            absl::Seconds(3600) + absl::Milliseconds(500));
  EXPECT_EQ(out.constraints.objective, core::Objective::kShortestTime);
  EXPECT_EQ(out.serving, std::nullopt);
}

TEST(PlanRequestFromProtoTest, NoDeadlineAndTheLowestCostByDefault) {
  const core::PlanRequest out = PlanRequestFromProto(v1::PlacePlanRequest());
  EXPECT_EQ(out.constraints.deadline, std::nullopt);
  EXPECT_EQ(out.constraints.objective, core::Objective::kLowestCost);
  EXPECT_EQ(ObjectiveName(out.constraints.objective),
            std::string("LOWEST_COST"));
  EXPECT_EQ(ObjectiveName(core::Objective::kShortestTime),
            std::string("SHORTEST_TIME"));
}

TEST(PlanRequestFromProtoTest, TakesTheServingTargetAsNamed) {
  v1::PlacePlanRequest in;
  in.mutable_serving()->set_sku("l4");
  const core::PlanRequest out = PlanRequestFromProto(in);
  ASSERT_TRUE(out.serving.has_value());
  EXPECT_EQ(out.serving->sku_id, "l4");
  EXPECT_EQ(out.serving->precision, core::Precision::kUnspecified);
}

core::Candidate AnyCandidate() {
  core::Candidate c;
  c.rank = 1;
  c.pool_name = "pool-a";
  c.sku_id = "A100-SXM4-80GB";
  c.gpu_count = 8;
  c.fit = core::Fit::kBorderline;
  c.fits = true;
  c.expected_cost_micros = 12'345'678;
  c.expected_wall_time = absl::Seconds(90) + absl::Milliseconds(500);
  c.basis = core::EvidenceBasis::kTransferred;
  c.confidence = core::Confidence::kMedium;
  c.evidence_runs = 3;
  c.reasons = {"cheapest"};
  c.warnings = {"over_bought: 2 GPUs idle"};
  return c;
}

TEST(PlanResultToProtoTest, MapsACandidate) {
  core::PlanResult result;
  result.recipe_key = "rk1-0123456789abcdef";
  result.candidates.push_back(AnyCandidate());
  const v1::PlacePlanResponse out = PlanResultToProto(result);
  EXPECT_EQ(out.recipe_key(), "rk1-0123456789abcdef");
  ASSERT_EQ(out.candidates_size(), 1);
  const v1::PlacementCandidate& c = out.candidates(0);
  EXPECT_EQ(c.rank(), 1);
  EXPECT_EQ(c.pool(), "pool-a");
  EXPECT_EQ(c.gpu_count(), 8);
  EXPECT_EQ(c.fit(), v1::FIT_BORDERLINE);
  EXPECT_EQ(c.expected_cost_micros(), 12'345'678);
  EXPECT_EQ(c.expected_wall_time().seconds(), 90);
  EXPECT_EQ(c.expected_wall_time().nanos(), 500'000'000);
  EXPECT_EQ(c.basis(), v1::EVIDENCE_BASIS_TRANSFERRED);
  EXPECT_EQ(c.confidence(), v1::CONFIDENCE_MEDIUM);
  EXPECT_EQ(c.evidence_runs(), 3);
  ASSERT_EQ(c.warnings_size(), 1);
  EXPECT_EQ(c.warnings(0), "over_bought: 2 GPUs idle");
  // No list price, no eval requirement: absent, not zero or "".
  EXPECT_FALSE(c.has_list_price_cost_micros());
  EXPECT_EQ(c.eval_requirement(), "");
  EXPECT_FALSE(out.has_bake_off());
  EXPECT_EQ(out.eval_requirement(), "");
  EXPECT_FALSE(c.has_exploration());
}

TEST(PlanResultToProtoTest, MapsAConfigurationTheJobMeasures) {
  core::PlanResult result;
  core::Candidate candidate = AnyCandidate();
  candidate.exploration = core::ConfigurationExploration{};
  core::ConfigurationExploration& x = *candidate.exploration;
  x.measured_recipe_key = "rk1-measured";
  x.measured_value_micros = 4'720'000.4;
  x.premium_micros = 170'000;
  x.expected_saving_micros = 1'050'000.6;
  x.demand_steps = 20'000;
  x.win_probability = 0.6;
  result.candidates.push_back(candidate);
  const v1::PlacePlanResponse out = PlanResultToProto(result);
  ASSERT_EQ(out.candidates_size(), 1);
  ASSERT_TRUE(out.candidates(0).has_exploration());
  const v1::ConfigurationExploration& e = out.candidates(0).exploration();
  EXPECT_EQ(e.measured_recipe_key(), "rk1-measured");
  EXPECT_EQ(e.measured_cost_micros(), 4'720'000);
  EXPECT_EQ(e.premium_micros(), 170'000);
  EXPECT_EQ(e.expected_saving_micros(), 1'050'001);
  EXPECT_EQ(e.demand_steps(), 20'000);
  EXPECT_DOUBLE_EQ(e.win_probability(), 0.6);
}

TEST(PlanResultToProtoTest, AListPriceOfZeroIsShown) {
  core::PlanResult result;
  result.candidates.push_back(AnyCandidate());
  result.candidates[0].list_price_cost_micros = 0;
  const v1::PlacePlanResponse out = PlanResultToProto(result);
  EXPECT_TRUE(out.candidates(0).has_list_price_cost_micros());
}

TEST(PlanResultToProtoTest, MapsRejectionsAndABakeOff) {
  core::PlanResult result;
  result.rejections.push_back(
      {"pool-small", "L4", "does_not_fit", "needs 90 GB a GPU"});
  core::BakeOff bake_off;
  bake_off.reason = "two borderline pools";
  core::BakeOffRun run;
  run.pool_name = "pool-a";
  run.sku_id = "A100";
  run.gpu_count = 8;
  bake_off.runs.push_back(run);
  result.bake_off = bake_off;
  result.eval_requirement = "serve what you evaluated";
  const v1::PlacePlanResponse out = PlanResultToProto(result);
  ASSERT_EQ(out.rejections_size(), 1);
  EXPECT_EQ(out.rejections(0).pool(), "pool-small");
  EXPECT_EQ(out.rejections(0).rule(), "does_not_fit");
  EXPECT_EQ(out.rejections(0).reason(), "needs 90 GB a GPU");
  ASSERT_TRUE(out.has_bake_off());
  EXPECT_EQ(out.bake_off().reason(), "two borderline pools");
  ASSERT_EQ(out.bake_off().runs_size(), 1);
  EXPECT_EQ(out.bake_off().runs(0).gpu_count(), 8);
  EXPECT_EQ(out.eval_requirement(), "serve what you evaluated");
}

}  // namespace
}  // namespace placement::services
