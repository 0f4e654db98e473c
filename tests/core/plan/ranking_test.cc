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

TEST(RankCandidatesTest, FitsBeforeBorderlineHoweverCheap) {
  std::vector<Candidate> candidates = {
      Make("borderline", EvidenceBasis::kMeasured, 1, 1, 1.5, Fit::kBorderline),
      Make("fits", EvidenceBasis::kMeasured, 9'000'000)};
  RankCandidates(Objective::kLowestCost, &candidates);
  EXPECT_THAT(Order(candidates), ElementsAre("fits", "borderline"));
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
