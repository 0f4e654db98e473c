#ifndef PLACEMENT_CORE_EVIDENCE_POOL_RELIABILITY_H_
#define PLACEMENT_CORE_EVIDENCE_POOL_RELIABILITY_H_

// How often a pool's runs fail, whatever they trained: a preemption or a
// hardware error is evidence about the pool's nodes, across recipes; a
// collective timeout about its fabric, for layouts that open collectives.
// An out-of-memory run is evidence about the recipe on the SKU and is not
// counted here (EvidenceRollup keeps it). Failures are counted per hour a
// run held the pool and estimated as a rate with its uncertainty (a
// Gamma-Poisson posterior), so one preemption prices a pool a little
// higher instead of banning it.

#include <cstdint>
#include <string>
#include <vector>

#include "core/models/fit.h"

namespace placement::core {

// core/evidence/evidence.h, which includes this header.
struct MeasuredRun;
enum class RunOutcome;

// Mergeable sums over the runs of one pool with one or with several GPUs
// (what the storage table pool_reliability_rollups keeps per row).
struct PoolReliabilityRollup {
  std::string pool_name;
  bool multi_gpu = false;
  int64_t runs = 0;
  // Wall hours the runs held the pool (ended - started), failures included.
  double run_hours = 0;
  int64_t preempted_runs = 0;
  int64_t hardware_error_runs = 0;
  int64_t collective_timeout_runs = 0;
  // Over the runs counted above as failures: the wall hours that produced
  // no kept step (start-up, progress since the last checkpoint, the time
  // until the failure was detected): wall - steps_succeeded x mean step.
  double failure_lost_hours = 0;

  // Adds `run` (of this pool and GPU scope; out-of-memory and other
  // outcomes add hours but no failure).
  void Add(const MeasuredRun& run);
  void Merge(const PoolReliabilityRollup& other);
  // Whether `outcome` is a failure of the pool (preempted, hardware error,
  // or a collective timeout).
  static bool IsPoolFailure(RunOutcome outcome);

  friend bool operator==(const PoolReliabilityRollup&,
                         const PoolReliabilityRollup&) = default;
};

// The failure rate a plan prices a layout at: per hour a run holds the
// pool, with a p10-p90 band, and what one failure costs in wall hours
// besides the relaunch's own run.
struct FailureRate {
  double per_hour = 0;
  Band per_hour_band;
  int64_t failures = 0;  // observed, that bear on this layout
  double hours = 0;      // observed run hours they were counted over
  // Wall hours lost per failure: measured when failures were observed,
  // else kPriorLostHoursPerFailure plus the start-up given.
  double lost_hours_per_failure = 0;
  bool lost_hours_measured = false;
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

// One cause's share of a pool's failure rate, as EstimateFailureRate
// counts it: preemptions and hardware errors per hour of every run of the
// pool, collective timeouts per hour of its multi-GPU runs. Each is the
// same Gamma-Poisson posterior with the prior's shape split between the
// causes it is added to (the node prior between preemptions and hardware
// errors), so that preemptions and hardware errors add up to a layout's
// node rate and, for a multi-GPU layout, the collective timeouts to its
// fabric rate. The bands are each cause's own p10-p90.
struct CauseFailureRate {
  RunOutcome cause;
  int64_t failures = 0;
  double hours = 0;  // the run hours they were counted over
  double per_hour = 0;
  Band per_hour_band;
};

// Preempted, hardware error, collective timeout, in that order.
std::vector<CauseFailureRate> FailureRatesByCause(
    const PoolReliabilityRollup& single_gpu,
    const PoolReliabilityRollup& multi_gpu);

// The q-quantile (0 < q < 1) of a Gamma(shape, rate) distribution.
double GammaQuantile(double shape, double rate, double q);

}  // namespace placement::core

#endif  // PLACEMENT_CORE_EVIDENCE_POOL_RELIABILITY_H_
