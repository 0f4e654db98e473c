#include "core/plan/ranking.h"

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace placement::core {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// A candidate costing `cost_micros` over `hours` of wall time, its step time
// band [1, band_high] around a 1 s step.
Candidate Make(const std::string& pool, EvidenceBasis basis,
               int64_t cost_micros, double hours = 1, double band_high = 1.5,
               Fit fit = Fit::kFits) {
  Candidate c;
  c.pool_name = pool;
  c.sku_id = "L40S-PCIE-48GB";
  c.fit = fit;
  c.fits = true;
  c.basis = basis;
  c.expected_cost_micros = cost_micros;
  c.expected_wall_time = absl::Hours(hours);
  c.step_time_s = 1;
  c.step_time_s_band = {1, band_high};
  return c;
}

// A measured BORDERLINE candidate with its chance of running out of memory.
Candidate Borderline(const std::string& pool, int64_t cost_micros,
                     double oom_probability) {
  Candidate c = Make(pool, EvidenceBasis::kMeasured, cost_micros, 1, 1.5,
                     Fit::kBorderline);
  c.oom_probability = oom_probability;
  return c;
}

std::vector<std::string> Order(const std::vector<Candidate>& candidates) {
  std::vector<std::string> names;
  for (const Candidate& c : candidates) names.push_back(c.pool_name);
  return names;
}

TEST(RankingValueTest, UnmeasuredAtItsPessimisticEdgeMeasuredAtItsFigure) {
  EXPECT_DOUBLE_EQ(RankingValue(Make("a", EvidenceBasis::kEstimated, 1'000'000),
                                Objective::kLowestCost),
                   1'500'000);
  EXPECT_DOUBLE_EQ(
      RankingValue(Make("a", EvidenceBasis::kTransferred, 1'000'000),
                   Objective::kLowestCost),
      1'500'000);
  EXPECT_DOUBLE_EQ(RankingValue(Make("a", EvidenceBasis::kMeasured, 1'000'000),
                                Objective::kLowestCost),
                   1'000'000);
  EXPECT_DOUBLE_EQ(
      RankingValue(Make("a", EvidenceBasis::kEstimated, 1'000'000, 2),
                   Objective::kShortestTime),
      2 * 3600 * 1.5);
}

// The guide: evidence beats estimates. An ESTIMATED pool cheaper only at its
// optimistic edge ranks after the MEASURED one, and says so.
TEST(RankCandidatesTest, MeasuredOutranksEstimateCheaperOnlyWhenOptimistic) {
  std::vector<Candidate> candidates = {
      Make("estimated", EvidenceBasis::kEstimated, 900'000),
      Make("measured", EvidenceBasis::kMeasured, 1'000'000)};
  RankCandidates(Objective::kLowestCost, &candidates);
  EXPECT_THAT(Order(candidates), ElementsAre("measured", "estimated"));
  EXPECT_EQ(candidates[0].rank, 1);
  EXPECT_EQ(candidates[1].rank, 2);
  ASSERT_EQ(candidates[1].reasons.size(), 1u);
  EXPECT_THAT(candidates[1].reasons[0],
              HasSubstr("ranks after MEASURED pool measured"));
}

TEST(RankCandidatesTest, EstimateThatWinsAtItsPessimisticEdgeRanksFirst) {
  std::vector<Candidate> candidates = {
      Make("measured", EvidenceBasis::kMeasured, 1'000'000),
      Make("estimated", EvidenceBasis::kEstimated, 600'000)};
  RankCandidates(Objective::kLowestCost, &candidates);
  EXPECT_THAT(Order(candidates), ElementsAre("estimated", "measured"));
  ASSERT_EQ(candidates[0].reasons.size(), 1u);
  EXPECT_THAT(candidates[0].reasons[0],
              HasSubstr("ranks above MEASURED pool measured"));
}

// A BORDERLINE pool at a third of the FITS one's cost, with a 30% chance of
// running out of memory (then the job goes to the FITS pool): expected
// 0.7 x 3 + 0.3 x 9 = 4.80, so it goes first. Between two BORDERLINE pools
// the risk decides: 3.00 at 90% counts 8.40, 5.00 at 10% counts 5.40.
TEST(RankCandidatesTest, BorderlineRanksByItsRiskPricedAgainstTheFitsPool) {
  Candidate risky = Borderline("risky", 3'000'000, 0.3);
  std::vector<Candidate> candidates = {
      Make("fits", EvidenceBasis::kMeasured, 9'000'000), risky};
  RankCandidates(Objective::kLowestCost, &candidates);
  EXPECT_THAT(Order(candidates), ElementsAre("risky", "fits"));
  EXPECT_THAT(candidates[0].reasons,
              ::testing::Contains(::testing::AllOf(
                  HasSubstr("BORDERLINE, ranks above FITS pool fits: with its "
                            "30% chance of running out of memory priced in "
                            "(the job then goes to fits, "),
                  HasSubstr("it counts at 4.80 (3.00 on its own) against "
                            "9.00"))));
  EXPECT_DOUBLE_EQ(RiskPricedValue(candidates[0], 3'000'000, 9'000'000.0),
                   4'800'000);

  risky.oom_probability = 0.9;
  Candidate safer = Borderline("safer", 5'000'000, 0.1);
  candidates = {Make("fits", EvidenceBasis::kMeasured, 9'000'000), risky,
                safer};
  RankCandidates(Objective::kLowestCost, &candidates);
  EXPECT_THAT(Order(candidates), ElementsAre("safer", "risky", "fits"));

  // Dearer than the FITS pool on its own, it stays after it, however
  // unlikely to run out.
  safer.expected_cost_micros = 9'500'000;
  safer.oom_probability = 0.01;
  candidates = {safer, Make("fits", EvidenceBasis::kMeasured, 9'000'000)};
  RankCandidates(Objective::kLowestCost, &candidates);
  EXPECT_THAT(Order(candidates), ElementsAre("fits", "safer"));
}

// A BORDERLINE candidate sure to run out of memory is no bargain because it
// is a little cheaper on its own: the job pays its lost attempt whole (a
// start-up and a step, here 1.00 of its 8.50) before it goes to the FITS
// pool. 0.05 x 8.50 + 0.95 x 9.00 + 0.95^2 x 1.00 = 9.88 against 9.00; the
// same candidate at 30% still goes first (6.65 + 0.09).
TEST(RankCandidatesTest, BorderlineSureToRunOutPaysItsLostAttemptWhole) {
  Candidate sure = Borderline("sure", 8'500'000, 0.95);
  sure.expected_gpu_hours = 8.5;  // at 1.00 a GPU-hour
  sure.startup_gpu_hours = 0.9;
  sure.step_gpu_hours = 0.1;
  std::vector<Candidate> candidates = {
      Make("fits", EvidenceBasis::kMeasured, 9'000'000), sure};
  RankCandidates(Objective::kLowestCost, &candidates);
  EXPECT_THAT(Order(candidates), ElementsAre("fits", "sure"));
  EXPECT_NEAR(RiskPricedValue(sure, 8'500'000, 9'000'000.0),
              0.05 * 8'500'000 + 0.95 * 9'000'000 + 0.95 * 0.95 * 1'000'000,
              1e-3);

  sure.oom_probability = 0.3;
  candidates = {Make("fits", EvidenceBasis::kMeasured, 9'000'000), sure};
  RankCandidates(Objective::kLowestCost, &candidates);
  EXPECT_THAT(Order(candidates), ElementsAre("sure", "fits"));
  EXPECT_NEAR(RiskPricedValue(sure, 8'500'000, 9'000'000.0),
              0.7 * 8'500'000 + 0.3 * 9'000'000 + 0.09 * 1'000'000, 1e-3);
}

// With nothing that FITS, the risk is priced against the candidate least
// likely to run out of memory, where the job would go next.
TEST(RankCandidatesTest, AllBorderlinePricedAgainstTheLikeliestToFit) {
  std::vector<Candidate> candidates = {Borderline("dear", 5'000'000, 0.1),
                                       Borderline("cheap", 2'000'000, 0.6)};
  // 0.4 x 2 + 0.6 x 5 = 3.80 against 5.00.
  RankCandidates(Objective::kLowestCost, &candidates);
  EXPECT_THAT(Order(candidates), ElementsAre("cheap", "dear"));
  EXPECT_THAT(candidates[0].reasons,
              ::testing::Contains(HasSubstr("ranks above the likeliest to fit, "
                                            "BORDERLINE, pool dear")));
  // Among those cheaper than it, the risk orders them: 0.1 x 1 + 0.9 x 5 =
  // 4.60 ranks after 3.80.
  candidates.push_back(Borderline("cheapest", 1'000'000, 0.9));
  RankCandidates(Objective::kLowestCost, &candidates);
  EXPECT_THAT(Order(candidates), ElementsAre("cheap", "cheapest", "dear"));
}

// The guide's first fine-tune, an 8B LoRA left open, with nothing measured:
// the same one-card configuration is BORDERLINE on a 40 GB A100 (a 30%
// chance of running out of memory) and on a 48 GB L40S (14%), the same
// peak band on both. Should it not fit on the A100 it goes to the L40S
// first, where it fits 1 - 14/30 = 53% of those times, not straight to the
// FITS pool: 0.53 x 6.23 + 0.47 x 11.51 = 8.69, and the A100 counts at
// 0.70 x 5.04 + 0.30 x 8.69 = 6.14 against the L40S's 0.86 x 6.23 + 0.14 x
// 11.51 = 6.97. Priced straight against the FITS pool it counted at 6.98
// and ranked second.
TEST(RankCandidatesTest, AnOutOfMemoryGoesFirstToTheSameLayoutOnALargerCard) {
  auto same_layout = [](const std::string& pool, const std::string& sku,
                        int64_t cost_micros, double oom_probability) {
    Candidate c = Borderline(pool, cost_micros, oom_probability);
    c.sku_id = sku;
    c.recipe_key = "rk1-8b-lora-one-card";
    c.peak_memory_gb = 32.3;
    c.peak_memory_gb_band = {29.0, 50.0};
    return c;
  };
  std::vector<Candidate> candidates = {
      Make("a100-80", EvidenceBasis::kMeasured, 11'510'000),
      same_layout("l40s", "L40S-PCIE-48GB", 6'230'000, 0.14),
      same_layout("a100-40", "A100-PCIE-40GB", 5'040'000, 0.30)};
  RankCandidates(Objective::kLowestCost, &candidates);
  EXPECT_THAT(Order(candidates), ElementsAre("a100-40", "l40s", "a100-80"));
  EXPECT_THAT(
      candidates[0].reasons,
      ::testing::Contains(::testing::AllOf(
          HasSubstr("30% chance of running out of memory priced in (the job "
                    "then goes first to pool l40s, the same configuration on "
                    "L40S-PCIE-48GB's larger memory, where it fits 53% of the "
                    "times it would not fit here; else to a100-80, "),
          HasSubstr("it counts at 6.14 (5.04 on its own) against 11.51"))));

  // Another configuration on the larger card (its own peak, not nested in
  // this one's): an out-of-memory here says nothing of it, and the risk is
  // priced against the FITS pool as before.
  candidates = {Make("a100-80", EvidenceBasis::kMeasured, 11'510'000),
                same_layout("l40s", "L40S-PCIE-48GB", 6'230'000, 0.14),
                same_layout("a100-40", "A100-PCIE-40GB", 5'040'000, 0.30)};
  candidates[1].recipe_key = "rk1-8b-lora-two-cards";
  RankCandidates(Objective::kLowestCost, &candidates);
  EXPECT_THAT(Order(candidates), ElementsAre("l40s", "a100-40", "a100-80"));
}

// At equal value FITS goes first.
TEST(RankCandidatesTest, FitsFirstAtEqualValue) {
  std::vector<Candidate> candidates = {
      Borderline("a-borderline", 4'000'000, 0.2),
      Make("b-fits", EvidenceBasis::kMeasured, 4'000'000)};
  RankCandidates(Objective::kLowestCost, &candidates);
  EXPECT_THAT(Order(candidates), ElementsAre("b-fits", "a-borderline"));
}

TEST(RankCandidatesTest, TiesBrokenByPoolName) {
  std::vector<Candidate> candidates = {
      Make("pool-c", EvidenceBasis::kMeasured, 1'000'000),
      Make("pool-a", EvidenceBasis::kMeasured, 1'000'000),
      Make("pool-b", EvidenceBasis::kMeasured, 1'000'000)};
  RankCandidates(Objective::kLowestCost, &candidates);
  EXPECT_THAT(Order(candidates), ElementsAre("pool-a", "pool-b", "pool-c"));
}

TEST(RankCandidatesTest, ShortestTimeRanksByWallTimeThenCost) {
  std::vector<Candidate> candidates = {
      Make("cheap-slow", EvidenceBasis::kMeasured, 1'000'000, 10),
      Make("dear-fast-b", EvidenceBasis::kMeasured, 5'000'000, 2),
      Make("dear-fast-a", EvidenceBasis::kMeasured, 6'000'000, 2)};
  RankCandidates(Objective::kShortestTime, &candidates);
  EXPECT_THAT(Order(candidates),
              ElementsAre("dear-fast-b", "dear-fast-a", "cheap-slow"));
}

// A cost too large for int64 micros is saturated to the largest amount
// (core/money.h): it ranks after any finite cost, never first.
TEST(RankCandidatesTest, SaturatedCostNeverRanksBeforeAFiniteCheaperOne) {
  std::vector<Candidate> candidates = {
      Make("a-saturated", EvidenceBasis::kMeasured,
           std::numeric_limits<int64_t>::max()),
      Make("b-finite", EvidenceBasis::kMeasured, 4'000'000'000'000'000'000)};
  RankCandidates(Objective::kLowestCost, &candidates);
  EXPECT_THAT(Order(candidates), ElementsAre("b-finite", "a-saturated"));
}

}  // namespace
}  // namespace placement::core
