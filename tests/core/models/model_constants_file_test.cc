#include "core/models/model_constants_file.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/core/test_catalog.h"

namespace placement::core {
namespace {

using ::testing::HasSubstr;

ModelConstants Shipped() {
  return {ShippedMemoryModelConstants(), ShippedStepTimeModelConstants()};
}

absl::StatusOr<ModelConstants> Parse(const std::string& body) {
  return ParseModelConstants(
      absl::StrCat("placement-model-constants 1\n", body), Shipped());
}

TEST(ModelConstantsFileTest, FormatReadsBackTheSameConstantsExactly) {
  ModelConstants c = Shipped();
  c.memory.logits_bytes_chunked = 5.123456789012345;
  c.memory.frameworks[static_cast<int>(TrainingFramework::kTorchtune)]
      .activation_scale = 0.87;
  c.step_time.sku_family_factor["L4"] = 0.91;
  c.step_time.layer_overhead_s = 1.1e-3;
  c.step_time.fp8_factor = 0.71;
  c.step_time.adapter_module_overhead_s = 0.2e-3;
  // Parsed over the analytic constants, so that every value must come from
  // the text.
  const ModelConstants analytic{AnalyticMemoryModelConstants(),
                                AnalyticStepTimeModelConstants()};
  absl::StatusOr<ModelConstants> back = ParseModelConstants(
      FormatModelConstants(c, "fitted on\ntwo lines"), analytic);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(FormatModelConstants(*back), FormatModelConstants(c));
  EXPECT_EQ(back->memory.logits_bytes_chunked, 5.123456789012345);
  EXPECT_EQ(
      back->memory.frameworks[static_cast<int>(TrainingFramework::kTorchtune)]
          .activation_scale,
      0.87);
  EXPECT_EQ(back->step_time.sku_family_factor.at("L4"), 0.91);
  EXPECT_EQ(back->step_time.fp8_factor, 0.71);
  EXPECT_EQ(back->step_time.adapter_module_overhead_s, 0.2e-3);
  EXPECT_EQ(back->step_time.sku_family_factor.at("A100"),
            c.step_time.sku_family_factor.at("A100"));
}

TEST(ModelConstantsFileTest, AConstantNotNamedKeepsItsBaseValue) {
  absl::StatusOr<ModelConstants> c =
      Parse("# re-fitted slack only\n\nmemory.reserved_slack_fraction 0.2\n");
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->memory.reserved_slack_fraction, 0.2);
  EXPECT_EQ(c->memory.logits_bytes_standard,
            ShippedMemoryModelConstants().logits_bytes_standard);
  EXPECT_EQ(c->step_time.full_factor,
            ShippedStepTimeModelConstants().full_factor);
}

TEST(ModelConstantsFileTest, RefusesWhatCannotBeAConstantNamingTheLine) {
  auto error = [](const std::string& body) {
    absl::StatusOr<ModelConstants> c = Parse(body);
    EXPECT_FALSE(c.ok()) << body;
    EXPECT_EQ(c.status().code(), absl::StatusCode::kInvalidArgument);
    return std::string(c.status().message());
  };
  EXPECT_THAT(
      error("memory.logits_bytes_standad 14\n"),
      HasSubstr("line 2: unknown constant memory.logits_bytes_standad"));
  EXPECT_THAT(error("memory.logits_bytes_standard nan\n"),
              HasSubstr("not a finite number"));
  EXPECT_THAT(error("memory.logits_bytes_standard 14 GB\n"),
              HasSubstr("expected \"name value\""));
  EXPECT_THAT(error("memory.reserved_slack_fraction 1.5\n"),
              HasSubstr("must be in [0, 1]"));
  EXPECT_THAT(error("memory.framework.LITGPT.activation_scale 0\n"),
              HasSubstr("must be > 0"));
  EXPECT_THAT(error("step_time.base_mfu 1.2\n"),
              HasSubstr("must be in (0, 1]"));
  EXPECT_THAT(error("step_time.sku_family_factor.A100 -1\n"),
              HasSubstr("must be > 0"));
  EXPECT_THAT(error("step_time.full_factor 1\n\nstep_time.full_factor 2\n"),
              HasSubstr("line 4: step_time.full_factor is given twice"));
  absl::StatusOr<ModelConstants> headless =
      ParseModelConstants("memory.logits_bytes_standard 14\n", Shipped());
  ASSERT_FALSE(headless.ok());
  EXPECT_THAT(headless.status().message(),
              HasSubstr("line 1: expected the header"));
  EXPECT_FALSE(ParseModelConstants("# nothing\n", Shipped()).ok());
}

TEST(ModelConstantsFileTest, InstalledConstantsAreWhatTheModelsPredictWith) {
  const GpuSku& a100 = testing::Sku("A100-SXM4-80GB");
  Recipe recipe;
  recipe.model = "Llama-3.1-8B";
  recipe.method = FineTuneMethod::kLora;
  recipe.lora_rank = 16;
  recipe.sequence_length = 2048;
  recipe.micro_batch_size = 4;
  recipe.gpu_count = 1;
  const Recipe normalized = NormalizeRecipe(recipe);
  absl::StatusOr<MemoryBreakdown> shipped_memory =
      PredictPeakMemory(normalized);
  ASSERT_TRUE(shipped_memory.ok()) << shipped_memory.status();
  const Pool pool = testing::TrainingPool("a100", a100.id, Fabric::kNvlink);
  absl::StatusOr<StepTimeEstimate> shipped_time =
      EstimateStepTime(normalized, a100, pool);
  ASSERT_TRUE(shipped_time.ok()) << shipped_time.status();

  ModelConstants c = Shipped();
  c.memory.cuda_context_gb += 2;    // every prediction holds 2 GB more
  c.step_time.adapter_factor /= 2;  // adapters at half the efficiency
  InstallModelConstants(c);
  const absl::StatusOr<MemoryBreakdown> memory = PredictPeakMemory(normalized);
  const absl::StatusOr<StepTimeEstimate> time =
      EstimateStepTime(normalized, a100, pool);
  InstallModelConstants(Shipped());  // the other tests' constants
  ASSERT_TRUE(memory.ok() && time.ok());
  EXPECT_NEAR(memory->total_gb, shipped_memory->total_gb + 2, 1e-9);
  EXPECT_GT(time->step_time_s, 1.3 * shipped_time->step_time_s);
  EXPECT_EQ(CurrentModelConstants().memory.cuda_context_gb,
            ShippedMemoryModelConstants().cuda_context_gb);
}

}  // namespace
}  // namespace placement::core
