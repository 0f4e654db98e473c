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

TEST(BandCalibrationTest, RecipesWithoutACellGetTheCalibratedBand) {
  for (FineTuneMethod method :
       {FineTuneMethod::kFull, FineTuneMethod::kLora, FineTuneMethod::kQlora,
        FineTuneMethod::kHeadOnly}) {
    const Recipe r = Of(method, TrainingFramework::kLitgpt);
    EXPECT_EQ(MemoryBandFactors(r), kMemoryBandCalibrated);
    EXPECT_EQ(StepTimeBandFactors(r), kStepTimeBandCalibrated);
  }
  const Recipe lora = Of(FineTuneMethod::kLora, TrainingFramework::kLitgpt);
  const Band memory = MemoryBandFor(lora, 20);
  EXPECT_DOUBLE_EQ(memory.low, 18);
  EXPECT_DOUBLE_EQ(memory.high, 26);
  const Band time = StepTimeBandFor(lora, 2);
  EXPECT_DOUBLE_EQ(time.low, 0.6);
  EXPECT_DOUBLE_EQ(time.high, 3.6);
}

TEST(BandCalibrationTest, CalibratedBandsAreAtLeastThePooledOnes) {
  // Calibrated to hold 80% of a new publication's runs, they are wider
  // than the p10..p90 the planner's MemoryBand()/StepTimeBand() keep.
  EXPECT_LE(kMemoryBandCalibrated.low, kMemoryBandLowFactor);
  EXPECT_GE(kMemoryBandCalibrated.high, kMemoryBandHighFactor);
  EXPECT_LE(kStepTimeBandCalibrated.low, kStepTimeBandLowFactor);
  EXPECT_GE(kStepTimeBandCalibrated.high, kStepTimeBandHighFactor);
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
  // A layout never measured reaches past the calibrated band: the union
  // takes the widest edge of each.
  const Recipe lora = Of(FineTuneMethod::kLora, TrainingFramework::kLitgpt);
  EXPECT_EQ(MemoryBandFactors(lora, {.layout = true}),
            (BandFactors{kMemoryBandCalibrated.low,
                         kMemoryBandLayoutExtrapolation.high}));
  EXPECT_EQ(StepTimeBandFactors(lora, {.model_size = true, .layout = true}),
            (BandFactors{kStepTimeBandCalibrated.low,
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
