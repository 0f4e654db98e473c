#ifndef PLACEMENT_CORE_QUEUE_QUEUE_HISTORY_H_
#define PLACEMENT_CORE_QUEUE_QUEUE_HISTORY_H_

// What a pool's reports teach over time, kept bounded: how long its jobs
// ran (the "measured history" a waiting job's run time is drawn from when
// no plan of this service placed it), how long jobs waited, and how the
// start forecasts of this service's plans fared against the starts of the
// jobs that carried them out (the calibration every estimate is read
// through).

#include <optional>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "core/queue/pool_state.h"

namespace placement::core {

// The most of each series a pool keeps: the newest, oldest dropped first.
inline constexpr size_t kMaxHistoryDurations = 512;
inline constexpr size_t kMaxHistoryWaits = 512;
// Fewer forecast checks: a pool's queue changes (a busy week, nodes
// drained), and its forecasts must be read through the checks of the
// queue it has now. Kept by the hundred, the checks of an earlier stretch
// outnumbered the recent ones, and the step between the two made
// neighbours move together, so the calibration barely moved
// (docs/DECISIONS.md, "The checks of now").
inline constexpr size_t kMaxHistoryPits = 40;

// The levels a waiting job's start forecast is kept at: 0, 0.05, ..., 1
// (the smallest and the largest of the forecast's draws at the ends).
inline constexpr int kPredictionLevels = 21;

struct QueueHistory {
  // Run times of finished jobs that no plan of this service placed,
  // seconds, oldest first, each with the time limit the job had (0: none):
  // the same length.
  std::vector<double> durations_s;
  std::vector<double> limits_s;
  // Waits (start less submission), seconds, oldest first: of jobs seen
  // starting in reports and of uploaded runs that carried their submission
  // time.
  std::vector<double> waits_s;
  // For each job a plan of this service placed on the pool and later seen
  // started: the plan's forecast (before calibration) of a start at or
  // before the real one (its probability integral transform, PIT; uniform
  // on [0, 1] when the forecasts are calibrated). Oldest first. Only plans'
  // forecasts are checked: a job placed now is queued behind everything
  // waiting, a forecast of its own kind (a waiting job's forecast from a
  // later report is another, and misses the jobs that start at once).
  std::vector<double> start_pits;

  friend bool operator==(const QueueHistory&, const QueueHistory&) = default;
};

// The start forecast of a placed job, kept until it starts: its plan's,
// before calibration (the plan's response carries it).
struct StartPrediction {
  std::string job_id;
  // The plan's time by the reporter's clock: the observed time of the
  // report the plan rested on, plus that report's age at the plan.
  absl::Time origin;
  // Seconds after `origin`, at kPredictionLevels levels (non-decreasing).
  std::vector<double> delay_s;

  friend bool operator==(const StartPrediction&,
                         const StartPrediction&) = default;
};

// Appends `value` to `series`, dropping the oldest beyond `limit`.
void AppendBounded(std::vector<double>* series, double value, size_t limit);

// Drops the oldest of each series beyond what a pool keeps (the kMaxHistory
// constants above): how a stored history is read, so that a row an earlier
// release wrote with more (256 forecast checks were kept before 40) is read
// as the pool keeps it now, by the calibration and by GetPoolState alike.
void KeepNewest(QueueHistory* history);

// Where `actual_s` falls in a forecast kept at kPredictionLevels levels:
// interpolated between levels; 0 below the smallest draw, 1 above the
// largest; on one level, that level; at a run of equal levels (many draws
// at one value, as a start at once), the point `within_run` (0 to 1) of that
// run's probability mass, the middle by default. LearnFromReport spreads its
// checks over the run by a hash of the job's id (a randomized PIT): a forecast
// right about starting at once then checks uniform, as a calibrated one must,
// where the middle would pile every such check at one value.
double PredictionPit(const std::vector<double>& delay_s, double actual_s,
                     double within_run = 0.5);

// Where a start at `when` falls in `prediction` (PredictionPit): a start
// before its origin (the reporter's clock a little behind the plan's) is a
// start at once.
double PredictionPitAt(const StartPrediction& prediction, absl::Time when,
                       double within_run);

// The jobs of `current` that a plan placed (they carry its id) seen for the
// first time (in no list of `previous`, null for a pool's first report) and
// without a prediction in `open`: those whose plan's forecast is to be kept
// (before LearnFromReport, which checks it at once for a job already
// started).
std::vector<const QueuedJob*> NewlyPlacedJobs(
    const PoolState* previous, const PoolState& current,
    const std::vector<StartPrediction>& open);

// Learns from `current`, the report after `previous` (null for a pool's
// first): the run time of each finished job no plan of this service placed
// (a placed job's run time is its plan's; its reported start and end;
// a running job of `previous` gone from `current` without being reported
// finished ended between the two reports, taken at their midpoint), the
// wait of each job seen started for the first time (when its submission
// time is known), and the PIT of each job in `open` (its plan's forecast)
// that has started; predictions of jobs no longer waiting are dropped.
void LearnFromReport(const PoolState* previous, const PoolState& current,
                     QueueHistory* history, std::vector<StartPrediction>* open);

// Adds an uploaded run's wait (its start less its job's submission).
void LearnUploadedWait(absl::Duration wait, QueueHistory* history);

}  // namespace placement::core

#endif  // PLACEMENT_CORE_QUEUE_QUEUE_HISTORY_H_
