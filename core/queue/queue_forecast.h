#ifndef PLACEMENT_CORE_QUEUE_QUEUE_FORECAST_H_
#define PLACEMENT_CORE_QUEUE_QUEUE_FORECAST_H_

// A pool's queue played forward many times: each draw gives every running
// job and every waiting one a run time (core/queue/run_time_model.h) and
// starts the waiting jobs in their reported order as GPUs free up, each one
// once it fits (first come, first served: a job behind never starts before
// one ahead of it). What it keeps of each draw is how the free GPUs grow
// after the last waiting job has started, which is all a new job placed at
// the back of the queue needs, for any GPU count.
//
// Orchestrators that backfill (Slurm) may start a small job early, so for
// them the order makes the forecast a little late; the calibration reads
// it through how the forecasts fared (core/queue/start_estimate.h).

#include <string>
#include <utility>
#include <vector>

#include "core/queue/pool_state.h"
#include "core/queue/queue_history.h"
#include "core/queue/run_time_model.h"

namespace placement::core {

inline constexpr int kForecastDraws = 256;

struct QueueForecastOptions {
  int draws = kForecastDraws;
};

struct QueueForecast {
  bool known = false;
  std::string unknown_reason;  // when not known: which job and why
  // What the run times rest on, in words.
  std::string basis;
  int gpus_total = 0;
  int running_jobs = 0;
  int pending_jobs = 0;  // that can ever start (fewer GPUs than in service)
  int pending_gpus = 0;
  // Per draw: from when the last waiting job started on, each moment the
  // free GPUs grow: (seconds after the report's observed time, GPUs free
  // from then on), strictly increasing in both.
  std::vector<std::vector<std::pair<double, int>>> tails;
};

// The forecast of `state`'s queue. Unknown when a job's run time cannot be
// drawn (no plan of this service, no time limit, fewer than
// kMinHistoryRunTimes finished jobs measured), or when GPUs are held by jobs
// nobody reported and there is no history to draw their rest from.
// Deterministic: draws are seeded by the pool's name and the observed time.
QueueForecast ForecastQueue(const PoolState& state, const QueueHistory& history,
                            const PlannedRunTimes& planned,
                            const QueueForecastOptions& options = {});

// Each draw's start of a new job of `gpus` GPUs queued behind every waiting
// job (seconds after the observed time), sorted; empty when the forecast is
// unknown or the pool has fewer GPUs in service.
std::vector<double> NewJobStarts(const QueueForecast& forecast, int gpus);

// Sorted start draws as a prediction keeps them (StartPrediction): at
// kPredictionLevels levels 0, 0.05, ..., 1, the smallest and the largest
// draw at the ends, each `shift_s` earlier (none below 0).
std::vector<double> PredictionLevels(const std::vector<double>& sorted_draws,
                                     double shift_s = 0);

// The value at level `p` of sorted draws (each draw at level (i + 0.5) / n,
// linear in between, the ends held).
double QuantileOfSorted(const std::vector<double>& sorted, double p);

}  // namespace placement::core

#endif  // PLACEMENT_CORE_QUEUE_QUEUE_FORECAST_H_
