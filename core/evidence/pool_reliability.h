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

  // Adds `run` (of this pool and GPU scope).
  void Add(const MeasuredRun& run);
  void Merge(const PoolReliabilityRollup& other);

  friend bool operator==(const PoolReliabilityRollup&,
                         const PoolReliabilityRollup&) = default;
};

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
  // Whether the rate rests on the recipe's own attempts on the SKU
  // (EstimateRecipeFailureRate), not on the pool's alone.
  bool recipe_measured = false;
};

// The prior on a pool's failure rate before any of its runs: a Gamma with
// shape kFailurePriorShape and rate kFailurePriorHours, i.e. a mean of one
// failure per 200 run-hours held with the weight of 5 hours of runs. Weak
// on purpose: a pool that fails by the hour shows it within a few hours of
// runs (one failure in its first 5 hours prices it at 0.1 an hour, which a
// healthy pool shows with a chance of about 2%), and one failure in a long
// history barely moves it.
inline constexpr double kFailurePriorShape = 0.025;
inline constexpr double kFailurePriorHours = 5;
// What a failure loses besides start-up when no failure was measured: half
// an hour of progress since the last checkpoint and detection (an
// assumption, replaced by the pool's measured loss once it has failures).
inline constexpr double kPriorLostHoursPerFailure = 0.5;

// The rate for a layout of `multi_gpu` on the pool: preemptions and
// hardware errors of every run of the pool, plus collective timeouts of
// multi-GPU runs for a multi-GPU layout. `startup_hours` is the layout's
// expected start-up, lost again by every failure when none was measured.
FailureRate EstimateFailureRate(const PoolReliabilityRollup& single_gpu,
                                const PoolReliabilityRollup& multi_gpu,
                                bool layout_is_multi_gpu, double startup_hours);

// The rate of a measured recipe's layout: its own failed attempts, whatever
// their cause, over the hours its runs held the SKU (`failed_attempts`,
// `exposure_hours`, `attempts`), with the pool's rate for the layout
// (`pool`) as the prior, weighed as one more attempt of the recipe's mean
// length: the recipe's own record decides once it has a few attempts, so
// that its projected cost agrees with what its runs cost. The loss per
// failure is the recipe's own (`lost_hours` over its failed attempts),
// capped at kMaxLossInAttempts of its mean attempt, else the pool's. With
// no exposure it is `pool`.
FailureRate EstimateRecipeFailureRate(int64_t attempts, int64_t failed_attempts,
                                      double exposure_hours, double lost_hours,
                                      const FailureRate& pool);

// One failed attempt loses at most this many of the recipe's mean attempts
// (a failure cannot lose more than the attempt it ended and a relaunch; the
// cap keeps one implausible report from pricing every later failure).
inline constexpr double kMaxLossInAttempts = 2;

// The q-quantile (0 < q < 1) of a Gamma(shape, rate) distribution.
double GammaQuantile(double shape, double rate, double q);

}  // namespace placement::core

#endif  // PLACEMENT_CORE_EVIDENCE_POOL_RELIABILITY_H_
