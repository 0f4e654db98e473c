#include "core/plan/standard.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace placement::core {
namespace {

using ::testing::HasSubstr;

Recipe Lora(int rank, int seq) {
  Recipe r;
  r.model = "meta-llama/Llama-3.1-8B";
  r.method = FineTuneMethod::kLora;
  r.lora_rank = rank;
  r.sequence_length = seq;
  r.precision = Precision::kBf16;
  r.gpu_count = 1;
  r.micro_batch_size = 2;
  return r;
}

Standard On(const std::string& id, const std::string& pool,
            const Recipe& recipe_class, absl::Time created) {
  Standard s;
  s.standard_id = id;
  s.pool_name = pool;
  s.recipe_class = recipe_class;
  s.created = created;
  s.written_by = "ops (ADMIN)";
  s.reason = "bake-off";
  s.failure_rate_per_hour_band = {0.001, 0.01};
  return s;
}

Candidate Measured(const std::string& pool, int64_t cost_micros, double step_s,
                   Band step_band) {
  Candidate c;
  c.pool_name = pool;
  c.expected_cost_micros = cost_micros;
  c.step_time_s = step_s;
  c.step_time_s_band = step_band;
  // At one unit an hour, the projection's band that of its step time.
  c.expected_gpu_hours = static_cast<double>(cost_micros) / 1e6;
  c.expected_gpu_hours_band = {c.expected_gpu_hours * step_band.low / step_s,
                               c.expected_gpu_hours * step_band.high / step_s};
  c.basis = EvidenceBasis::kMeasured;
  c.failure_rate.per_hour_band = {0.001, 0.01};
  return c;
}

TEST(StandardTest, UnsetClassFieldsMatchAnything) {
  Recipe c;
  c.model = "meta-llama/Llama-3.1-8B";
  EXPECT_TRUE(InRecipeClass(Lora(16, 2048), c));
  c.lora_rank = 16;
  EXPECT_TRUE(InRecipeClass(Lora(16, 2048), c));
  EXPECT_FALSE(InRecipeClass(Lora(64, 2048), c));
  EXPECT_EQ(Specificity(c), 2);
  // Fields outside the class are dropped from it.
  Recipe full = Lora(16, 2048);
  full.optimizer = Optimizer::kAdamW;
  EXPECT_EQ(RecipeClassOf(full).optimizer, Optimizer::kUnspecified);
  const Recipe by_default = DefaultRecipeClass(full);
  EXPECT_EQ(by_default.gpu_count, 0);  // the layout is left open
  EXPECT_EQ(by_default.lora_rank, 16);
  EXPECT_TRUE(InRecipeClass(Lora(16, 2048), by_default));
}

TEST(StandardTest, TheMostSpecificThenNewestActiveStandardGoverns) {
  Recipe broad;
  broad.model = "meta-llama/Llama-3.1-8B";
  Recipe narrow = DefaultRecipeClass(Lora(16, 2048));
  std::vector<Standard> standards = {
      On("a", "a100", broad, absl::FromUnixSeconds(300)),
      On("b", "l40s", narrow, absl::FromUnixSeconds(100)),
      On("c", "h100", narrow, absl::FromUnixSeconds(200)),
  };
  EXPECT_EQ(ChooseStandard(standards, Lora(16, 2048))->standard_id, "c");
  EXPECT_EQ(ChooseStandard(standards, Lora(64, 2048))->standard_id, "a");
  standards[2].retired = absl::FromUnixSeconds(400);
  EXPECT_EQ(ChooseStandard(standards, Lora(16, 2048))->standard_id, "b");
  Recipe other = Lora(16, 2048);
  other.model = "Qwen/Qwen2.5-7B";
  EXPECT_EQ(ChooseStandard(standards, other), nullptr);
}

TEST(StandardTest, RanksTheStandardPoolFirstWhileItIsACandidate) {
  PlanResult result;
  result.recipe = Lora(16, 2048);
  result.candidates = {Measured("l40s", 100'000'000, 1, {0.95, 1.05}),
                       Measured("a100", 110'000'000, 1, {0.95, 1.05})};
  result.candidates[0].rank = 1;
  result.candidates[1].rank = 2;
  const std::vector<Standard> standards = {On("s", "a100",
                                              DefaultRecipeClass(result.recipe),
                                              absl::FromUnixSeconds(1))};
  ApplyStandard(standards, &result);
  ASSERT_TRUE(result.standard.has_value());
  EXPECT_TRUE(result.standard->applied);
  EXPECT_FALSE(result.standard->contradicted);  // bands overlap
  EXPECT_EQ(result.candidates[0].pool_name, "a100");
  EXPECT_EQ(result.candidates[0].rank, 1);
  EXPECT_EQ(result.candidates[1].pool_name, "l40s");
  EXPECT_EQ(result.candidates[1].rank, 2);
}

TEST(StandardTest, ThePlansEvalStatusIsThatOfTheStandardPool) {
  PlanResult result;
  result.recipe = Lora(16, 2048);
  result.candidates = {Measured("l40s", 100'000'000, 1, {0.95, 1.05}),
                       Measured("a100", 110'000'000, 1, {0.95, 1.05})};
  for (Candidate& c : result.candidates) {
    c.eval_requirement = "export and eval on L4 in FP8";
    c.eval_status.emplace();
  }
  result.candidates[1].eval_status->met = true;
  result.eval_requirement = result.candidates[0].eval_requirement;
  result.eval_status = result.candidates[0].eval_status;
  ApplyStandard({On("s", "a100", DefaultRecipeClass(result.recipe),
                    absl::FromUnixSeconds(1))},
                &result);
  ASSERT_TRUE(result.eval_status.has_value());
  EXPECT_TRUE(result.eval_status->met);
}

TEST(StandardTest, ACandidateCheaperBeyondBothBandsContradictsIt) {
  PlanResult result;
  result.recipe = Lora(16, 2048);
  result.candidates = {Measured("l40s", 50'000'000, 1, {0.9, 1.1}),
                       Measured("a100", 110'000'000, 1, {0.9, 1.1})};
  const std::vector<Standard> standards = {On("s", "a100",
                                              DefaultRecipeClass(result.recipe),
                                              absl::FromUnixSeconds(1))};
  ApplyStandard(standards, &result);
  EXPECT_TRUE(result.standard->applied);
  EXPECT_TRUE(result.standard->contradicted);
  EXPECT_THAT(result.standard->contradictions[0],
              HasSubstr("l40s measured cheaper beyond both bands"));
  // An estimate is not evidence against a standard.
  result.candidates[1].basis = EvidenceBasis::kEstimated;
  result.standard.reset();
  ApplyStandard(standards, &result);
  EXPECT_FALSE(result.standard->contradicted);
}

TEST(StandardTest, AFailureRateAboveTheRecordedBandContradictsIt) {
  PlanResult result;
  result.recipe = Lora(16, 2048);
  result.candidates = {Measured("a100", 100'000'000, 1, {0.9, 1.1})};
  result.candidates[0].failure_rate.per_hour_band = {0.02, 0.2};
  const std::vector<Standard> standards = {On("s", "a100",
                                              DefaultRecipeClass(result.recipe),
                                              absl::FromUnixSeconds(1))};
  ApplyStandard(standards, &result);
  EXPECT_TRUE(result.standard->contradicted);
  EXPECT_THAT(result.standard->contradictions[0],
              HasSubstr("fails more often"));
}

TEST(StandardTest, APoolARuleRejectsNowIsNotRankedButSaysWhy) {
  PlanResult result;
  result.recipe = Lora(16, 2048);
  result.candidates = {Measured("l40s", 100'000'000, 1, {0.9, 1.1})};
  result.rejections = {{"a100", "A100-SXM4-80GB", "max_gpus", "too many"}};
  const std::vector<Standard> standards = {On("s", "a100",
                                              DefaultRecipeClass(result.recipe),
                                              absl::FromUnixSeconds(1))};
  ApplyStandard(standards, &result);
  EXPECT_FALSE(result.standard->applied);
  EXPECT_THAT(result.standard->reason, HasSubstr("max_gpus"));
  EXPECT_EQ(result.candidates[0].pool_name, "l40s");
}

}  // namespace
}  // namespace placement::core
