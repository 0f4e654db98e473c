#include "core/queue/queue_history.h"

#include "gtest/gtest.h"

namespace placement::core {
namespace {

const absl::Time kT0 = absl::FromUnixSeconds(1'800'000'000);

QueuedJob Job(const std::string& id, absl::Time submitted,
              std::optional<absl::Time> started = std::nullopt) {
  QueuedJob j;
  j.job_id = id;
  j.gpus = 1;
  j.submitted = submitted;
  j.started = started;
  return j;
}

TEST(LearnFromReportTest, RunTimesWaitsAndThePitOfAStartedJob) {
  PoolState first;
  first.observed = kT0;
  first.running = {Job("a", kT0 - absl::Hours(3), kT0 - absl::Hours(2)),
                   Job("b", kT0 - absl::Hours(2), kT0 - absl::Hours(1))};
  first.pending = {Job("c", kT0 - absl::Minutes(30))};
  QueueHistory history;
  std::vector<StartPrediction> open;
  LearnFromReport(nullptr, first, &history, &open);
  EXPECT_EQ(history.waits_s, (std::vector<double>{3600, 3600}));
  EXPECT_TRUE(history.durations_s.empty());
  // The forecast of c when first seen waiting: 0..2000 s from kT0.
  StartPrediction c{"c", kT0, {}};
  for (int k = 0; k < kPredictionLevels; ++k) c.delay_s.push_back(100.0 * k);
  open.push_back(c);

  PoolState second;
  second.observed = kT0 + absl::Minutes(20);
  // a finished (reported), b vanished without a report, c started at 10 min.
  QueuedJob a = first.running[0];
  a.ended = kT0 + absl::Minutes(10);
  second.finished = {a};
  second.running = {Job("c", kT0 - absl::Minutes(30), kT0 + absl::Minutes(10))};
  LearnFromReport(&first, second, &history, &open);
  ASSERT_EQ(history.durations_s.size(), 2u);
  EXPECT_DOUBLE_EQ(history.durations_s[0], 2 * 3600 + 600);
  // b ended between the reports: taken at their midpoint, 10 min.
  EXPECT_DOUBLE_EQ(history.durations_s[1], 3600 + 600);
  EXPECT_EQ(history.waits_s.back(), 40 * 60);
  ASSERT_EQ(history.start_pits.size(), 1u);
  EXPECT_NEAR(history.start_pits[0], 0.3, 1e-12);  // 600 s of 0..2000
  EXPECT_TRUE(open.empty());                       // c no longer waits

  // The same finished job reported again teaches nothing new.
  PoolState third = second;
  third.observed = kT0 + absl::Minutes(25);
  LearnFromReport(&second, third, &history, &open);
  EXPECT_EQ(history.durations_s.size(), 2u);
}

// Only plans' forecasts are checked, each job's once: a job a plan placed
// is picked up the first time a report shows it, waiting or already
// started (a start at once is a check too), and a tenant's job never.
TEST(NewlyPlacedJobsTest, EachPlacedJobOnceWhenFirstSeen) {
  PoolState first;
  first.observed = kT0;
  QueuedJob tenant = Job("tenant", kT0 - absl::Minutes(5));
  QueuedJob waiting = Job("waiting", kT0 - absl::Minutes(5));
  waiting.plan_id = "p1";
  QueuedJob at_once =
      Job("at-once", kT0 - absl::Minutes(5), kT0 - absl::Minutes(4));
  at_once.plan_id = "p2";
  first.pending = {tenant, waiting};
  first.running = {at_once};
  std::vector<StartPrediction> open;
  std::vector<const QueuedJob*> placed = NewlyPlacedJobs(nullptr, first, open);
  ASSERT_EQ(placed.size(), 2u);
  EXPECT_EQ(placed[0]->job_id, "at-once");
  EXPECT_EQ(placed[1]->job_id, "waiting");

  // Their plans' forecasts (both 0..2000 s from five minutes before kT0):
  // the one already started is checked by this very report.
  for (const QueuedJob* job : placed) {
    StartPrediction p{job->job_id, kT0 - absl::Minutes(5), {}};
    for (int k = 0; k < kPredictionLevels; ++k) p.delay_s.push_back(100.0 * k);
    open.push_back(p);
  }
  QueueHistory history;
  LearnFromReport(nullptr, first, &history, &open);
  ASSERT_EQ(history.start_pits.size(), 1u);
  EXPECT_NEAR(history.start_pits[0], 0.03, 1e-12);  // 60 s of 0..2000
  ASSERT_EQ(open.size(), 1u);
  EXPECT_EQ(open[0].job_id, "waiting");

  // Seen again (started now): not new; the tenant's start checks nothing.
  PoolState second;
  second.observed = kT0 + absl::Minutes(10);
  second.running = {at_once, waiting, tenant};
  second.running[1].started = kT0 + absl::Minutes(5);
  second.running[2].started = kT0 + absl::Minutes(6);
  EXPECT_TRUE(NewlyPlacedJobs(&first, second, open).empty());
  LearnFromReport(&first, second, &history, &open);
  ASSERT_EQ(history.start_pits.size(), 2u);
  EXPECT_NEAR(history.start_pits[1], 0.3, 1e-12);  // 600 s of 0..2000
  EXPECT_TRUE(open.empty());
}

TEST(AppendBoundedTest, KeepsTheNewest) {
  std::vector<double> series;
  for (int i = 0; i < 10; ++i) AppendBounded(&series, i, 4);
  EXPECT_EQ(series, (std::vector<double>{6, 7, 8, 9}));
}

TEST(QueueHistoryTest, KeepNewestDropsTheOldestOfEachSeriesBeyondItsBound) {
  QueueHistory history;
  for (int i = 0; i < 600; ++i) {
    history.durations_s.push_back(i);
    history.limits_s.push_back(1000 + i);
    history.waits_s.push_back(2000 + i);
    history.start_pits.push_back(i / 600.0);
  }
  KeepNewest(&history);
  ASSERT_EQ(history.durations_s.size(), kMaxHistoryDurations);
  ASSERT_EQ(history.limits_s.size(), kMaxHistoryDurations);
  ASSERT_EQ(history.waits_s.size(), kMaxHistoryWaits);
  ASSERT_EQ(history.start_pits.size(), kMaxHistoryPits);
  // The newest of each, in order, each duration beside its own limit.
  EXPECT_EQ(history.durations_s.back(), 599);
  EXPECT_EQ(history.limits_s.front() - history.durations_s.front(), 1000);
  EXPECT_EQ(history.waits_s.front(), 2000 + 600 - kMaxHistoryWaits);
  EXPECT_EQ(history.start_pits.front(), (600 - kMaxHistoryPits) / 600.0);
  // A history within its bounds is left as it is.
  QueueHistory small;
  small.start_pits = {0.1, 0.9};
  const QueueHistory before = small;
  KeepNewest(&small);
  EXPECT_EQ(small, before);
}

}  // namespace
}  // namespace placement::core
