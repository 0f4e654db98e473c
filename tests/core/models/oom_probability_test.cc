#include "core/models/oom_probability.h"

#include <cmath>

#include "gtest/gtest.h"

namespace placement::core {
namespace {

// A 30 GB estimate under the pooled memory band: 28.5..37.5 GB.
constexpr Band kBand = {28.5, 37.5};

TEST(OomProbabilityTest, BandWellInsideTheCardNeverRunsOut) {
  EXPECT_LT(OomProbability(kBand, 80), 1e-4);
}

TEST(OomProbabilityTest, BandWellBeyondTheCardAlwaysRunsOut) {
  EXPECT_GT(OomProbability(kBand, 20), 1 - 1e-4);
}

TEST(OomProbabilityTest, BandStraddlingTheCardIsInBetween) {
  const double p = OomProbability(kBand, 33);
  EXPECT_GT(p, 0.05);
  EXPECT_LT(p, 0.95);
}

TEST(OomProbabilityTest, EdgesAreTheP10AndP90) {
  // The band's upper edge is the p90: 10% of peaks are above it; its lower
  // edge the p10: 90% are above it; its geometric middle the median.
  EXPECT_NEAR(OomProbability(kBand, kBand.high), 0.1, 1e-9);
  EXPECT_NEAR(OomProbability(kBand, kBand.low), 0.9, 1e-9);
  EXPECT_NEAR(OomProbability(kBand, std::sqrt(kBand.low * kBand.high)), 0.5,
              1e-9);
}

TEST(OomProbabilityTest, FallsAsTheCardGrowsAndRisesAsTheBandWidens) {
  double previous = 1;
  for (double usable = 20; usable <= 50; usable += 0.5) {
    const double p = OomProbability(kBand, usable);
    EXPECT_LE(p, previous) << usable;
    previous = p;
  }
  // Same middle, wider band: more mass above a card beyond the middle.
  const double middle = std::sqrt(kBand.low * kBand.high);
  const Band wider = {middle / 1.5, middle * 1.5};
  EXPECT_GT(OomProbability(wider, 40), OomProbability(kBand, 40));
}

TEST(OomProbabilityTest, DegenerateBands) {
  EXPECT_EQ(OomProbability({30, 30}, 31), 0);
  EXPECT_EQ(OomProbability({30, 30}, 29), 1);
  EXPECT_EQ(OomProbability({0, 0}, 10), 0);
  EXPECT_EQ(OomProbability(kBand, 0), 1);
}

}  // namespace
}  // namespace placement::core
