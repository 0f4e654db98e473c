#include "core/queue/queue_history.h"

#include <algorithm>
#include <map>
#include <set>

#include "core/check.h"
#include "core/fnv1a.h"
#include "core/queue/rng.h"

namespace placement::core {

namespace {

void DropOldest(std::vector<double>* series, size_t limit) {
  if (series->size() > limit) {
    series->erase(
        series->begin(),
        series->begin() + static_cast<ptrdiff_t>(series->size() - limit));
  }
}

}  // namespace

void AppendBounded(std::vector<double>* series, double value, size_t limit) {
  series->push_back(value);
  DropOldest(series, limit);
}

void KeepNewest(QueueHistory* history) {
  DropOldest(&history->durations_s, kMaxHistoryDurations);
  DropOldest(&history->limits_s, kMaxHistoryDurations);
  DropOldest(&history->waits_s, kMaxHistoryWaits);
  DropOldest(&history->start_pits, kMaxHistoryPits);
}

double PredictionPit(const std::vector<double>& delay_s, double actual_s,
                     double within_run) {
  const int n = static_cast<int>(delay_s.size());
  if (n < 2) return 0.5;
  PLACEMENT_DCHECK(std::is_sorted(delay_s.begin(), delay_s.end()),
                   "a start prediction's levels are non-decreasing");
  auto level = [n](int i) { return static_cast<double>(i) / (n - 1); };
  if (actual_s < delay_s.front()) return 0;
  if (actual_s > delay_s.back()) return 1;
  // The run of levels equal to the actual value.
  auto [low, high] = std::equal_range(delay_s.begin(), delay_s.end(), actual_s);
  if (high - low == 1) return level(static_cast<int>(low - delay_s.begin()));
  if (low != high) {
    const int first = static_cast<int>(low - delay_s.begin());
    const int last = static_cast<int>(high - delay_s.begin()) - 1;
    // The probability mass at this value spans the levels around the run.
    const double from = first == 0 ? 0 : (level(first - 1) + level(first)) / 2;
    const double to = last == n - 1 ? 1 : (level(last) + level(last + 1)) / 2;
    return from + (to - from) * std::clamp(within_run, 0.0, 1.0);
  }
  const int above = static_cast<int>(low - delay_s.begin());  // 1..n-1
  const double x0 = delay_s[above - 1];
  const double x1 = delay_s[above];
  return level(above - 1) +
         (level(above) - level(above - 1)) * (actual_s - x0) / (x1 - x0);
}

namespace {

struct Seen {
  const QueuedJob* job;
  bool running;
};

double Seconds(absl::Duration d) { return absl::ToDoubleSeconds(d); }

// Only jobs no plan of this service placed: their run times are what a
// job without a plan is drawn from (a placed job's is its plan's).
void LearnRunTime(const QueuedJob& job, absl::Time ended,
                  QueueHistory* history) {
  if (!job.plan_id.empty()) return;
  if (!job.started.has_value() || ended < *job.started) return;
  AppendBounded(&history->durations_s, Seconds(ended - *job.started),
                kMaxHistoryDurations);
  AppendBounded(&history->limits_s,
                job.time_limit.has_value() ? Seconds(*job.time_limit) : 0,
                kMaxHistoryDurations);
}

}  // namespace

double PredictionPitAt(const StartPrediction& prediction, absl::Time when,
                       double within_run) {
  return PredictionPit(
      prediction.delay_s,
      std::max(0.0, absl::ToDoubleSeconds(when - prediction.origin)),
      within_run);
}

std::vector<const QueuedJob*> NewlyPlacedJobs(
    const PoolState* previous, const PoolState& current,
    const std::vector<StartPrediction>& open) {
  std::set<std::string> known;
  for (const StartPrediction& p : open) known.insert(p.job_id);
  if (previous != nullptr) {
    for (const auto* jobs :
         {&previous->running, &previous->pending, &previous->finished}) {
      for (const QueuedJob& j : *jobs) known.insert(j.job_id);
    }
  }
  std::vector<const QueuedJob*> placed;
  for (const auto* jobs :
       {&current.running, &current.pending, &current.finished}) {
    for (const QueuedJob& j : *jobs) {
      if (!j.plan_id.empty() && known.insert(j.job_id).second) {
        placed.push_back(&j);
      }
    }
  }
  return placed;
}

void LearnFromReport(const PoolState* previous, const PoolState& current,
                     QueueHistory* history,
                     std::vector<StartPrediction>* open) {
  std::map<std::string, Seen> before;
  if (previous != nullptr) {
    for (const QueuedJob& j : previous->running) before[j.job_id] = {&j, true};
    for (const QueuedJob& j : previous->finished) {
      before[j.job_id] = {&j, false};
    }
  }
  std::set<std::string> running_now;
  std::set<std::string> finished_now;
  for (const QueuedJob& j : current.running) running_now.insert(j.job_id);
  for (const QueuedJob& j : current.finished) finished_now.insert(j.job_id);
  // Run times: reported ends first, then running jobs gone without one.
  for (const QueuedJob& j : current.finished) {
    auto it = before.find(j.job_id);
    if (it != before.end() && !it->second.running) continue;  // learned
    LearnRunTime(j, *j.ended, history);
  }
  if (previous != nullptr) {
    const absl::Time midpoint =
        previous->observed + (current.observed - previous->observed) / 2;
    for (const QueuedJob& j : previous->running) {
      if (running_now.contains(j.job_id) || finished_now.contains(j.job_id)) {
        continue;
      }
      LearnRunTime(j, midpoint, history);
    }
  }
  // Waits of jobs seen started for the first time, and the PIT of their
  // start forecast.
  std::map<std::string, const StartPrediction*> predicted;
  for (const StartPrediction& p : *open) predicted[p.job_id] = &p;
  auto learn_start = [&](const QueuedJob& j) {
    if (before.contains(j.job_id) || !j.started.has_value()) return;
    if (j.submitted.has_value()) {
      AppendBounded(&history->waits_s, Seconds(*j.started - *j.submitted),
                    kMaxHistoryWaits);
    }
    auto p = predicted.find(j.job_id);
    if (p != predicted.end()) {
      AppendBounded(&history->start_pits,
                    PredictionPitAt(*p->second, *j.started,
                                    Rng(Fnv1a64(j.job_id)).Uniform()),
                    kMaxHistoryPits);
    }
  };
  for (const QueuedJob& j : current.running) learn_start(j);
  for (const QueuedJob& j : current.finished) learn_start(j);
  // Only the predictions of jobs still waiting are kept.
  std::set<std::string> waiting;
  for (const QueuedJob& j : current.pending) waiting.insert(j.job_id);
  std::erase_if(*open, [&](const StartPrediction& p) {
    return !waiting.contains(p.job_id);
  });
}

void LearnUploadedWait(absl::Duration wait, QueueHistory* history) {
  AppendBounded(&history->waits_s, std::max(0.0, absl::ToDoubleSeconds(wait)),
                kMaxHistoryWaits);
}

}  // namespace placement::core
