#include "core/queue/survival.h"

#include <cmath>
#include <vector>

#include "gtest/gtest.h"

namespace placement::core {
namespace {

// Four jobs ended at 1-4 h while four more have run 10 h and go on: the
// finished ones alone would say every job ends by 4 h; counted as running
// at least 10 h, half the mass lies beyond 4 h (Kaplan-Meier: 7/8, 6/7,
// 5/6, 4/5 survive each end).
TEST(SurvivalSampleTest, JobsStillRunningLengthenTheDistribution) {
  const SurvivalSample finished_only({1, 2, 3, 4}, {});
  const SurvivalSample with_running({1, 2, 3, 4}, {10, 10, 10, 10});
  EXPECT_EQ(with_running.ended(), 4u);
  EXPECT_EQ(with_running.largest(), 10);
  Rng rng(7);
  int beyond_finished_only = 0;
  int beyond_with_running = 0;
  constexpr int kDraws = 4000;
  for (int i = 0; i < kDraws; ++i) {
    beyond_finished_only += !finished_only.DrawAbove(0, rng).has_value();
    beyond_with_running += !with_running.DrawAbove(0, rng).has_value();
  }
  EXPECT_EQ(beyond_finished_only, 0);
  EXPECT_NEAR(beyond_with_running / static_cast<double>(kDraws), 0.5, 0.03);
  // Above 2.5 h: ends at 3 and 4 (1/8 each of the mass) and the tail (1/2):
  // two draws in three go to the tail; the others stay above 2.5 h,
  // smoothed around 3 and 4.
  int tail = 0;
  for (int i = 0; i < kDraws; ++i) {
    std::optional<double> d = with_running.DrawAbove(2.5, rng);
    if (d.has_value()) {
      EXPECT_GT(*d, 2.5);
    } else {
      ++tail;
    }
  }
  EXPECT_NEAR(tail / static_cast<double>(kDraws), 0.5 / 0.75, 0.03);
}

// Twenty jobs whose run times spread as a lognormal's of sigma 1 (their
// logarithms at the normal's twentieths): smoothing by exp(h z) alone would
// make every draw e^(h^2 / 2) = 1.18 times as long in the mean (h = 0.58,
// Silverman's bandwidth here), so a queue's waits would run late; the
// smoothed draws keep the history's mean, and the wider spread is the
// smoothing's.
TEST(SurvivalSampleTest, SmoothedDrawsKeepTheHistorysMean) {
  constexpr double kNormalTwentieths[] = {
      -1.960, -1.440, -1.150, -0.935, -0.755, -0.598, -0.454,
      -0.319, -0.189, -0.063, 0.063,  0.189,  0.319,  0.454,
      0.598,  0.755,  0.935,  1.150,  1.440,  1.960};
  std::vector<double> ended;
  double history_mean = 0;
  for (double z : kNormalTwentieths) {
    ended.push_back(std::exp(z));
    history_mean += std::exp(z) / 20;
  }
  const SurvivalSample sample(ended, {});
  Rng rng(11);
  constexpr int kDraws = 40000;
  double drawn_mean = 0;
  int beyond_history = 0;
  for (int i = 0; i < kDraws; ++i) {
    const double d = *sample.DrawAbove(0, rng);
    drawn_mean += d / kDraws;
    beyond_history += d > ended.back();
  }
  EXPECT_NEAR(drawn_mean / history_mean, 1.0, 0.03);
  // Smoothed: some draws lie beyond the longest job seen (none would
  // without smoothing).
  EXPECT_GT(beyond_history, kDraws / 100);
}

}  // namespace
}  // namespace placement::core
