#include "core/evidence/run_attempts.h"

#include <algorithm>
#include <vector>

#include "core/evidence/evidence.h"
#include "core/evidence/most_failed_run.h"
#include "gtest/gtest.h"

namespace placement::core {
namespace {

constexpr double kHour = 3600;

MeasuredRun RunOf(double wall_s, int64_t steps, int64_t kept, double step_s,
                  int retries, RunOutcome outcome) {
  MeasuredRun run;
  run.gpu_count = 2;
  run.started = absl::FromUnixSeconds(1'700'000'000);
  run.ended = run.started + absl::Seconds(wall_s);
  run.steps_attempted = steps;
  run.steps_succeeded = kept;
  run.step_time_mean_s = step_s;
  run.retries = retries;
  run.outcome = outcome;
  return run;
}

int Count(const RunAttempts& a, AttemptFailureCause cause) {
  return static_cast<int>(a.failures_by_cause[static_cast<int>(cause)]);
}

TEST(RunAttemptsTest, ASucceededRunOfOneAttempt) {
  const RunAttempts a =
      AttemptsOf(RunOf(400, 200, 200, 1.5, 0, RunOutcome::kSucceeded));
  EXPECT_EQ(a.attempts, 1);
  EXPECT_EQ(a.failed_attempts, 0);
  EXPECT_DOUBLE_EQ(a.counted_hours, 400 / kHour);
  EXPECT_DOUBLE_EQ(a.busy_hours, 300 / kHour);
  EXPECT_DOUBLE_EQ(a.overhead_hours_per_attempt, 100 / kHour);
  EXPECT_DOUBLE_EQ(a.lost_hours, 0);
}

// Three attempts that each ran 200 steps and timed out: three failures of
// the fabric, and all of the run's time lost.
TEST(RunAttemptsTest, RetriesOfAFailedRunTakeItsOutcome) {
  const RunAttempts a = AttemptsOf(
      RunOf(3 * 180, 600, 0, 0.6, 2, RunOutcome::kCollectiveTimeout));
  EXPECT_EQ(a.attempts, 3);
  EXPECT_EQ(a.failed_attempts, 3);
  EXPECT_EQ(Count(a, AttemptFailureCause::kCollectiveTimeout), 3);
  EXPECT_EQ(a.PoolFailures(), 3);
  EXPECT_DOUBLE_EQ(a.lost_hours, 540 / kHour);
}

// A run that succeeded after two retries failed twice; their cause is
// unknown unless the run names it. One attempt's start-up is what the
// success needed anyway, not a loss.
TEST(RunAttemptsTest, ASucceededRunWithRetriesFailedOncePerRetry) {
  MeasuredRun run =
      RunOf(3 * 100 + 600, 600, 200, 1, 2, RunOutcome::kSucceeded);
  RunAttempts a = AttemptsOf(run);
  EXPECT_EQ(a.failed_attempts, 2);
  EXPECT_EQ(Count(a, AttemptFailureCause::kOther), 2);
  EXPECT_EQ(a.PoolFailures(), 0);
  EXPECT_DOUBLE_EQ(a.overhead_hours_per_attempt, 100 / kHour);
  // 900 s held, 200 s kept, 100 s the success's start-up.
  EXPECT_DOUBLE_EQ(a.lost_hours, 600 / kHour);

  run.retry_outcomes = {RunOutcome::kPreempted, RunOutcome::kOom};
  a = AttemptsOf(run);
  EXPECT_EQ(Count(a, AttemptFailureCause::kPreempted), 1);
  EXPECT_EQ(Count(a, AttemptFailureCause::kOutOfMemory), 1);
  EXPECT_EQ(a.PoolFailures(), 1);
}

// A year between start and end for 100 steps of 1.2 s counts as its steps
// and half an hour: a wrong clock weighs as one plausible attempt.
TEST(RunAttemptsTest, WallTimeTheStepsDoNotExplainIsNotCounted) {
  const RunAttempts a = AttemptsOf(
      RunOf(365 * 24 * kHour, 100, 0, 1.2, 0, RunOutcome::kPreempted));
  EXPECT_DOUBLE_EQ(a.wall_hours, 365 * 24);
  EXPECT_DOUBLE_EQ(a.counted_hours, (120 + kMaxCountedOverheadSeconds) / kHour);
  EXPECT_DOUBLE_EQ(a.lost_hours, a.counted_hours);
}

TEST(RunAttemptsTest, EvidenceRollupCountsAttemptsAndTheMedianStartUp) {
  EvidenceRollup rollup;
  // Start-ups of 60, 60, 60 and (a wrong clock) 1800 s: the median is 60,
  // the mean 495.
  for (int i = 0; i < 3; ++i) {
    rollup.Add(RunOf(60 + 200, 200, 200, 1, 0, RunOutcome::kSucceeded));
  }
  rollup.Add(RunOf(30 * 24 * kHour, 200, 200, 1, 0, RunOutcome::kSucceeded));
  rollup.Add(RunOf(2 * (60 + 200), 400, 0, 1, 1, RunOutcome::kPreempted));
  const EvidenceStats s = Summarize(rollup);
  EXPECT_EQ(s.attempts, 6);
  EXPECT_EQ(s.failed_attempts, 2);
  ASSERT_TRUE(s.median_startup_hours_per_attempt.has_value());
  // Within the histogram's 19% bucket of 60 s.
  EXPECT_NEAR(*s.median_startup_hours_per_attempt * kHour, 60, 60 * 0.1);
  EXPECT_NEAR(s.mean_startup_gpu_hours_per_attempt * kHour, 2 * 495, 1e-6);
  // GPU-hours: 2 GPUs each.
  EXPECT_NEAR(s.exposure_gpu_hours * kHour, 2 * (3 * 260 + (200 + 1800) + 520),
              1e-6);
  EXPECT_NEAR(s.lost_gpu_hours * kHour, 2 * 520, 1e-6);
  EXPECT_NEAR(s.median_run_step_time_s, 1, 0.1);
}

// One run's failed attempts count at most twice the next run's, and at
// least two, among four runs or more; the result does not depend on the
// order the runs arrive in (the database adds them in its own).
TEST(MostFailedRunTest, OneRunCountsAtMostTwiceTheNextRunsFailures) {
  auto run = [](int64_t failed) {
    MostFailedRun r;
    r.failed_attempts = failed;
    r.attempts = failed + 1;
    r.counted_hours = 0.5 * static_cast<double>(failed + 1);
    r.lost_hours = 0.4 * static_cast<double>(failed);
    return r;
  };
  auto of = [&](std::vector<int64_t> failures) {
    MostFailedRun m;
    for (int64_t f : failures) m.Merge(run(f));
    return m;
  };
  // Eight runs that never failed and one that failed nine times: two count.
  const MostFailedRun lone = of({0, 0, 0, 0, 0, 0, 0, 0, 9});
  EXPECT_EQ(lone.ExcessFailedAttempts(9), 7);
  EXPECT_DOUBLE_EQ(lone.ExcessCountedHours(9), 5.0 * 7 / 10);
  EXPECT_DOUBLE_EQ(lone.ExcessLostHours(9), 3.6 * 7 / 9);
  // The next run failed three times: six count.
  EXPECT_EQ(of({1, 3, 0, 9}).ExcessFailedAttempts(4), 3);
  // Runs that fail alike are untouched (the guide's L40S case), and so is a
  // run of two failures among runs of none.
  EXPECT_EQ(of({3, 0, 3, 0, 3, 0}).ExcessFailedAttempts(6), 0);
  EXPECT_EQ(of({0, 2, 0, 0}).ExcessFailedAttempts(4), 0);
  // Fewer than four runs: every failure counts.
  EXPECT_EQ(of({0, 0, 9}).ExcessFailedAttempts(3), 0);

  std::vector<int64_t> failures = {4, 0, 1, 9, 2, 9, 3};
  const MostFailedRun first = of(failures);
  std::sort(failures.begin(), failures.end());
  do {
    EXPECT_EQ(of(failures), first);
  } while (std::next_permutation(failures.begin(), failures.end()));
  // Two rollups merged are the rollup of all their runs.
  MostFailedRun halves = of({4, 0, 1});
  halves.Merge(of({9, 2, 9, 3}));
  EXPECT_EQ(halves, first);
  MostFailedRun stands_out = of({4, 0, 1, 2});
  stands_out.Merge(of({9, 3}));
  EXPECT_EQ(stands_out, of({4, 0, 1, 2, 9, 3}));
  EXPECT_EQ(stands_out.failed_attempts, 9);
  EXPECT_EQ(stands_out.second_failed_attempts, 4);
  EXPECT_EQ(stands_out.attempts, 10);
}

}  // namespace
}  // namespace placement::core
