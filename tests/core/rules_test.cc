#include "core/rules.h"

#include "gtest/gtest.h"
#include "tests/core/test_catalog.h"

namespace placement::core {
namespace {

using testing::Sku;
using testing::TestCatalog;
using testing::TrainingPool;

Recipe LoraRecipe(int gpus, Parallelism parallelism, int tp = 0) {
  Recipe r;
  r.model = "Llama-3.1-8B";
  r.method = FineTuneMethod::kLora;
  r.lora_rank = 16;
  r.sequence_length = 2048;
  r.gpu_count = gpus;
  r.parallelism = parallelism;
  r.tensor_parallel_degree = tp;
  return NormalizeRecipe(r);
}

TEST(ExactSkuRuleTest, AmbiguousFamilyNameIsRejected) {
  const ExactSkuResult a100 = CheckExactSku("A100", TestCatalog());
  ASSERT_TRUE(a100.rejection.has_value());
  EXPECT_EQ(a100.rejection->rule, kExactSkuRule);
  EXPECT_FALSE(a100.sku.has_value());
  const ExactSkuResult exact = CheckExactSku("a100-sxm4-80gb", TestCatalog());
  ASSERT_TRUE(exact.sku.has_value());
  EXPECT_EQ(exact.sku->id, "A100-SXM4-80GB");
}

TEST(FitWithoutOffloadRuleTest, NeedsHeadroom) {
  const GpuSku& l40s = Sku("L40S-PCIE-48GB");
  EXPECT_TRUE(CheckFitWithoutOffload(40, false, l40s, nullptr).fits);
  // 44 GB + 10% of 48 GB = 48.8 GB > 48 GB.
  const FitVerdict v = CheckFitWithoutOffload(44, false, l40s, nullptr);
  EXPECT_FALSE(v.fits);
  EXPECT_NEAR(v.headroom_gb, 4, 1e-9);
}

TEST(FitWithoutOffloadRuleTest, MeasuredPeakReplacesPrediction) {
  EvidenceStats measured;
  measured.runs = 3;
  measured.p95_peak_memory_gb = 41;
  const FitVerdict v =
      CheckFitWithoutOffload(60, false, Sku("L40S-PCIE-48GB"), &measured);
  EXPECT_TRUE(v.fits);
  EXPECT_TRUE(v.measured);
  EXPECT_EQ(v.peak_gb, 41);
}

TEST(FitWithoutOffloadRuleTest, AnOffloadedRunIsAMiss) {
  EvidenceStats measured;
  measured.runs = 4;
  measured.p95_peak_memory_gb = 30;
  measured.offload_share = 0.25;
  EXPECT_FALSE(
      CheckFitWithoutOffload(30, false, Sku("L40S-PCIE-48GB"), &measured).fits);
}

TEST(FitWithoutOffloadRuleTest, PagedOptimizerIsPossibleOffload) {
  EXPECT_FALSE(
      CheckFitWithoutOffload(10, true, Sku("A100-SXM4-80GB"), nullptr).fits);
}

TEST(OverBoughtRuleTest, FlagsHalfIdleCardOnlyWhenSmallerFits) {
  const GpuSku& a100 = Sku("A100-SXM4-80GB");
  EXPECT_TRUE(CheckOverBought(30, a100, /*smaller_card_fits=*/true));
  EXPECT_FALSE(CheckOverBought(30, a100, /*smaller_card_fits=*/false));
  EXPECT_FALSE(CheckOverBought(45, a100, /*smaller_card_fits=*/true));
}

TEST(CollectivesNeedFabricRuleTest, TensorParallelOnPcieL40sIsRejected) {
  const Pool l40s = TrainingPool("l40s", "L40S-PCIE-48GB", Fabric::kPcie);
  const auto r = CheckCollectivesNeedFabric(LoraRecipe(4, Parallelism::kTensor),
                                            l40s, Sku("L40S-PCIE-48GB"));
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->rule, kCollectivesNeedFabricRule);
  // Even a pair: sharding opens collectives every step.
  EXPECT_TRUE(CheckCollectivesNeedFabric(LoraRecipe(2, Parallelism::kFsdp),
                                         l40s, Sku("L40S-PCIE-48GB")));
}

TEST(CollectivesNeedFabricRuleTest, DataParallelPairAllowedOnPcie) {
  const Pool l40s = TrainingPool("l40s", "L40S-PCIE-48GB", Fabric::kPcie);
  const GpuSku& sku = Sku("L40S-PCIE-48GB");
  EXPECT_FALSE(CheckCollectivesNeedFabric(LoraRecipe(1, Parallelism::kSingle),
                                          l40s, sku));
  EXPECT_FALSE(
      CheckCollectivesNeedFabric(LoraRecipe(2, Parallelism::kDdp), l40s, sku));
  EXPECT_FALSE(CheckCollectivesNeedFabric(LoraRecipe(2, Parallelism::kZero2),
                                          l40s, sku));
  EXPECT_TRUE(
      CheckCollectivesNeedFabric(LoraRecipe(4, Parallelism::kDdp), l40s, sku));
}

TEST(CollectivesNeedFabricRuleTest, BridgedPairsAreNvlinkForTwoOnly) {
  const Pool bridged =
      TrainingPool("a100-pcie", "A100-PCIE-80GB", Fabric::kNvlink);
  const GpuSku& sku = Sku("A100-PCIE-80GB");
  EXPECT_FALSE(CheckCollectivesNeedFabric(LoraRecipe(2, Parallelism::kTensor),
                                          bridged, sku));
  EXPECT_TRUE(CheckCollectivesNeedFabric(LoraRecipe(4, Parallelism::kFsdp),
                                         bridged, sku));
  const Pool hgx = TrainingPool("a100-sxm", "A100-SXM4-80GB", Fabric::kNvlink);
  EXPECT_FALSE(CheckCollectivesNeedFabric(LoraRecipe(8, Parallelism::kTensor),
                                          hgx, Sku("A100-SXM4-80GB")));
}

TEST(EvidenceBeatsEstimatesRuleTest, MeasuredThenTransferredThenEstimated) {
  EvidenceStats measured;
  measured.runs = 3;
  measured.successful_runs = 3;
  EXPECT_EQ(ChooseEvidence(&measured, nullptr).basis, EvidenceBasis::kMeasured);
  EXPECT_EQ(ChooseEvidence(&measured, nullptr).confidence, Confidence::kHigh);
  measured.successful_runs = 1;
  EXPECT_EQ(ChooseEvidence(&measured, nullptr).confidence, Confidence::kMedium);
  TransferredEvidence transferred;
  transferred.stats.runs = 5;
  transferred.stats.successful_runs = 5;
  EXPECT_EQ(ChooseEvidence(&measured, &transferred).basis,
            EvidenceBasis::kMeasured);
  EXPECT_EQ(ChooseEvidence(nullptr, &transferred).basis,
            EvidenceBasis::kTransferred);
  EXPECT_EQ(ChooseEvidence(nullptr, nullptr).basis, EvidenceBasis::kEstimated);
  EXPECT_EQ(ChooseEvidence(nullptr, nullptr).confidence, Confidence::kLow);
}

TEST(RetriesCostMoneyRuleTest, FailuresAreInTheNumerator) {
  EvidenceStats s;
  s.runs = 4;
  s.gpu_hours = 40;  // includes two failed runs
  s.steps_succeeded = 1000;
  EXPECT_DOUBLE_EQ(*GpuHoursPerSuccessfulStep(s), 0.04);
  EXPECT_FALSE(CheckRetriesCostMoney(s));
  s.steps_succeeded = 0;
  EXPECT_FALSE(GpuHoursPerSuccessfulStep(s));
  ASSERT_TRUE(CheckRetriesCostMoney(s));
  EXPECT_EQ(CheckRetriesCostMoney(s)->rule, kRetriesCostMoneyRule);
}

TEST(TrainingStaysOffServingPoolsRuleTest, ServingAndSharedPoolsRejected) {
  Pool pool = TrainingPool("h100-serve", "H100-SXM5-80GB", Fabric::kNvlink);
  EXPECT_FALSE(CheckTrainingStaysOffServingPools(pool));
  pool.purpose = PoolPurpose::kServing;
  EXPECT_TRUE(CheckTrainingStaysOffServingPools(pool));
  pool.purpose = PoolPurpose::kTraining;
  pool.exclusive = false;
  EXPECT_TRUE(CheckTrainingStaysOffServingPools(pool));
}

TEST(QuotaRuleTest, QuotaSizeAndMaxGpusCap) {
  Pool pool = TrainingPool("a100", "A100-SXM4-80GB", Fabric::kNvlink);
  pool.gpu_quota = 4;
  EXPECT_FALSE(CheckQuota(LoraRecipe(4, Parallelism::kDdp), pool, 0));
  EXPECT_TRUE(CheckQuota(LoraRecipe(8, Parallelism::kDdp), pool, 0));
  EXPECT_TRUE(CheckQuota(LoraRecipe(4, Parallelism::kDdp), pool, 2));
  pool.gpu_quota = 0;
  EXPECT_TRUE(CheckQuota(LoraRecipe(1, Parallelism::kSingle), pool, 0));
}

TEST(ServeWhatYouEvaluatedRuleTest, EvalWhenSkuOrPrecisionDiffers) {
  const Recipe r = LoraRecipe(1, Parallelism::kSingle);  // BF16
  EXPECT_FALSE(CheckServeWhatYouEvaluated(r, "L40S-PCIE-48GB", "L40S-PCIE-48GB",
                                          Precision::kBf16));
  EXPECT_FALSE(CheckServeWhatYouEvaluated(r, "L40S-PCIE-48GB", "L40S-PCIE-48GB",
                                          Precision::kUnspecified));
  EXPECT_TRUE(CheckServeWhatYouEvaluated(r, "A100-SXM4-80GB", "L40S-PCIE-48GB",
                                         Precision::kBf16));
  EXPECT_TRUE(CheckServeWhatYouEvaluated(r, "L40S-PCIE-48GB", "L40S-PCIE-48GB",
                                         Precision::kFp8));
}

}  // namespace
}  // namespace placement::core
