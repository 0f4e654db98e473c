#include "core/queue/start_calibration.h"

#include <algorithm>
#include <functional>
#include <vector>

#include "core/queue/queue_forecast.h"
#include "core/queue/queue_history.h"
#include "core/queue/start_estimate.h"
#include "gtest/gtest.h"

namespace placement::core {
namespace {

TEST(StartCalibrationTest, ThePitsShiftTheLevelsRead) {
  // Every start came in the first half of its forecast: read earlier.
  // (In an order that looks independent: see ChecksThatMoveTogether...)
  std::vector<double> early;
  for (int i = 0; i < 200; ++i)
    early.push_back(0.5 * (i * 37 % 200 + 0.5) / 200);
  const StartCalibration calibration(early, {});
  const double n = calibration.effective_checks();
  EXPECT_GT(n, 150);
  EXPECT_NEAR(calibration.Level(0.5), (n * 0.25 + 20 * 0.5) / (n + 20), 0.01);
  EXPECT_LT(calibration.Level(0.9), 0.6);
  EXPECT_EQ(StartCalibration({0.1, 0.2}, {}).Level(0.9), 0.9);  // too few
}

// With nobody waiting it reads the checks as the draws are read.
TEST(StartCalibrationTest, WithNobodyWaitingItIsTheChecksQuantile) {
  std::vector<double> pits;
  for (int i = 0; i < 50; ++i) pits.push_back((i * 37 % 50) / 50.0);
  std::vector<double> sorted = pits;
  std::sort(sorted.begin(), sorted.end());
  const StartCalibration calibration(pits, {});
  for (double q : {0.005, 0.1, 0.5, 0.77, 0.9, 0.999}) {
    EXPECT_NEAR(calibration.Level(q),
                (50 * QuantileOfSorted(sorted, q) + 20 * q) / 70, 1e-12)
        << q;
  }
}

// The same 120 checks, all from forecasts that ran early (a start in the
// first 60% of each), read in two orders. Shuffled, they are 120 views of
// the pool: the levels move most of the way to them. In the order of a
// pool whose checks drifted from the latest to the earliest, each like its
// neighbours (jobs that waited together), they are a few views: their
// autocorrelations stay high over many lags, and the levels barely move.
TEST(StartCalibrationTest, ChecksThatMoveTogetherCountForLess) {
  std::vector<double> shuffled;
  for (int i = 0; i < 120; ++i) {
    shuffled.push_back(0.6 * (i * 43 % 120 + 0.5) / 120);
  }
  std::vector<double> in_runs = shuffled;
  std::sort(in_runs.begin(), in_runs.end(), std::greater<>());
  const StartCalibration independent(shuffled, {});
  const StartCalibration together(in_runs, {});
  EXPECT_GT(independent.effective_checks(), 100);
  EXPECT_LT(together.effective_checks(), 5);
  // The checks' median is 0.3: read almost there, or barely moved.
  EXPECT_LT(independent.Level(0.5), 0.35);
  EXPECT_GT(together.Level(0.5), 0.45);
  EXPECT_LT(together.Level(0.5), 0.5);
  // Checks that alternate (negatively correlated) count as independent
  // ones, never as more.
  std::vector<double> alternating;
  for (int i = 0; i < 40; ++i) alternating.push_back(i % 2 ? 0.2 : 0.4);
  EXPECT_EQ(StartCalibration(alternating, {}).effective_checks(), 40);
}

// Forty plans whose jobs started where their forecasts said, and forty
// whose jobs are still waiting past their forecast's p95: read through the
// started checks alone the forecasts look calibrated; the jobs waiting say
// they run late, now and not when those jobs start.
TEST(StartCalibrationTest, JobsStillWaitingPastTheirForecastReadItLater) {
  std::vector<double> started;  // in an order that looks independent
  for (int i = 0; i < 40; ++i) started.push_back((i * 17 % 40 + 0.5) / 40);
  const StartCalibration without(started, {});
  EXPECT_NEAR(without.Level(0.5), 0.5, 1e-12);
  const StartCalibration with(started, std::vector<double>(40, 0.95));
  EXPECT_EQ(with.started(), 40u);
  EXPECT_EQ(with.waiting(), 40u);
  EXPECT_EQ(with.effective_checks(), 80);
  // The 38 started below 0.95 keep 1/80 each; the waiting jobs' shares go
  // to the two started above it (0.9625 and 0.9875, 21/80 each), so the
  // median falls between 0.9375 (at 0.46875) and 0.9625 (at 0.60625).
  const double median = 0.9375 + 0.025 * (0.5 - 0.46875) / (0.60625 - 0.46875);
  EXPECT_NEAR(with.Level(0.5), (80 * median + 20 * 0.5) / 100, 1e-9);
  EXPECT_GT(with.Level(0.9), 0.9);
  // Waiting jobs whose forecasts barely began tell little: floors of 0.
  const StartCalibration young(started, std::vector<double>(40, 0.0));
  EXPECT_NEAR(young.Level(0.5), 0.5, 1e-9);
}

// The snapshot's queue takes its waiting jobs' floors from the plans'
// forecasts: a placed job waiting past its whole forecast is above 1, a
// tenant's prediction (a row written before) is not read.
TEST(StartCalibrationTest, TheQueueReadsThePlacedJobsStillWaiting) {
  const absl::Time observed = absl::FromUnixSeconds(1'800'000'000);
  PoolState state;
  state.pool_name = "pool";
  state.observed = observed;
  state.gpus_total = 8;
  QueuedJob placed;
  placed.job_id = "placed";
  placed.gpus = 1;
  placed.plan_id = "p";
  QueuedJob tenant = placed;
  tenant.job_id = "tenant";
  tenant.plan_id.clear();
  state.pending = {placed, tenant};
  std::vector<StartPrediction> waiting;
  for (const char* id : {"placed", "tenant", "gone"}) {
    StartPrediction p{id, observed - absl::Hours(3), {}};
    for (int k = 0; k < kPredictionLevels; ++k) p.delay_s.push_back(100.0 * k);
    waiting.push_back(p);
  }
  QueueHistory history;
  for (int i = 0; i < 30; ++i) {
    history.start_pits.push_back((i * 7 % 30 + 0.5) / 30);
  }
  const PoolQueue queue = MakePoolQueue(state, observed, history, {}, waiting);
  EXPECT_EQ(queue.calibration.started(), 30u);
  EXPECT_EQ(queue.calibration.waiting(), 1u);
  EXPECT_GT(queue.calibration.Level(0.5), 0.5);
}

// A pool whose queue grew: 200 plans whose jobs started in the first half
// of their forecasts (read earlier), then 60 whose jobs started in the
// second half (the queue is longer now: read later). Kept as a pool keeps
// its checks (the newest kMaxHistoryPits), the calibration reads the queue
// of now. All 260 would still read it earlier: the old checks are most of
// them, and the step between the two kinds makes neighbours move together,
// so the lot counts for a few independent checks.
TEST(StartCalibrationTest, APoolWhoseQueueGrewIsReadByItsRecentChecks) {
  QueueHistory history;
  std::vector<double> every_check;
  auto check = [&](double pit) {
    AppendBounded(&history.start_pits, pit, kMaxHistoryPits);
    every_check.push_back(pit);
  };
  for (int i = 0; i < 200; ++i) check(0.5 * (i * 37 % 200 + 0.5) / 200);
  for (int i = 0; i < 60; ++i) check(0.5 + 0.5 * (i * 23 % 60 + 0.5) / 60);
  const StartCalibration kept(history.start_pits, {});
  EXPECT_GT(kept.Level(0.5), 0.6);
  EXPECT_GT(kept.Level(0.9), 0.9);
  const StartCalibration all(every_check, {});
  EXPECT_LT(all.Level(0.5), 0.5);
  // A pool's row from an earlier release, with every check: read as the
  // pool keeps them now (storage reads every row through KeepNewest).
  QueueHistory stored;
  stored.start_pits = every_check;
  KeepNewest(&stored);
  EXPECT_EQ(stored.start_pits, history.start_pits);
}

}  // namespace
}  // namespace placement::core
