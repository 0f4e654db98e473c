#include "core/queue/queue_forecast.h"

#include <algorithm>
#include <cmath>
#include <queue>

#include "core/queue/start_estimate.h"
#include "gtest/gtest.h"

namespace placement::core {
namespace {

const absl::Time kNow = absl::FromUnixSeconds(1'800'000'000);

QueuedJob Running(const std::string& id, int gpus, absl::Duration elapsed) {
  QueuedJob job;
  job.job_id = id;
  job.gpus = gpus;
  job.submitted = kNow - elapsed - absl::Minutes(5);
  job.started = kNow - elapsed;
  return job;
}

QueuedJob Waiting(const std::string& id, int gpus) {
  QueuedJob job;
  job.job_id = id;
  job.gpus = gpus;
  job.submitted = kNow - absl::Minutes(10);
  return job;
}

PoolState State(int total, std::vector<QueuedJob> running,
                std::vector<QueuedJob> pending) {
  PoolState s;
  s.pool_name = "pool";
  s.observed = kNow;
  s.gpus_total = total;
  for (const QueuedJob& j : running) s.gpus_allocated += j.gpus;
  s.running = std::move(running);
  s.pending = std::move(pending);
  return s;
}

TEST(QueueForecastTest, AFreePoolStartsANewJobAtOnce) {
  const PoolState s = State(8, {Running("a", 4, absl::Hours(1))}, {});
  PlannedRunTimes planned = {{"a", {7200, 9000}}};
  const QueueForecast f = ForecastQueue(s, {}, planned);
  ASSERT_TRUE(f.known) << f.unknown_reason;
  const std::vector<double> starts = NewJobStarts(f, 4);
  ASSERT_EQ(starts.size(), static_cast<size_t>(kForecastDraws));
  EXPECT_EQ(starts.back(), 0);
  // Five GPUs wait for the running job: about an hour left of two.
  const std::vector<double> five = NewJobStarts(f, 5);
  EXPECT_NEAR(QuantileOfSorted(five, 0.5), 3600, 600);
  EXPECT_TRUE(NewJobStarts(f, 9).empty());  // more than the pool has
}

TEST(QueueForecastTest, FirstComeFirstServedANewJobWaitsBehindTheQueue) {
  // One GPU is free, but a waiting 8-GPU job is ahead of the new one.
  const PoolState s =
      State(8, {Running("a", 7, absl::Minutes(30))}, {Waiting("b", 8)});
  PlannedRunTimes planned = {{"a", {3600, 3600}}, {"b", {7200, 7200}}};
  const QueueForecast f = ForecastQueue(s, {}, planned);
  ASSERT_TRUE(f.known);
  const double median = QuantileOfSorted(NewJobStarts(f, 1), 0.5);
  // "a" ends in about 30 min, then "b" holds all 8 GPUs for 2 h.
  EXPECT_NEAR(median, 1800 + 7200, 900);
  EXPECT_EQ(f.pending_jobs, 1);
  EXPECT_EQ(f.pending_gpus, 8);
}

TEST(QueueForecastTest, UnknownWithoutAnythingToDrawARunTimeFrom) {
  const PoolState s = State(8, {Running("a", 8, absl::Hours(1))}, {});
  const QueueForecast f = ForecastQueue(s, {}, {});
  EXPECT_FALSE(f.known);
  EXPECT_NE(f.unknown_reason.find("running job a"), std::string::npos)
      << f.unknown_reason;
  PoolQueue q = MakePoolQueue(s, kNow, {}, {});
  const StartEstimate e =
      EstimateStart(&q, 1, absl::ZeroDuration(), absl::Minutes(10));
  EXPECT_EQ(e.status, StartStatus::kUnknownRunTimes);
  EXPECT_TRUE(e.delay_s.empty());
}

TEST(QueueForecastTest, ATimeLimitAloneBoundsTheWait) {
  PoolState s = State(8, {Running("a", 8, absl::Minutes(20))}, {});
  s.running[0].time_limit = absl::Hours(1);
  const QueueForecast f = ForecastQueue(s, {}, {});
  ASSERT_TRUE(f.known);
  const std::vector<double> starts = NewJobStarts(f, 8);
  EXPECT_GE(starts.front(), 0);
  EXPECT_LE(starts.back(), 40 * 60 + 1e-6);
  EXPECT_NEAR(QuantileOfSorted(starts, 0.5), 20 * 60, 5 * 60);
}

TEST(StartEstimateTest, NoStateAndStaleStateAreUnknownNeverZero) {
  StartEstimate none =
      EstimateStart(nullptr, 1, absl::ZeroDuration(), absl::Minutes(10));
  EXPECT_EQ(none.status, StartStatus::kNoState);
  EXPECT_TRUE(none.delay_s.empty());
  const PoolState s = State(8, {}, {});
  PoolQueue q = MakePoolQueue(s, kNow, {}, {});
  EXPECT_EQ(
      EstimateStart(&q, 1, absl::ZeroDuration(), absl::Minutes(10)).status,
      StartStatus::kKnown);
  StartEstimate stale =
      EstimateStart(&q, 1, absl::Minutes(11), absl::Minutes(10));
  EXPECT_EQ(stale.status, StartStatus::kStale);
  EXPECT_NE(stale.reason.find("stale"), std::string::npos);
}

// A plan shows the calibrated start and keeps the raw forecast beside it:
// the raw one is what its job's start is checked against, so the checks
// measure the forecast and not the correction already applied to it.
TEST(StartEstimateTest, KeepsTheForecastBeforeCalibration) {
  PoolState s = State(8, {Running("a", 8, absl::Minutes(20))}, {});
  s.running[0].time_limit = absl::Hours(1);
  // Every plan's job started by its forecast's p90 or later (on days
  // that look independent: StartCalibrationTest).
  QueueHistory late;
  for (int i = 0; i < 200; ++i) {
    late.start_pits.push_back(0.9 + 0.1 * (i * 37 % 200) / 200);
  }
  PoolQueue raw = MakePoolQueue(s, kNow, {}, {});
  PoolQueue read = MakePoolQueue(s, kNow, late, {});
  const StartEstimate e0 =
      EstimateStart(&raw, 8, absl::Minutes(1), absl::Minutes(10));
  const StartEstimate e1 =
      EstimateStart(&read, 8, absl::Minutes(1), absl::Minutes(10));
  ASSERT_TRUE(e0.known() && e1.known());
  EXPECT_FALSE(e0.calibrated);
  EXPECT_TRUE(e1.calibrated);
  EXPECT_GT(e1.Quantile(0.5), e0.Quantile(0.5) + 5 * 60);
  // The same raw forecast in both, a minute after the report.
  EXPECT_EQ(e0.uncalibrated_levels_s, e1.uncalibrated_levels_s);
  ASSERT_EQ(e1.uncalibrated_levels_s.size(),
            static_cast<size_t>(kPredictionLevels));
  EXPECT_NEAR(e1.uncalibrated_levels_s[kPredictionLevels / 2], e0.Quantile(0.5),
              60);
  EXPECT_NE(e1.reason.find("plans' forecasts"), std::string::npos);
}

TEST(PredictionLevelsTest, EndsAreTheExtremesAndTheShiftStopsAtZero) {
  std::vector<double> draws;
  for (int i = 0; i < 100; ++i) draws.push_back(10.0 * i);  // 0..990
  const std::vector<double> levels = PredictionLevels(draws, 100);
  ASSERT_EQ(levels.size(), static_cast<size_t>(kPredictionLevels));
  EXPECT_EQ(levels.front(), 0);   // 0 - 100, held at 0
  EXPECT_EQ(levels.back(), 890);  // 990 - 100
  EXPECT_NEAR(levels[10], QuantileOfSorted(draws, 0.5) - 100, 1e-9);
  EXPECT_TRUE(std::is_sorted(levels.begin(), levels.end()));
  EXPECT_TRUE(PredictionLevels({}).empty());
}

TEST(PredictionPitTest, InterpolatesAndSplitsAtoms) {
  std::vector<double> levels;
  for (int k = 0; k < kPredictionLevels; ++k) levels.push_back(100.0 * k);
  EXPECT_NEAR(PredictionPit(levels, 1000), 0.5, 1e-12);
  EXPECT_NEAR(PredictionPit(levels, 1025), 0.5125, 1e-12);
  EXPECT_EQ(PredictionPit(levels, -1), 0);
  EXPECT_EQ(PredictionPit(levels, 5000), 1);
  // A start at once in 40% of the draws: a start at once is in the middle.
  std::vector<double> atom(kPredictionLevels, 0);
  for (int k = 9; k < kPredictionLevels; ++k) atom[k] = 100.0 * (k - 8);
  EXPECT_NEAR(PredictionPit(atom, 0), (0 + 0.425) / 2, 1e-12);
  // Anywhere in that mass, as asked (a randomized PIT spreads it).
  EXPECT_EQ(PredictionPit(atom, 0, 0), 0);
  EXPECT_NEAR(PredictionPit(atom, 0, 1), 0.425, 1e-12);
}

// The pool's jobs run lognormal times; the forecast draws them from the
// pool's measured history. Over many queues, the real start of a new job
// (its queue played with the jobs' true run times) comes by the forecast's
// median half the time, and by its 90th percentile nine times in ten.
TEST(QueueForecastTest, CalibratedWhenTheHistoryIsTheTruth) {
  constexpr double kMedianS = 7200;
  constexpr double kSigma = 0.6;
  Rng truth(42);
  auto lognormal = [&] {
    return kMedianS *
           std::exp(kSigma * InverseNormalCdf(std::max(1e-9, truth.Uniform())));
  };
  constexpr int kQueues = 300;
  int by_median = 0;
  int by_p90 = 0;
  for (int q = 0; q < kQueues; ++q) {
    QueueHistory history;
    for (int i = 0; i < 300; ++i) {
      history.durations_s.push_back(lognormal());
      history.limits_s.push_back(0);
    }
    std::vector<QueuedJob> running;
    std::vector<double> left;  // true time left of each running job
    for (int i = 0; i < 8; ++i) {
      const double elapsed = truth.Uniform() * 3 * 3600;
      double run = lognormal();
      while (run <= elapsed) run = lognormal();
      running.push_back(
          Running(absl::StrCat("r", i), 1, absl::Seconds(elapsed)));
      left.push_back(run - elapsed);
    }
    std::vector<QueuedJob> pending;
    for (int i = 0; i < 4; ++i)
      pending.push_back(Waiting(absl::StrCat("p", i), 1));
    PoolState s = State(8, running, pending);
    s.observed = kNow + absl::Seconds(q);  // another seed each queue
    for (QueuedJob& j : s.running) j.started = *j.started + absl::Seconds(q);
    const std::vector<double> starts =
        NewJobStarts(ForecastQueue(s, history, {}), 2);
    // The truth: first come, first served with the true run times.
    std::priority_queue<double, std::vector<double>, std::greater<>> ends(
        left.begin(), left.end());
    double now = 0;
    int free = 0;
    for (int i = 0; i < 4; ++i) {
      while (free < 1) {
        now = std::max(now, ends.top());
        ends.pop();
        ++free;
      }
      ends.push(now + lognormal());
      --free;
    }
    while (free < 2) {
      now = std::max(now, ends.top());
      ends.pop();
      ++free;
    }
    by_median += now <= QuantileOfSorted(starts, 0.5);
    by_p90 += now <= QuantileOfSorted(starts, 0.9);
  }
  EXPECT_NEAR(by_median / static_cast<double>(kQueues), 0.5, 0.07);
  EXPECT_NEAR(by_p90 / static_cast<double>(kQueues), 0.9, 0.05);
}

}  // namespace
}  // namespace placement::core
