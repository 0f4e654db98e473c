#include "core/queue/start_estimate.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <set>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace placement::core {

PoolQueue MakePoolQueue(PoolState state, absl::Time received,
                        QueueHistory history, PlannedRunTimes planned,
                        const std::vector<StartPrediction>& waiting) {
  PoolQueue queue{std::move(state),   received,        std::move(history),
                  std::move(planned), QueueForecast{}, StartCalibration{}};
  queue.forecast = ForecastQueue(queue.state, queue.history, queue.planned);
  // Only jobs a plan placed (a row written before plans' forecasts were
  // the checks may hold others').
  std::set<std::string> pending;
  for (const QueuedJob& job : queue.state.pending) {
    if (!job.plan_id.empty()) pending.insert(job.job_id);
  }
  std::vector<double> floors;
  for (const StartPrediction& p : waiting) {
    if (!pending.contains(p.job_id)) continue;
    // Not started by the report: above the forecast's mass up to then.
    floors.push_back(PredictionPitAt(p, queue.state.observed, 1.0));
  }
  queue.calibration =
      StartCalibration(queue.history.start_pits, std::move(floors));
  return queue;
}

const char* StartStatusName(StartStatus status) {
  switch (status) {
    case StartStatus::kKnown:
      return "KNOWN";
    case StartStatus::kNoState:
      return "NO_STATE";
    case StartStatus::kStale:
      return "STALE";
    case StartStatus::kUnknownRunTimes:
      return "UNKNOWN_RUN_TIMES";
    case StartStatus::kTooLarge:
      return "TOO_LARGE";
  }
  return "NO_STATE";
}

double StartEstimate::Quantile(double p) const {
  return delay_s.empty() ? 0 : QuantileOfSorted(delay_s, p);
}

namespace {

// Where neighbouring checks move together (jobs that waited at the same
// time), what they are worth as independent ones.
std::string EffectiveChecksNote(const StartCalibration& calibration) {
  const double count =
      static_cast<double>(calibration.started() + calibration.waiting());
  if (calibration.effective_checks() > count - 0.5) return "";
  return absl::StrFormat(
      ", worth about %.0f independent ones (neighbours "
      "move together)",
      calibration.effective_checks());
}

std::string Minutes(double seconds) {
  if (seconds < 30) return "0m";
  return absl::FormatDuration(absl::Seconds(std::round(seconds / 60) * 60));
}

// How long ago a report arrived, to the second.
std::string Ago(absl::Duration age) {
  if (age < absl::Seconds(1)) return "under a second";
  return absl::FormatDuration(absl::Trunc(age, absl::Seconds(1)));
}

}  // namespace

StartEstimate EstimateStart(const PoolQueue* queue, int gpus,
                            absl::Duration age, absl::Duration max_age) {
  StartEstimate e;
  if (queue == nullptr) {
    e.reason = "no state reported for the pool: the wait is unknown";
    return e;
  }
  e.observed = queue->state.observed;
  e.age = std::max(age, absl::ZeroDuration());
  const QueueForecast& f = queue->forecast;
  e.jobs_ahead = f.pending_jobs;
  e.gpus_ahead = f.pending_gpus;
  const StartCalibration& calibration = queue->calibration;
  e.calibration_pits = static_cast<int>(calibration.started());
  if (e.age > max_age) {
    e.status = StartStatus::kStale;
    e.reason =
        absl::StrCat("the pool's state is stale: its last report arrived ",
                     absl::FormatDuration(absl::Trunc(e.age, absl::Seconds(1))),
                     " ago (at most ", absl::FormatDuration(max_age),
                     "); the wait is unknown");
    return e;
  }
  if (!f.known) {
    e.status = StartStatus::kUnknownRunTimes;
    e.reason = absl::StrCat("the wait is unknown: ", f.unknown_reason);
    return e;
  }
  if (gpus > f.gpus_total) {
    e.status = StartStatus::kTooLarge;
    e.reason = absl::StrCat(gpus, " GPUs is more than the ", f.gpus_total,
                            " the pool has in service now");
    return e;
  }
  const std::vector<double> starts = NewJobStarts(f, gpus);
  e.calibrated = calibration.calibrated();
  const double late = absl::ToDoubleSeconds(e.age);
  for (int k = 0; k < kEstimatePoints; ++k) {
    const double level = (k + 0.5) / kEstimatePoints;
    e.delay_s.push_back(std::max(
        0.0, QuantileOfSorted(starts, calibration.Level(level)) - late));
  }
  std::sort(e.delay_s.begin(), e.delay_s.end());
  e.uncalibrated_levels_s = PredictionLevels(starts, late);
  e.mean_s = std::accumulate(e.delay_s.begin(), e.delay_s.end(), 0.0) /
             static_cast<double>(e.delay_s.size());
  e.status = StartStatus::kKnown;
  e.reason = absl::StrCat(
      e.Quantile(0.9) < 30
          ? std::string("starts at once (p90)")
          : absl::StrCat("start p50 in ", Minutes(e.Quantile(0.5)), ", p90 in ",
                         Minutes(e.Quantile(0.9))),
      ", behind ", f.pending_jobs, " waiting jobs (", f.pending_gpus,
      " GPUs), ", f.gpus_total - queue->state.gpus_allocated, " of ",
      f.gpus_total, " GPUs free, from the report observed ",
      absl::FormatTime("%Y-%m-%dT%H:%M:%SZ", e.observed, absl::UTCTimeZone()),
      " (arrived ", Ago(e.age), " ago): ", f.basis, "; ",
      e.calibrated
          ? absl::StrCat(
                "read through ", calibration.started(),
                " earlier plans' forecasts checked against the starts of the "
                "jobs they placed",
                calibration.waiting() > 0
                    ? absl::StrCat(" and ", calibration.waiting(),
                                   " placed jobs still waiting")
                    : "",
                EffectiveChecksNote(calibration))
          : absl::StrCat("not calibrated yet (", calibration.started(), " of ",
                         kMinCalibrationPits,
                         " plans' forecasts checked against real starts)"));
  return e;
}

}  // namespace placement::core
