#ifndef PLACEMENT_CORE_QUEUE_START_ESTIMATE_H_
#define PLACEMENT_CORE_QUEUE_START_ESTIMATE_H_

// When a new job of G GPUs would start on a pool: the probability of a
// start within t, from the pool's last report (its queue played forward:
// core/queue/queue_forecast.h), read through how the pool's earlier
// forecasts of this kind, its plans', fared against the starts of the jobs
// they placed (calibration). Unknown,
// never zero, when there is nothing to rest it on: no report, a stale one,
// a job ahead whose run time nothing tells.

#include <string>
#include <vector>

#include "absl/time/time.h"
#include "core/queue/pool_state.h"
#include "core/queue/queue_forecast.h"
#include "core/queue/queue_history.h"
#include "core/queue/run_time_model.h"
#include "core/queue/start_calibration.h"

namespace placement::core {

// How many draws an estimate keeps (its calibrated quantiles at
// (k + 0.5) / kEstimatePoints).
inline constexpr int kEstimatePoints = 64;

// A pool's queue as the planner's snapshot keeps it: the last report, when
// it arrived (the service's clock), what the pool's reports taught, the
// run times of the jobs this service placed there, and the forecast and
// the calibration made from them once per report.
struct PoolQueue {
  PoolState state;
  absl::Time received = absl::InfinitePast();
  QueueHistory history;
  PlannedRunTimes planned;
  QueueForecast forecast;
  StartCalibration calibration;
};

// Builds it, forecasting once. `waiting`: the plans' forecasts of the
// placed jobs still waiting (the pool's open predictions); each one the
// report shows waiting is a check already known to lie above its
// forecast's probability of a start by the report's observed time.
PoolQueue MakePoolQueue(PoolState state, absl::Time received,
                        QueueHistory history, PlannedRunTimes planned,
                        const std::vector<StartPrediction>& waiting = {});

enum class StartStatus {
  kKnown = 0,
  kNoState = 1,          // the pool's orchestrator never reported
  kStale = 2,            // its last report is older than the limit
  kUnknownRunTimes = 3,  // a job ahead has no run time to draw
  kTooLarge = 4,         // more GPUs than the pool has in service
};

const char* StartStatusName(StartStatus status);  // "KNOWN", "STALE", ...

struct StartEstimate {
  StartStatus status = StartStatus::kNoState;
  // Known: what it rests on; otherwise why it is unknown.
  std::string reason;
  // Known: seconds from now, kEstimatePoints calibrated draws, sorted.
  std::vector<double> delay_s;
  // Known: the forecast before calibration, seconds from now at
  // kPredictionLevels levels (core::PredictionLevels): what the start of a
  // job placed on it is checked against.
  std::vector<double> uncalibrated_levels_s;
  double mean_s = 0;
  // How many earlier plans' forecasts on the pool were checked against the
  // starts of the jobs they placed, and whether there were enough to read
  // this one through them (kMinCalibrationPits).
  int calibration_pits = 0;
  bool calibrated = false;
  // The report it rests on: when observed (the reporter's clock) and how
  // long ago it arrived (the service's clock).
  absl::Time observed = absl::InfinitePast();
  absl::Duration age;
  int jobs_ahead = 0;
  int gpus_ahead = 0;

  bool known() const { return status == StartStatus::kKnown; }
  // Seconds from now by which the job starts with probability `p`.
  double Quantile(double p) const;
};

// The estimate for `gpus` GPUs on a pool whose queue is `queue` (null: no
// report), `age` after its report arrived; stale beyond `max_age`. The
// draws are read `age` later than the report (a start already due is now),
// which ignores what happened in between: reports are meant to arrive far
// more often than `max_age`.
StartEstimate EstimateStart(const PoolQueue* queue, int gpus,
                            absl::Duration age, absl::Duration max_age);

}  // namespace placement::core

#endif  // PLACEMENT_CORE_QUEUE_START_ESTIMATE_H_
