#include "core/plan/job_cost.h"

#include <cmath>

#include "core/evidence/evidence.h"
#include "core/evidence/pool_reliability.h"
#include "gtest/gtest.h"

namespace placement::core {
namespace {

JobCostInputs Inputs(int gpus, double step_gpu_hours, double startup_gpu_hours,
                     const FailureRate& failure) {
  JobCostInputs in;
  in.gpus = gpus;
  in.step_gpu_hours = step_gpu_hours;
  in.startup_gpu_hours = startup_gpu_hours;
  in.failure = failure;
  return in;
}

TEST(ProjectJobCostTest, WithoutFailuresStartUpPlusSteps) {
  FailureRate none;
  const JobCost cost = ProjectJobCost(Inputs(4, 0.002, 0.2, none), 10'000);
  EXPECT_DOUBLE_EQ(cost.startup_gpu_hours, 0.2);
  EXPECT_DOUBLE_EQ(cost.steps_gpu_hours, 20);
  EXPECT_DOUBLE_EQ(cost.rework_gpu_hours, 0);
  EXPECT_DOUBLE_EQ(cost.total_gpu_hours, 20.2);
  EXPECT_DOUBLE_EQ(cost.wall_hours, 20.2 / 4);
}

// Failures at 0.1 an hour over a 10-hour run, each losing an hour on every
// GPU: 1 failure, and the hour it loses is held too (1 / (1 - 0.1)).
TEST(ProjectJobCostTest, ReworkIsTheRateOverTheHoursHeldTimesTheLoss) {
  FailureRate rate;
  rate.per_hour = 0.1;
  rate.lost_hours_per_failure = 1;
  const JobCost cost = ProjectJobCost(Inputs(2, 0.002, 0, rate), 10'000);
  EXPECT_NEAR(cost.expected_failures, 1 / 0.9, 1e-12);
  EXPECT_NEAR(cost.rework_gpu_hours, 2 / 0.9, 1e-12);
  EXPECT_NEAR(cost.total_gpu_hours, 20 + 2 / 0.9, 1e-12);
}

// A failure loses the relaunch and the progress since the last checkpoint:
// about half of an attempt's progress when checkpoints are rarer than the
// attempt is long. Measured at 0.71 h over attempts of 1.3 h, a job of
// 0.5 h loses 0.71 - (1.3 - 0.5) / 2 = 0.31 h a failure; a job as long as
// those attempts or longer loses the measured 0.71; never below the
// relaunch's start-up, nor below that start-up and half of its own run
// when that is less than was measured.
TEST(ProjectJobCostTest, AJobShorterThanTheMeasuredAttemptsLosesLess) {
  FailureRate rate;
  rate.per_hour = 0.25;
  rate.lost_hours_per_failure = 0.71;
  rate.lost_over_attempt_hours = 1.3;
  EXPECT_NEAR(LostHoursForJob(rate, 0.5, 0.05), 0.31, 1e-12);
  EXPECT_DOUBLE_EQ(LostHoursForJob(rate, 1.3, 0.05), 0.71);
  EXPECT_DOUBLE_EQ(LostHoursForJob(rate, 20, 0.05), 0.71);
  EXPECT_NEAR(LostHoursForJob(rate, 0.01, 0.05), 0.065, 1e-12);
  EXPECT_NEAR(LostHoursForJob(rate, 0.01, 0.1), 0.105, 1e-12);
  // Never above what was measured, whatever the start-up.
  EXPECT_DOUBLE_EQ(LostHoursForJob(rate, 0.01, 2), 0.71);
  // The prior's loss (no attempts it was measured over) stands.
  FailureRate prior = rate;
  prior.lost_over_attempt_hours = 0;
  EXPECT_DOUBLE_EQ(LostHoursForJob(prior, 0.5, 0.05), 0.71);
  // Checkpointed attempts: 1.5 h long, they lost 0.55 h a failure, less
  // than half their length. A 0.8 h job with no checkpoint inside it loses
  // at least its start-up and half its run (0.45 h), not 0.55 - 0.35.
  FailureRate checkpointed = rate;
  checkpointed.lost_hours_per_failure = 0.55;
  checkpointed.lost_over_attempt_hours = 1.5;
  EXPECT_NEAR(LostHoursForJob(checkpointed, 0.8, 0.05), 0.45, 1e-12);
  EXPECT_NEAR(LostHoursForJob(checkpointed, 0.1, 0.05), 0.10, 1e-12);
  EXPECT_DOUBLE_EQ(LostHoursForJob(checkpointed, 1.2, 0.05), 0.55);

  // One GPU, 0.05 h of start-up and 0.45 h of steps: 0.5 h a job.
  const JobCost short_job =
      ProjectJobCost(Inputs(1, 0.00045, 0.05, rate), 1000);
  EXPECT_NEAR(short_job.lost_hours_per_failure, 0.31, 1e-9);
  const double failures = 0.25 * 0.5 / (1 - 0.25 * 0.31);
  EXPECT_NEAR(short_job.rework_gpu_hours, failures * 0.31, 1e-9);
  // Ten times as long: the measured loss.
  const JobCost long_job =
      ProjectJobCost(Inputs(1, 0.00045, 0.05, rate), 10'000);
  EXPECT_DOUBLE_EQ(long_job.lost_hours_per_failure, 0.71);
}

TEST(ProjectJobCostTest, APoolFailingFasterThanItWorksIsDearNotInfinite) {
  FailureRate rate;
  rate.per_hour = 10;
  rate.lost_hours_per_failure = 1;
  const JobCost cost = ProjectJobCost(Inputs(1, 0.001, 0, rate), 1000);
  EXPECT_TRUE(std::isfinite(cost.total_gpu_hours));
  EXPECT_GT(cost.total_gpu_hours, 100);
}

TEST(FailureRateTest, GammaQuantiles) {
  // Gamma(1, 1) is the unit exponential: its median is ln 2.
  EXPECT_NEAR(GammaQuantile(1, 1, 0.5), std::log(2.0), 1e-9);
  EXPECT_NEAR(GammaQuantile(1, 2, 0.9), std::log(10.0) / 2, 1e-9);
  // Shape 10: the p10 and p90 straddle the mean 10.
  EXPECT_LT(GammaQuantile(10, 1, 0.1), 10);
  EXPECT_GT(GammaQuantile(10, 1, 0.9), 10);
}

PoolReliabilityRollup Pool(double hours, int hardware_errors) {
  PoolReliabilityRollup r;
  r.pool_name = std::string(1, 'p');
  r.runs = 4;
  r.attempts = 4;
  r.run_hours = hours;
  r.hardware_error_attempts = hardware_errors;
  r.failure_lost_hours = 0.75 * hardware_errors;
  return r;
}

TEST(FailureRateTest, ThePriorIsWeakAndEvidenceNarrowsTheBand) {
  const PoolReliabilityRollup empty;
  const FailureRate prior = EstimateFailureRate(empty, empty, false, 0.05);
  EXPECT_NEAR(prior.per_hour, kFailurePriorShape / kFailurePriorHours, 1e-12);
  EXPECT_FALSE(prior.lost_hours_measured);
  EXPECT_DOUBLE_EQ(prior.lost_hours_per_failure,
                   kPriorLostHoursPerFailure + 0.05);
  // One failure in 4 hours: above the prior, with a wide band.
  const FailureRate thin = EstimateFailureRate(Pool(4, 1), empty, false, 0);
  EXPECT_GT(thin.per_hour, 0.04);
  EXPECT_TRUE(thin.lost_hours_measured);
  EXPECT_DOUBLE_EQ(thin.lost_hours_per_failure, 0.75);
  // Twenty-five in a hundred: the same order of rate, a narrower band.
  const FailureRate thick = EstimateFailureRate(Pool(100, 25), empty, false, 0);
  // The prior weighs one of the pool's attempts (25 hours here).
  EXPECT_NEAR(thick.per_hour,
              (kFailurePriorShape / kFailurePriorHours * 25 + 25) / (25 + 100),
              1e-12);
  EXPECT_LT(thick.per_hour_band.high / thick.per_hour_band.low,
            thin.per_hour_band.high / thin.per_hour_band.low);
}

TEST(FailureRateTest, CollectiveTimeoutsBearOnMultiGpuLayoutsOnly) {
  PoolReliabilityRollup multi;
  multi.pool_name = "p";
  multi.multi_gpu = true;
  multi.runs = 4;
  multi.attempts = 4;
  multi.run_hours = 10;
  multi.collective_timeout_attempts = 4;
  const PoolReliabilityRollup single;
  const FailureRate one_gpu = EstimateFailureRate(single, multi, false, 0);
  const FailureRate eight_gpus = EstimateFailureRate(single, multi, true, 0);
  EXPECT_EQ(one_gpu.failures, 0);
  EXPECT_EQ(eight_gpus.failures, 4);
  EXPECT_GT(eight_gpus.per_hour, 10 * one_gpu.per_hour);
}

// The loss is measured with the mean attempt it came from: the recipe's own
// attempts when it failed, else the pool's.
TEST(FailureRateTest, TheLossKeepsTheAttemptsItWasMeasuredOver) {
  PoolFailures pool;
  pool.single_gpu = Pool(8, 2);  // 4 attempts over 8 h: 2 h an attempt
  const FailureRate from_pool =
      EstimateFailureRate(pool.single_gpu, {}, false, 0.05);
  EXPECT_DOUBLE_EQ(from_pool.lost_hours_per_failure, 0.75);
  EXPECT_NEAR(from_pool.lost_over_attempt_hours,
              pool.single_gpu.ExposureHours() / 4, 1e-12);
  RecipeFailures own;
  own.attempts = 5;
  own.failed_attempts = 1;
  own.node_failed_attempts = 1;
  own.exposure_hours = 4;
  own.lost_hours = 0.5;
  const FailureRate mine = EstimateLayoutFailureRate(pool, false, 0.05, own);
  EXPECT_DOUBLE_EQ(mine.lost_hours_per_failure, 0.5);
  EXPECT_DOUBLE_EQ(mine.lost_over_attempt_hours, 0.8);
}

TEST(PoolReliabilityRollupTest, CountsPoolFailuresAndWhatTheyLost) {
  MeasuredRun run;
  run.pool_name = "p";
  run.gpu_count = 2;
  run.started = absl::FromUnixSeconds(1'700'000'000);
  run.ended = run.started + absl::Hours(2);
  run.step_time_mean_s = 3.6;
  run.steps_attempted = 1500;
  run.steps_succeeded = 1000;  // kept by the last checkpoint: 1 hour
  run.outcome = RunOutcome::kHardwareError;
  PoolReliabilityRollup rollup;
  rollup.Add(run);
  run.outcome = RunOutcome::kOom;  // the recipe's, not the pool's
  rollup.Add(run);
  EXPECT_TRUE(rollup.multi_gpu);
  EXPECT_EQ(rollup.runs, 2);
  EXPECT_EQ(rollup.attempts, 2);
  EXPECT_DOUBLE_EQ(rollup.run_hours, 4);
  EXPECT_EQ(rollup.hardware_error_attempts, 1);
  EXPECT_DOUBLE_EQ(rollup.failure_lost_hours, 1);
}

// The guide's L40S case: three attempts of 200 steps that each ended in a
// collective timeout, in one run record. Three failures, and each lost its
// own attempt, not the run's whole wall time.
TEST(PoolReliabilityRollupTest, EveryFailedAttemptIsAFailure) {
  MeasuredRun run;
  run.pool_name = "l40s";
  run.gpu_count = 2;
  run.started = absl::FromUnixSeconds(1'700'000'000);
  run.ended = run.started + absl::Seconds(3 * (60 + 200 * 0.6));
  run.step_time_mean_s = 0.6;
  run.steps_attempted = 600;
  run.steps_succeeded = 0;
  run.retries = 2;
  run.outcome = RunOutcome::kCollectiveTimeout;
  PoolReliabilityRollup rollup;
  rollup.Add(run);
  EXPECT_EQ(rollup.attempts, 3);
  EXPECT_EQ(rollup.collective_timeout_attempts, 3);
  const FailureRate rate = EstimateFailureRate({}, rollup, true, 0);
  EXPECT_EQ(rate.failures, 3);
  EXPECT_NEAR(rate.lost_hours_per_failure, (60 + 200 * 0.6) / 3600.0, 1e-9);
}

// A run that succeeded after two retries failed twice: the pool's rate
// counts them when their cause is the pool's.
TEST(PoolReliabilityRollupTest, ASucceededRunWithRetriesHadFailures) {
  MeasuredRun run;
  run.pool_name = "p";
  run.gpu_count = 1;
  run.started = absl::FromUnixSeconds(1'700'000'000);
  run.ended = run.started + absl::Hours(3);
  run.step_time_mean_s = 1;
  run.steps_attempted = 6000;
  run.steps_succeeded = 3600;
  run.retries = 2;
  run.retry_outcomes = {RunOutcome::kPreempted, RunOutcome::kHardwareError};
  run.outcome = RunOutcome::kSucceeded;
  PoolReliabilityRollup rollup;
  rollup.Add(run);
  EXPECT_EQ(rollup.attempts, 3);
  EXPECT_EQ(rollup.preempted_attempts, 1);
  EXPECT_EQ(rollup.hardware_error_attempts, 1);
  EXPECT_GT(rollup.failure_lost_hours, 0);
  // Without the causes, the retries of a succeeded run are of unknown
  // cause: the recipe's record counts them, the pool's does not.
  run.retry_outcomes.clear();
  PoolReliabilityRollup unknown;
  unknown.Add(run);
  EXPECT_EQ(unknown.preempted_attempts + unknown.hardware_error_attempts, 0);
  EvidenceRollup evidence;
  evidence.Add(run);
  EXPECT_EQ(Summarize(evidence).failed_attempts, 2);
}

}  // namespace
}  // namespace placement::core
