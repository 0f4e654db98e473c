#include "core/models/band_calibration.h"

#include "gtest/gtest.h"

namespace placement::core {
namespace {

Recipe Of(FineTuneMethod method, TrainingFramework framework) {
  Recipe r;
  r.method = method;
  r.framework = framework;
  return r;
}

TEST(BandCalibrationTest, RecipesWithoutACellGetTheOtherRecipesBand) {
  const Recipe full =
      Of(FineTuneMethod::kFull, TrainingFramework::kHfTransformersPeft);
  EXPECT_EQ(MemoryBandFactors(full), kMemoryBandOtherRecipes);
  EXPECT_EQ(StepTimeBandFor(full, 2), StepTimeBand(2));
  const Recipe head =
      Of(FineTuneMethod::kHeadOnly, TrainingFramework::kUnspecified);
  EXPECT_EQ(MemoryBandFactors(head), kMemoryBandOtherRecipes);
  // QLoRA's memory is wider than the pooled band (the callers' default).
  const Recipe qlora = Of(FineTuneMethod::kQlora, TrainingFramework::kLitgpt);
  const Band band = MemoryBandFor(qlora, 10);
  EXPECT_LE(band.low, MemoryBand(10).low);
  EXPECT_GT(band.high, MemoryBand(10).high);
}

TEST(BandCalibrationTest, LoraMemoryHasItsOwnCell) {
  const Recipe lora = Of(FineTuneMethod::kLora, TrainingFramework::kLitgpt);
  EXPECT_EQ(MemoryBandFactors(lora), (BandFactors{0.95, 1.15}));
  const Band band = MemoryBandFor(lora, 20);
  EXPECT_DOUBLE_EQ(band.low, 19);
  EXPECT_DOUBLE_EQ(band.high, 23);
}

TEST(BandCalibrationTest, AFrameworkCellBeatsItsGroupsCell) {
  const BandCell cells[] = {
      {BandMethodGroup::kQlora, std::nullopt, {0.9, 1.3}},
      {BandMethodGroup::kQlora, TrainingFramework::kLitgpt, {1.0, 1.5}},
  };
  const BandFactors pooled = {0.95, 1.25};
  EXPECT_EQ(CellBandFactors(cells, BandMethodGroup::kQlora,
                            TrainingFramework::kLitgpt, pooled),
            (BandFactors{1.0, 1.5}));
  EXPECT_EQ(CellBandFactors(cells, BandMethodGroup::kQlora,
                            TrainingFramework::kAxolotl, pooled),
            (BandFactors{0.9, 1.3}));
  EXPECT_EQ(CellBandFactors(cells, BandMethodGroup::kLora,
                            TrainingFramework::kLitgpt, pooled),
            pooled);
}

TEST(BandCalibrationTest, ExtrapolationOnlyWidens) {
  for (FineTuneMethod method :
       {FineTuneMethod::kFull, FineTuneMethod::kLora, FineTuneMethod::kQlora,
        FineTuneMethod::kHeadOnly}) {
    const Recipe r = Of(method, TrainingFramework::kHfTransformersPeft);
    const BandFactors memory = MemoryBandFactors(r);
    const BandFactors time = StepTimeBandFactors(r);
    for (const Extrapolation& e :
         {Extrapolation{.model_size = true}, Extrapolation{.sku = true},
          Extrapolation{.layout = true},
          Extrapolation{.model_size = true, .sku = true, .layout = true}}) {
      const BandFactors wide_memory = MemoryBandFactors(r, e);
      EXPECT_LE(wide_memory.low, memory.low);
      EXPECT_GE(wide_memory.high, memory.high);
      const BandFactors wide_time = StepTimeBandFactors(r, e);
      EXPECT_LE(wide_time.low, time.low);
      EXPECT_GE(wide_time.high, time.high);
    }
  }
  // LoRA's narrower memory cell grows back where the layout was never
  // measured.
  const Recipe lora = Of(FineTuneMethod::kLora, TrainingFramework::kLitgpt);
  EXPECT_EQ(MemoryBandFactors(lora, {.layout = true}),
            kMemoryBandLayoutExtrapolation);
  // Every extrapolation at once takes the widest edges of each.
  EXPECT_EQ(StepTimeBandFactors(lora, {.model_size = true, .layout = true}),
            (BandFactors{kStepTimeBandLayoutExtrapolation.low,
                         kStepTimeBandLayoutExtrapolation.high}));
}

TEST(BandCalibrationTest, EveryBandHoldsItsEstimate) {
  for (const BandCell& cell : kMemoryBandCells) {
    EXPECT_LE(cell.factors.low, 1);
    EXPECT_GE(cell.factors.high, 1);
  }
  for (const BandFactors& f :
       {kMemoryBandModelSizeExtrapolation, kMemoryBandSkuExtrapolation,
        kMemoryBandLayoutExtrapolation, kStepTimeBandModelSizeExtrapolation,
        kStepTimeBandSkuExtrapolation, kStepTimeBandLayoutExtrapolation}) {
    EXPECT_LE(f.low, 1);
    EXPECT_GE(f.high, 1);
  }
}

}  // namespace
}  // namespace placement::core
