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

// A deterministic generator (splitmix64): forecasts are the same for the
// same state, so plans made from one snapshot are too.
class Rng {
 public:
  explicit Rng(uint64_t seed) : state_(seed) {}
  uint64_t Next();
  double Uniform();      // in [0, 1)
  double Exponential();  // mean 1

 private:
  uint64_t state_;
};

// The standard normal's distribution and its inverse.
double NormalCdf(double z);
double InverseNormalCdf(double p);  // p in (0, 1)

class RunTimeModel {
 public:
  explicit RunTimeModel(const QueueHistory& history);

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
  size_t history_with_limits() const { return ratios_.size(); }

 private:
  // A draw above `floor` from a sorted sample; nullopt when fewer than 3 of
  // its values are above it.
  static std::optional<double> DrawAbove(const std::vector<double>& sorted,
                                         double floor, Rng& rng);

  std::vector<double> durations_;   // sorted
  std::vector<double> ratios_;      // run time / limit, sorted
  std::vector<double> cumulative_;  // of durations_, for length bias
};

}  // namespace placement::core

#endif  // PLACEMENT_CORE_QUEUE_RUN_TIME_MODEL_H_
