#include "core/evidence/layout_memory.h"

#include "gtest/gtest.h"

namespace placement::core {
namespace {

// A full fine-tune of the 3B Llama at 2048 tokens in `gpus` GPUs with
// `parallelism`.
Recipe Full3b(int gpus, Parallelism parallelism) {
  Recipe r;
  r.model = "Llama-3.2-3B";
  r.method = FineTuneMethod::kFull;
  r.precision = Precision::kBf16;
  r.optimizer = Optimizer::kAdamW;
  r.sequence_length = 2048;
  r.micro_batch_size = 2;
  r.gpu_count = gpus;
  r.parallelism = parallelism;
  return NormalizeRecipe(r);
}

double Predicted(const Recipe& r) {
  return PredictPeakMemory(r, *ResolveArchitecture(r),
                           DefaultMemoryModelConstants())
      .total_gb;
}

// Runs of `recipe` whose largest peak was `peak_gb`: all succeeded, or
// none did (it ran out of memory at start).
KeyedEvidence Measured(const Recipe& recipe, double peak_gb, bool succeeded) {
  KeyedEvidence e;
  e.recipe = recipe;
  e.stats.recipe_key = RecipeKey(recipe);
  e.stats.sku_id = "A100-PCIE-40GB";
  e.stats.runs = 2;
  e.stats.successful_runs = succeeded ? 2 : 0;
  e.stats.max_peak_memory_gb = peak_gb;
  e.stats.peak_memory_gb = peak_gb;
  return e;
}

TEST(SiblingLayoutMemoryTest, AnOutOfMemoryRaisesTheOtherLayoutsByItsExcess) {
  const Recipe one = Full3b(1, Parallelism::kSingle);
  const Recipe fsdp2 = Full3b(2, Parallelism::kFsdp);
  // One card ran out of memory having reached 12% more than predicted:
  // the recipe needs at least that much more, on every layout.
  const std::vector<KeyedEvidence> measured = {
      Measured(one, 1.12 * Predicted(one), false)};
  auto scale =
      SiblingLayoutMemory(measured, fsdp2, *ResolveArchitecture(fsdp2));
  ASSERT_TRUE(scale.has_value());
  EXPECT_NEAR(scale->scale, 1.12, 1e-9);
  EXPECT_TRUE(scale->lower_bound);
  EXPECT_EQ(scale->recipe_key, RecipeKey(one));
  EXPECT_EQ(scale->recipe.gpu_count, 1);
  // Not its own layout: that is the layout's own evidence.
  EXPECT_FALSE(SiblingLayoutMemory(measured, one, *ResolveArchitecture(one))
                   .has_value());
}

TEST(SiblingLayoutMemoryTest, TheLargestExcessOfASucceededSiblingExactly) {
  const Recipe one = Full3b(1, Parallelism::kSingle);
  const Recipe fsdp2 = Full3b(2, Parallelism::kFsdp);
  const Recipe fsdp4 = Full3b(4, Parallelism::kFsdp);
  const std::vector<KeyedEvidence> measured = {
      Measured(fsdp2, 1.10 * Predicted(fsdp2), true),
      Measured(fsdp4, 1.20 * Predicted(fsdp4), true)};
  auto scale = SiblingLayoutMemory(measured, one, *ResolveArchitecture(one));
  ASSERT_TRUE(scale.has_value());
  EXPECT_NEAR(scale->scale, 1.20, 1e-9);
  EXPECT_FALSE(scale->lower_bound);
  EXPECT_EQ(scale->recipe.gpu_count, 4);
}

TEST(SiblingLayoutMemoryTest, NeverLowersAndSkipsWhatIsNotTheRecipesNeed) {
  const Recipe one = Full3b(1, Parallelism::kSingle);
  const Recipe fsdp2 = Full3b(2, Parallelism::kFsdp);
  const auto arch = *ResolveArchitecture(one);
  // Below its prediction: the prediction stands.
  EXPECT_FALSE(SiblingLayoutMemory(
                   {Measured(fsdp2, 0.8 * Predicted(fsdp2), true)}, one, arch)
                   .has_value());
  // Offloaded: its peak is not what the recipe needs on the GPU.
  KeyedEvidence offloaded = Measured(fsdp2, 1.5 * Predicted(fsdp2), true);
  offloaded.stats.offload_share = 0.5;
  EXPECT_FALSE(SiblingLayoutMemory({offloaded}, one, arch).has_value());
  // Another optimizer holds other states: not a sibling.
  Recipe adam8 = fsdp2;
  adam8.optimizer = Optimizer::kAdamW8bit;
  EXPECT_FALSE(IsSiblingLayout(adam8, one));
  EXPECT_FALSE(SiblingLayoutMemory(
                   {Measured(adam8, 1.5 * Predicted(adam8), true)}, one, arch)
                   .has_value());
  // Another length of the same recipe in another layout is a sibling.
  Recipe longer = fsdp2;
  longer.sequence_length = 4096;
  EXPECT_TRUE(IsSiblingLayout(longer, one));
}

// The sibling whose succeeded runs checked a prediction: the most above its
// figure, else the least below; one that only ran out of memory, or
// offloaded, checked nothing exactly.
TEST(SucceededSiblingLayoutTest, TheMostAboveItsFigureOfThoseThatSucceeded) {
  const Recipe one = Full3b(1, Parallelism::kSingle);
  const Recipe fsdp2 = Full3b(2, Parallelism::kFsdp);
  const Recipe fsdp4 = Full3b(4, Parallelism::kFsdp);
  const auto arch = *ResolveArchitecture(one);
  EXPECT_FALSE(SucceededSiblingLayout({}, one, arch).has_value());
  // Below its figure: it still checks the prediction (which it does not
  // lower: SiblingLayoutMemory).
  auto below =
      SucceededSiblingLayout({Measured(fsdp2, 0.92 * Predicted(fsdp2), true),
                              Measured(fsdp4, 0.97 * Predicted(fsdp4), true)},
                             one, arch);
  ASSERT_TRUE(below.has_value());
  EXPECT_NEAR(below->scale, 0.97, 1e-9);
  EXPECT_EQ(below->recipe.gpu_count, 4);
  EXPECT_FALSE(below->lower_bound);
  // An out-of-memory run is a lower bound; an offloaded one is not the
  // recipe's need on the GPU; the target's own layout is its own evidence.
  KeyedEvidence offloaded = Measured(fsdp4, Predicted(fsdp4), true);
  offloaded.stats.offload_share = 0.5;
  EXPECT_FALSE(
      SucceededSiblingLayout({Measured(fsdp2, 1.1 * Predicted(fsdp2), false),
                              offloaded, Measured(one, Predicted(one), true)},
                             one, arch)
          .has_value());
  EXPECT_TRUE(IsSameRecipeInAnyLayout(one, one));
  EXPECT_FALSE(IsSiblingLayout(one, one));
}

}  // namespace
}  // namespace placement::core
