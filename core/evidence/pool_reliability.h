#ifndef PLACEMENT_CORE_EVIDENCE_POOL_RELIABILITY_H_
#define PLACEMENT_CORE_EVIDENCE_POOL_RELIABILITY_H_

// How often a pool's runs fail, whatever they trained: a preemption or a
// hardware error is evidence about the pool's nodes, across recipes; a
// collective timeout about its fabric, for layouts that open collectives.
// An out-of-memory or an unexplained failure is evidence about the recipe
// on the SKU and is not counted here (EvidenceRollup keeps it). Failures
// are counted per failed ATTEMPT (a run's retries are failed attempts,
// core/evidence/run_attempts.h) over the hours the runs held the pool, and
// estimated as a rate with its uncertainty (a Gamma-Poisson posterior), so
// one preemption prices a pool a little higher instead of banning it.
//
// This is the rate a recipe with no failure record of its own is priced
// at, and the prior of a measured recipe's own rate
// (EstimateRecipeFailureRate).

#include <cstdint>
#include <string>

#include "core/evidence/log_histogram.h"
#include "core/evidence/most_failed_run.h"
#include "core/models/fit.h"

namespace placement::core {

// core/evidence/evidence.h, which includes this header.
struct MeasuredRun;
enum class RunOutcome;

// Mergeable sums over the runs of one pool with one or with several GPUs
// (what the storage table pool_reliability_rollups keeps per row, the
// per-attempt columns of migration 0022).
struct PoolReliabilityRollup {
  std::string pool_name;
  bool multi_gpu = false;
  int64_t runs = 0;
  int64_t attempts = 0;  // runs + their retries
  // Wall hours the runs held the pool as counted (RunAttempts: at most
  // their steps plus a bounded overhead an attempt), failures included.
  double run_hours = 0;
  // Failed attempts by the pool's causes.
  int64_t preempted_attempts = 0;
  int64_t hardware_error_attempts = 0;
  int64_t collective_timeout_attempts = 0;
  // Over those attempts: the wall hours that produced no kept step (their
  // share of their runs' lost hours, RunAttempts::lost_hours).
  double failure_lost_hours = 0;
  // Each run's counted hours, one count a run (kRunHoursHistogram), and the
  // exact hours of the runs in each bucket, in microseconds: they bound the
  // exposure one run can add (ExposureHours).
  LogHistogram run_hours_hist;
  LogHistogram run_microseconds_by_bucket;
  // The run with the most failed attempts of the pool's causes (its lost
  // hours: failure_lost_hours' share), and the next one's count: one run's
  // failures count at most twice any other run's (and two).
  MostFailedRun most_failed_run;

  // Adds `run` (of this pool and GPU scope).
  void Add(const MeasuredRun& run);
  void Merge(const PoolReliabilityRollup& other);

  // run_hours, with no run counting more than kMaxRunInTypicalRuns times
  // the hours of the pool's p75 run: one run claiming months of steps
  // weighs as a few long runs, not as the pool's whole history, while a
  // fleet of short measurements and long jobs counts every hour (the p75
  // is a job's as long as a quarter of the runs are).
  double ExposureHours() const;
  // ExposureHours with the most-failed run's excess failed attempts left
  // out (MostFailedRun): that run counts its hours for the attempts kept,
  // within the same cap.
  double CountedExposureHours() const;

  friend bool operator==(const PoolReliabilityRollup&,
                         const PoolReliabilityRollup&) = default;
};

// A run's counted hours: 1 minute .. ~45 days, 19% wide buckets (2^(1/4)).
inline constexpr LogHistogramSpec kRunHoursHistogram{1.0 / 60, 1.189207115, 64};
inline constexpr double kMaxRunInTypicalRuns = 10;

// The failure rate a plan prices a layout at: per hour a run holds the
// pool, with a p10-p90 band, and what one failure costs in wall hours
// besides the relaunch's own run.
struct FailureRate {
  double per_hour = 0;
  Band per_hour_band;
  int64_t failures = 0;  // observed failed attempts that bear on it
  double hours = 0;      // observed run hours they were counted over
  // Wall hours lost per failure: measured when failures were observed,
  // else kPriorLostHoursPerFailure plus the start-up given.
  double lost_hours_per_failure = 0;
  bool lost_hours_measured = false;
  // The mean attempt, in wall hours, of the runs whose failures measured
  // that loss (0 for the prior): a failure loses part of the progress an
  // attempt had made, so a job shorter than those attempts loses less
  // (LostHoursForJob).
  double lost_over_attempt_hours = 0;
  // Whether the rate rests on the recipe's own attempts on the SKU
  // (EstimateRecipeFailureRate), not on the pool's alone.
  bool recipe_measured = false;
};

// The prior on a pool's failure rate: a mean of one failure per 200
// run-hours held (kFailurePriorShape / kFailurePriorHours). Before any run
// of the pool it weighs 5 hours of runs; once the pool has runs, one
// attempt of their mean length, so that what the runs show decides (a pool
// whose first runs failed nine times in half an hour is priced at what
// that shows, not at a tenth of it), while one failure in hours of runs
// is a wide band, not a ban (one failure in 5 hours: about 0.2 an hour).
inline constexpr double kFailurePriorShape = 0.025;
inline constexpr double kFailurePriorHours = 5;
// What a failure loses besides start-up when no failure was measured: half
// an hour of progress since the last checkpoint and detection (an
// assumption, replaced by the pool's measured loss once it has failures).
inline constexpr double kPriorLostHoursPerFailure = 0.5;

// The rate for a layout of `multi_gpu` on the pool, for a recipe with no
// record of its own there: preemptions and hardware errors of every run of
// the pool, plus collective timeouts of multi-GPU runs for a multi-GPU
// layout. `startup_hours` is the layout's expected start-up, lost again by
// every failure when none was measured.
FailureRate EstimateFailureRate(const PoolReliabilityRollup& single_gpu,
                                const PoolReliabilityRollup& multi_gpu,
                                bool layout_is_multi_gpu, double startup_hours);

// A pool's failure sums for runs of one GPU and of several.
struct PoolFailures {
  PoolReliabilityRollup single_gpu;
  PoolReliabilityRollup multi_gpu;
};

// What a recipe's own runs on the SKU recorded of their attempts
// (EvidenceStats): failed attempts by cause group (the pool's nodes:
// preemption or hardware error; its fabric: a collective timeout; the rest,
// out of memory or unexplained, the recipe's), over the hours they held
// the SKU as counted, and the hours the failures lost. Per SKU: a SKU's
// pools share it, so the pool's causes are read from the pool's own sums.
struct RecipeFailures {
  int64_t attempts = 0;
  int64_t failed_attempts = 0;
  int64_t node_failed_attempts = 0;
  int64_t fabric_failed_attempts = 0;
  double exposure_hours = 0;
  double lost_hours = 0;
};

// The rate of a measured recipe's layout on `pool`: the pool's causes
// (its nodes, and for a multi-GPU layout its fabric) at the pool's rate
// (EstimateFailureRate: every run of the pool counts, this recipe's
// included: a preemption is the pool's, and so is a fabric that times out),
// plus the recipe's own causes (out of memory, unexplained) from its record
// alone, over one more attempt of it. The loss per failure is the recipe's
// own (at most kMaxLossInAttempts of its mean attempt), else the pool's.
// Without exposure of its own it is EstimateFailureRate's.
FailureRate EstimateLayoutFailureRate(const PoolFailures& pool,
                                      bool layout_is_multi_gpu,
                                      double startup_hours,
                                      const RecipeFailures& own);

// What one failure of `rate` loses in a job of `job_hours` wall hours
// without failures. A failure's loss is the relaunch (detection, start-up)
// plus the progress since the last checkpoint, on average half of what
// the attempt had run when checkpoints are rarer than the attempt is long;
// so where the measured loss came from attempts longer than the job, the
// job loses less. How much less depends on checkpoints the service does
// not see, so the larger of two figures each at most the loss is used:
// lost_hours_per_failure - (lost_over_attempt_hours - job_hours) / 2 (no
// checkpoint inside the attempts: half the difference less), and
// `floor_hours` + job_hours / 2 (no checkpoint inside the job: its
// relaunch's start-up and half its run; attempts checkpointed often lost
// less than half their length, and the first figure would take more off
// than they ever lost to progress). Never below `floor_hours` (the
// relaunch's start-up, which every failure pays again) nor above the
// measured loss. A job as long as those attempts, or longer, loses what
// they lost.
double LostHoursForJob(const FailureRate& rate, double job_hours,
                       double floor_hours);

// One failed attempt loses at most this many of the recipe's mean attempts
// (a failure cannot lose more than the attempt it ended and a relaunch; the
// cap keeps one implausible report from pricing every later failure).
inline constexpr double kMaxLossInAttempts = 2;

// The q-quantile (0 < q < 1) of a Gamma(shape, rate) distribution.
double GammaQuantile(double shape, double rate, double q);

}  // namespace placement::core

#endif  // PLACEMENT_CORE_EVIDENCE_POOL_RELIABILITY_H_
