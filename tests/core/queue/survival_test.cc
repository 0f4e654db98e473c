#include "core/queue/survival.h"

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

}  // namespace
}  // namespace placement::core
