#include "core/queue/survival.h"

#include <cmath>
#include <vector>

#include "gtest/gtest.h"

namespace placement::core {
namespace {

// Four jobs ended at 1-4 h while four more have run 10 h and go on: the
// finished ones alone would say every job ends by 4 h, but for the upper
// half of the longest one's share (1/8 of the mass beyond 4 h); counted
// as running at least 10 h, more than half the mass lies beyond 4 h
// (Kaplan-Meier: 7/8, 6/7, 5/6, 4/5 survive each end, and half of the
// last end's 1/8 goes beyond it).
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
  EXPECT_NEAR(beyond_finished_only / static_cast<double>(kDraws), 0.125, 0.02);
  EXPECT_NEAR(beyond_with_running / static_cast<double>(kDraws), 0.5625, 0.03);
  // Above 2.5 h: the end at 3 (1/8 of the mass), the end at 4 (1/16) and
  // the tail (9/16): three draws in four go to the tail; the others stay
  // above 2.5 h, smoothed around 3 and 4.
  int tail = 0;
  for (int i = 0; i < kDraws; ++i) {
    std::optional<double> d = with_running.DrawAbove(2.5, rng);
    if (d.has_value()) {
      EXPECT_GT(*d, 2.5);
    } else {
      ++tail;
    }
  }
  EXPECT_NEAR(tail / static_cast<double>(kDraws), 0.75, 0.03);
}

// A history of n ends that says no job runs longer than its longest is
// wrong for the next job one time in n + 1; read as the middle of its
// share, the longest leaves 1 / (2n) of the mass beyond it. Twenty ends:
// 1/40 of the draws go to the tail (the caller's); above the second
// longest, the longest and the tail hold 1/40 each; above the longest,
// the tail alone.
TEST(SurvivalSampleTest, AHistoryLeavesHalfItsLongestRunsShareBeyondIt) {
  std::vector<double> ended;
  for (int i = 1; i <= 20; ++i) ended.push_back(i);
  const SurvivalSample sample(ended, {});
  Rng rng(5);
  constexpr int kDraws = 40000;
  int tail = 0;
  int tail_above_19 = 0;
  for (int i = 0; i < kDraws; ++i) {
    tail += !sample.DrawAbove(0, rng).has_value();
    tail_above_19 += !sample.DrawAbove(19.5, rng).has_value();
  }
  EXPECT_NEAR(tail / static_cast<double>(kDraws), 1.0 / 40, 0.004);
  EXPECT_NEAR(tail_above_19 / static_cast<double>(kDraws), 0.5, 0.02);
  EXPECT_FALSE(sample.DrawAbove(20, rng).has_value());
}

// Twenty jobs whose run times spread as a lognormal's of sigma 1 (their
// logarithms at the normal's twentieths): smoothing by exp(h z) alone would
// make every draw e^(h^2 / 2) = 1.18 times as long in the mean (h = 0.58,
// Silverman's bandwidth here), so a queue's waits would run late; the
// smoothed draws keep the mean of the history they are drawn from (the
// longest end at half its share, the other half the caller's tail), and
// the wider spread is the smoothing's.
TEST(SurvivalSampleTest, SmoothedDrawsKeepTheHistorysMean) {
  constexpr double kNormalTwentieths[] = {
      -1.960, -1.440, -1.150, -0.935, -0.755, -0.598, -0.454,
      -0.319, -0.189, -0.063, 0.063,  0.189,  0.319,  0.454,
      0.598,  0.755,  0.935,  1.150,  1.440,  1.960};
  std::vector<double> ended;
  double sum = 0;
  for (double z : kNormalTwentieths) {
    ended.push_back(std::exp(z));
    sum += std::exp(z);
  }
  const double history_mean = (sum - ended.back() / 2) / 19.5;
  const SurvivalSample sample(ended, {});
  Rng rng(11);
  constexpr int kDraws = 40000;
  double drawn_sum = 0;
  int drawn = 0;
  int beyond_history = 0;
  for (int i = 0; i < kDraws; ++i) {
    const std::optional<double> d = sample.DrawAbove(0, rng);
    if (!d.has_value()) continue;  // the tail
    drawn_sum += *d;
    ++drawn;
    beyond_history += *d > ended.back();
  }
  EXPECT_NEAR(drawn_sum / drawn / history_mean, 1.0, 0.03);
  // Smoothed: some draws lie beyond the longest job seen (none would
  // without smoothing).
  EXPECT_GT(beyond_history, kDraws / 100);
}

}  // namespace
}  // namespace placement::core
