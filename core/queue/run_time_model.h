#ifndef PLACEMENT_CORE_QUEUE_RUN_TIME_MODEL_H_
#define PLACEMENT_CORE_QUEUE_RUN_TIME_MODEL_H_

// How long a job on a pool will run, as a distribution to draw from: the
// service's own plan where it placed the job; else the pool's measured
// history (the run times of its finished jobs, or, for a job with a time
// limit, their run time as a share of the limit they had); else the time
// limit alone (any end before it as likely as another); else unknown.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/queue/pool_state.h"
#include "core/queue/queue_history.h"
#include "core/queue/rng.h"
#include "core/queue/survival.h"

namespace placement::core {

// Fewer finished jobs than this and the history is not drawn from.
inline constexpr size_t kMinHistoryRunTimes = 10;

// A job's run time as this service's plan expected it: the median and the
// 90th percentile (from the candidate's expected wall time and its
// step-time band), read as a lognormal.
struct PlannedRunTime {
  double median_s = 0;
  double p90_s = 0;

  friend bool operator==(const PlannedRunTime&,
                         const PlannedRunTime&) = default;
};
using PlannedRunTimes = std::map<std::string, PlannedRunTime>;  // by job id

enum class RunTimeSource {
  kUnknown = 0,
  kPlan = 1,            // this service's plan
  kHistory = 2,         // the pool's finished jobs' run times
  kHistoryOfLimit = 3,  // their run time as a share of their limit
  kTimeLimit = 4,       // the job's limit alone
};

// The standard normal's distribution and its inverse.
double NormalCdf(double z);
double InverseNormalCdf(double p);  // p in (0, 1)

// A job still running that no plan of this service placed: what it has run
// so far, and its time limit (0: none). The run-time distribution counts it
// as running at least that long (core/queue/survival.h).
struct StillRunning {
  double elapsed_s = 0;
  double limit_s = 0;
};

class RunTimeModel {
 public:
  RunTimeModel(const QueueHistory& history,
               const std::vector<StillRunning>& running = {});

  RunTimeSource SourceFor(const QueuedJob& job,
                          const PlannedRunTime* planned) const;

  // A draw of the job's whole run time in seconds, given that it has run
  // `elapsed_s` already (0 for a waiting job): never below it. Only for a
  // source other than kUnknown.
  double Draw(const QueuedJob& job, const PlannedRunTime* planned,
              double elapsed_s, Rng& rng) const;

  // What GPUs held by jobs nobody reported have left to run: a draw of the
  // history's residual life (a run time picked in proportion to its length,
  // a uniform share of it left). Only with enough history.
  bool CanDrawResidual() const;
  double DrawResidual(Rng& rng) const;

  size_t history_size() const { return durations_.size(); }
  size_t history_with_limits() const { return ratios_.ended(); }

 private:
  std::vector<double> durations_;   // finished jobs', sorted
  std::vector<double> cumulative_;  // of durations_, for length bias
  SurvivalSample run_times_;        // finished and still running
  SurvivalSample ratios_;           // run time / limit, the same
};

}  // namespace placement::core

#endif  // PLACEMENT_CORE_QUEUE_RUN_TIME_MODEL_H_
