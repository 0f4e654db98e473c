#include "core/plan/rules.h"

#include "gmock/gmock.h"
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

// The band is the memory model's error on publications held out of its
// fit: 0.90x..1.55x of the prediction (core/models/band_calibration.h),
// against the card less a 1 GB reserve (47 GB on an L40S, a GDDR card
// taken at its nominal 48 GB).
TEST(FitWithoutOffloadRuleTest, ThreeVerdictsFromTheBand) {
  const GpuSku& l40s = Sku("L40S-PCIE-48GB");
  // 28 GB: band 25.2-43.4 GB, within 47 GB; an OOM is unlikely (4%).
  FitVerdict v = CheckFitWithoutOffload(28, false, l40s, nullptr);
  EXPECT_EQ(v.fit, Fit::kFits);
  EXPECT_NEAR(v.band.high, 43.4, 1e-9);
  EXPECT_LT(v.oom_probability, 0.05);
  // 44 GB (once rejected by a flat 10% headroom): band 39.6-68.2 GB, and
  // a real chance of running out of memory.
  v = CheckFitWithoutOffload(44, false, l40s, nullptr);
  EXPECT_EQ(v.fit, Fit::kBorderline);
  EXPECT_TRUE(v.fits);
  EXPECT_NEAR(v.headroom_gb, 4, 1e-9);
  EXPECT_GT(v.oom_probability, 0.3);
  EXPECT_LT(v.oom_probability, 0.7);
  // 56 GB: even the lower edge (50.4 GB) is over.
  v = CheckFitWithoutOffload(56, false, l40s, nullptr);
  EXPECT_EQ(v.fit, Fit::kDoesNotFit);
  EXPECT_FALSE(v.fits);
  // A request's headroom fraction replaces the reserve when larger: 29 GB
  // (band 26.1-45.0 GB) FITS with the 1 GB reserve but straddles 43.2 GB
  // with 10% kept free (4.8 GB).
  EXPECT_EQ(CheckFitWithoutOffload(29, false, l40s, nullptr).fit, Fit::kFits);
  EXPECT_EQ(CheckFitWithoutOffload(29, false, l40s, nullptr, 0.10).fit,
            Fit::kBorderline);
  // Where the estimate extrapolates, the band the caller passes widens it:
  // 29 GB with a framework no calibrated run used (0.95x..1.60x) reaches
  // 46.4 GB, still within 47 GB.
  v = CheckFitWithoutOffload(29, false, l40s, nullptr, 0, false, true,
                             MemoryBandFactors({}, {.framework = true}));
  EXPECT_NEAR(v.band.high, 29 * kMemoryBandFrameworkExtrapolation.high, 1e-9);
  EXPECT_EQ(v.fit, Fit::kFits);
}

TEST(FitWithoutOffloadRuleTest, MeasuredPeakReplacesPrediction) {
  EvidenceStats measured;
  measured.runs = 3;
  measured.peak_memory_gb = 41;
  const FitVerdict v =
      CheckFitWithoutOffload(60, false, Sku("L40S-PCIE-48GB"), &measured);
  EXPECT_TRUE(v.fits);
  EXPECT_TRUE(v.measured);
  EXPECT_EQ(v.peak_gb, 41);
  // Narrow (+-6%), so 41 GB FITS where a prediction of 41 GB would be
  // BORDERLINE.
  EXPECT_EQ(v.fit, Fit::kFits);
  EXPECT_NEAR(v.band.high, 41 * 1.06, 1e-9);
  EXPECT_EQ(
      CheckFitWithoutOffload(41, false, Sku("L40S-PCIE-48GB"), nullptr).fit,
      Fit::kBorderline);
}

// The same recipe's runs on a smaller card all succeeded: their peak is at
// most that card's memory, which a larger card holds whatever the estimate
// band says. A ceiling above the card proves nothing there.
TEST(FitWithoutOffloadRuleTest, RunsThatSucceededOnASmallerCardProveAFit) {
  EvidenceStats transferred;
  transferred.runs = 2;
  transferred.successful_runs = 2;
  transferred.peak_memory_gb = 38;
  const GpuSku& l40s = Sku("L40S-PCIE-48GB");
  const FitVerdict estimated =
      CheckFitWithoutOffload(38, false, l40s, &transferred, 0, true);
  EXPECT_EQ(estimated.fit, Fit::kBorderline);
  EXPECT_GT(estimated.oom_probability, 0.05);

  // The transferred peak checked on the L40S against a proven ceiling.
  auto with_ceiling = [&](double peak_gb, const ProvenPeakCeiling& ceiling) {
    transferred.peak_memory_gb = peak_gb;
    return CheckFitWithoutOffload(peak_gb, false, l40s, &transferred, 0, true,
                                  true, kMemoryBandCalibrated, &ceiling);
  };
  const ProvenPeakCeiling a100_40{42.5, "A100-PCIE-40GB"};
  const FitVerdict proven = with_ceiling(38, a100_40);
  EXPECT_EQ(proven.fit, Fit::kFits);
  EXPECT_EQ(proven.oom_probability, 0);
  EXPECT_DOUBLE_EQ(proven.band.high, 42.5);
  EXPECT_FALSE(proven.measured);
  EXPECT_NE(proven.reason.find("every run of this recipe on A100-PCIE-40GB "
                               "succeeded within (its 42.5 GB usable)"),
            std::string::npos)
      << proven.reason;

  // A ceiling the card cannot hold with its reserve: the band as before.
  const ProvenPeakCeiling a100_80{85, "A100-SXM4-80GB"};
  EXPECT_EQ(with_ceiling(38, a100_80).fit, Fit::kBorderline);
  const ProvenPeakCeiling tight{47.5, "L4"};
  EXPECT_EQ(with_ceiling(38, tight).fit, Fit::kBorderline);

  // A band already under the ceiling is not "held" there: the reason says
  // what the band says, and the proof still leaves no risk.
  const FitVerdict under = with_ceiling(20, a100_40);
  EXPECT_EQ(under.fit, Fit::kFits);
  EXPECT_EQ(under.oom_probability, 0);
  EXPECT_LT(under.band.high, 42.5);
  EXPECT_NE(under.reason.find("FITS, even at the band's upper edge"),
            std::string::npos)
      << under.reason;
}

TEST(FitWithoutOffloadRuleTest, AnOffloadedRunIsAMiss) {
  EvidenceStats measured;
  measured.runs = 4;
  measured.peak_memory_gb = 30;
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
  EXPECT_THAT(r->reason, ::testing::HasSubstr("PCIe"));
  // Even a pair of PCIe cards cannot be a tensor-parallel group.
  EXPECT_TRUE(CheckCollectivesNeedFabric(LoraRecipe(2, Parallelism::kTensor),
                                         l40s, Sku("L40S-PCIE-48GB")));
}

// The guide words PCIe as a cost, not a veto, for data parallel: FSDP over
// PCIe cards is allowed, with a warning (its communication is estimated).
TEST(CollectivesNeedFabricRuleTest, ShardedDataParallelOnPcieIsWarned) {
  const Pool l40s = TrainingPool("l40s", "L40S-PCIE-48GB", Fabric::kPcie);
  const GpuSku& sku = Sku("L40S-PCIE-48GB");
  const Recipe fsdp = LoraRecipe(2, Parallelism::kFsdp);
  EXPECT_FALSE(CheckCollectivesNeedFabric(fsdp, l40s, sku));
  const std::vector<std::string> w = CollectiveFabricWarnings(fsdp, l40s, sku);
  ASSERT_EQ(w.size(), 1u);
  EXPECT_THAT(w[0], ::testing::StartsWith(kCollectivesNeedFabricRule));
  EXPECT_THAT(w[0], ::testing::HasSubstr("crosses PCIe"));
  const Pool hgx = TrainingPool("a100-sxm", "A100-SXM4-80GB", Fabric::kNvlink);
  EXPECT_TRUE(CollectiveFabricWarnings(LoraRecipe(8, Parallelism::kFsdp), hgx,
                                       Sku("A100-SXM4-80GB"))
                  .empty());
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
  // Changed on purpose: DDP over 4 PCIe cards is a candidate with a warning,
  // no longer a rejection.
  EXPECT_FALSE(
      CheckCollectivesNeedFabric(LoraRecipe(4, Parallelism::kDdp), l40s, sku));
  EXPECT_FALSE(
      CollectiveFabricWarnings(LoraRecipe(4, Parallelism::kDdp), l40s, sku)
          .empty());
}

TEST(CollectivesNeedFabricRuleTest, BridgedPairsAreNvlinkForTwoOnly) {
  const Pool bridged =
      TrainingPool("a100-pcie", "A100-PCIE-80GB", Fabric::kNvlink);
  const GpuSku& sku = Sku("A100-PCIE-80GB");
  EXPECT_FALSE(CheckCollectivesNeedFabric(LoraRecipe(2, Parallelism::kTensor),
                                          bridged, sku));
  EXPECT_TRUE(CheckCollectivesNeedFabric(LoraRecipe(4, Parallelism::kTensor),
                                         bridged, sku));
  EXPECT_FALSE(CheckCollectivesNeedFabric(LoraRecipe(4, Parallelism::kFsdp),
                                          bridged, sku));
  const Pool hgx = TrainingPool("a100-sxm", "A100-SXM4-80GB", Fabric::kNvlink);
  EXPECT_FALSE(CheckCollectivesNeedFabric(LoraRecipe(8, Parallelism::kTensor),
                                          hgx, Sku("A100-SXM4-80GB")));
}

TEST(InterNodeFabricRuleTest, TensorParallelNeverSpansNodes) {
  const Pool two_nodes =
      TrainingPool("a100-sxm", "A100-SXM4-80GB", Fabric::kNvlink, 8, 2);
  const auto r = CheckCollectivesNeedFabric(
      LoraRecipe(16, Parallelism::kTensor), two_nodes, Sku("A100-SXM4-80GB"));
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->rule, kCollectivesNeedFabricRule);
  EXPECT_THAT(r->reason, ::testing::HasSubstr("span nodes"));
  // TP 8 inside each node x FSDP across the two: allowed.
  Recipe hybrid = LoraRecipe(16, Parallelism::kFsdp, 8);
  EXPECT_FALSE(
      CheckCollectivesNeedFabric(hybrid, two_nodes, Sku("A100-SXM4-80GB")));
}

TEST(InterNodeFabricRuleTest, NoneKeepsAJobInOneNodeUndeclaredWarns) {
  Pool pool = TrainingPool("a100-sxm", "A100-SXM4-80GB", Fabric::kNvlink, 8, 2);
  const Recipe sixteen = LoraRecipe(16, Parallelism::kFsdp);
  const Recipe eight = LoraRecipe(8, Parallelism::kFsdp);
  // Never declared: allowed, with a warning naming the field.
  EXPECT_FALSE(CheckInterNodeFabric(sixteen, pool));
  auto w = InterNodeFabricWarning(sixteen, pool);
  ASSERT_TRUE(w.has_value());
  EXPECT_THAT(*w, ::testing::HasSubstr("pool.inter_node_fabric"));
  EXPECT_FALSE(InterNodeFabricWarning(eight, pool));
  // NONE: the job must stay inside a node.
  pool.inter_node_fabric = InterNodeFabric::kNone;
  auto r = CheckInterNodeFabric(sixteen, pool);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->rule, kInterNodeFabricRule);
  EXPECT_FALSE(CheckInterNodeFabric(eight, pool));
  // InfiniBand: allowed, no warning.
  pool.inter_node_fabric = InterNodeFabric::kInfiniband;
  EXPECT_FALSE(CheckInterNodeFabric(sixteen, pool));
  EXPECT_FALSE(InterNodeFabricWarning(sixteen, pool));
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
