#include "core/queue/queue_forecast.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <queue>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/check.h"
#include "core/fnv1a.h"

namespace placement::core {
namespace {

const PlannedRunTime* PlannedFor(const PlannedRunTimes& planned,
                                 const QueuedJob& job) {
  auto it = planned.find(job.job_id);
  return it == planned.end() ? nullptr : &it->second;
}

const char* SourceText(RunTimeSource source) {
  switch (source) {
    case RunTimeSource::kPlan:
      return "this service's plan";
    case RunTimeSource::kHistory:
      return "the pool's finished jobs";
    case RunTimeSource::kHistoryOfLimit:
      return "the pool's finished jobs' share of their time limit";
    case RunTimeSource::kTimeLimit:
      return "the time limit alone";
    case RunTimeSource::kUnknown:
      break;
  }
  return "unknown";
}

// The words of what each job's run time rests on; sets the forecast unknown
// (with the first job that has none) and returns false when one has none.
bool DescribeRunTimes(const PoolState& state, const RunTimeModel& model,
                      const PlannedRunTimes& planned, QueueForecast* f) {
  std::map<RunTimeSource, int> running;
  std::map<RunTimeSource, int> pending;
  auto count = [&](const QueuedJob& job, std::map<RunTimeSource, int>* by,
                   const char* what) {
    const RunTimeSource source = model.SourceFor(job, PlannedFor(planned, job));
    if (source == RunTimeSource::kUnknown && f->known) {
      f->known = false;
      f->unknown_reason = absl::StrCat(
          what, " job ", job.job_id,
          " has no plan of this service, no time limit, and the pool has "
          "fewer than ",
          kMinHistoryRunTimes, " finished jobs measured (",
          model.history_size(), ")");
    }
    ++(*by)[source];
  };
  f->known = true;
  for (const QueuedJob& job : state.running) count(job, &running, "running");
  for (const QueuedJob& job : state.pending) {
    if (job.gpus <= state.gpus_total) count(job, &pending, "waiting");
  }
  int held = state.gpus_allocated;
  for (const QueuedJob& job : state.running) held -= job.gpus;
  if (held > 0 && !model.CanDrawResidual() && f->known) {
    f->known = false;
    f->unknown_reason =
        absl::StrCat(held,
                     " GPUs are held by jobs not reported, and the pool has "
                     "fewer than ",
                     kMinHistoryRunTimes, " finished jobs measured");
  }
  auto words = [](const std::map<RunTimeSource, int>& by) {
    std::vector<std::string> parts;
    for (const auto& [source, n] : by) {
      parts.push_back(absl::StrCat(n, " by ", SourceText(source)));
    }
    return absl::StrJoin(parts, ", ");
  };
  f->basis = absl::StrCat(state.running.size(), " running",
                          running.empty() ? "" : " (" + words(running) + ")",
                          ", ", f->pending_jobs, " waiting",
                          pending.empty() ? "" : " (" + words(pending) + ")");
  if (held > 0) {
    absl::StrAppend(&f->basis, ", ", held,
                    " GPUs held by jobs not reported (their rest drawn from "
                    "the pool's finished jobs)");
  }
  if (model.history_size() > 0) {
    absl::StrAppend(&f->basis, "; ", model.history_size(),
                    " finished jobs measured");
  }
  return f->known;
}

using Release = std::pair<double, int>;  // (time, GPUs freed)
using Releases =
    std::priority_queue<Release, std::vector<Release>, std::greater<>>;

// One draw: the waiting jobs started in order; returns the tail (see
// QueueForecast::tails).
std::vector<std::pair<double, int>> PlayOnce(const PoolState& state,
                                             const RunTimeModel& model,
                                             const PlannedRunTimes& planned,
                                             Rng& rng) {
  Releases releases;
  int free = state.gpus_free();
  int held = state.gpus_allocated;
  for (const QueuedJob& job : state.running) {
    const double elapsed =
        std::max(0.0, absl::ToDoubleSeconds(state.observed - *job.started));
    const double run = model.Draw(job, PlannedFor(planned, job), elapsed, rng);
    releases.emplace(run - elapsed, job.gpus);
    held -= job.gpus;
  }
  if (held > 0) releases.emplace(model.DrawResidual(rng), held);
  double now = 0;
  for (size_t i = 0; i < state.pending.size(); ++i) {
    const QueuedJob& job = state.pending[i];
    if (job.gpus > state.gpus_total) continue;  // never starts
    while (free < job.gpus) {
      PLACEMENT_DCHECK(!releases.empty(), "GPUs held by no job");
      now = std::max(now, releases.top().first);
      free += releases.top().second;
      releases.pop();
    }
    releases.emplace(now + model.Draw(job, PlannedFor(planned, job), 0, rng),
                     job.gpus);
    free -= job.gpus;
  }
  std::vector<std::pair<double, int>> tail = {{now, free}};
  while (!releases.empty()) {
    const double at = std::max(now, releases.top().first);
    free += releases.top().second;
    releases.pop();
    if (at == tail.back().first) {
      tail.back().second = free;
    } else {
      tail.emplace_back(at, free);
    }
  }
  return tail;
}

}  // namespace

QueueForecast ForecastQueue(const PoolState& state, const QueueHistory& history,
                            const PlannedRunTimes& planned,
                            const QueueForecastOptions& options) {
  QueueForecast f;
  f.gpus_total = state.gpus_total;
  f.running_jobs = static_cast<int>(state.running.size());
  for (const QueuedJob& job : state.pending) {
    if (job.gpus > state.gpus_total) continue;
    ++f.pending_jobs;
    f.pending_gpus += job.gpus;
  }
  // The jobs running that no plan placed are part of the pool's run-time
  // distribution too: they ran at least this long.
  std::vector<StillRunning> running;
  for (const QueuedJob& job : state.running) {
    if (PlannedFor(planned, job) != nullptr || !job.started.has_value()) {
      continue;
    }
    running.push_back(
        {std::max(0.0, absl::ToDoubleSeconds(state.observed - *job.started)),
         job.time_limit ? absl::ToDoubleSeconds(*job.time_limit) : 0});
  }
  const RunTimeModel model(history, running);
  if (!DescribeRunTimes(state, model, planned, &f)) return f;
  Rng rng(Fnv1a64(
      absl::StrCat(state.pool_name, "@", absl::ToUnixNanos(state.observed))));
  f.tails.reserve(static_cast<size_t>(options.draws));
  for (int d = 0; d < options.draws; ++d) {
    f.tails.push_back(PlayOnce(state, model, planned, rng));
  }
  return f;
}

std::vector<double> NewJobStarts(const QueueForecast& forecast, int gpus) {
  std::vector<double> starts;
  if (!forecast.known || gpus > forecast.gpus_total) return starts;
  starts.reserve(forecast.tails.size());
  for (const auto& tail : forecast.tails) {
    auto it = std::lower_bound(tail.begin(), tail.end(), gpus,
                               [](const std::pair<double, int>& step, int g) {
                                 return step.second < g;
                               });
    // Every GPU is free at the tail's end, and gpus <= gpus_total.
    starts.push_back(it != tail.end() ? it->first : tail.back().first);
  }
  std::sort(starts.begin(), starts.end());
  return starts;
}

double QuantileOfSorted(const std::vector<double>& sorted, double p) {
  PLACEMENT_DCHECK(!sorted.empty(), "a quantile of no draws");
  const double n = static_cast<double>(sorted.size());
  const double pos = p * n - 0.5;
  if (pos <= 0) return sorted.front();
  if (pos >= n - 1) return sorted.back();
  const size_t i = static_cast<size_t>(pos);
  return sorted[i] +
         (sorted[i + 1] - sorted[i]) * (pos - static_cast<double>(i));
}

std::vector<double> PredictionLevels(const std::vector<double>& sorted_draws,
                                     double shift_s) {
  std::vector<double> levels;
  if (sorted_draws.empty()) return levels;
  levels.reserve(kPredictionLevels);
  for (int k = 0; k < kPredictionLevels; ++k) {
    const double level = static_cast<double>(k) / (kPredictionLevels - 1);
    const double value = k == 0 ? sorted_draws.front()
                         : k == kPredictionLevels - 1
                             ? sorted_draws.back()
                             : QuantileOfSorted(sorted_draws, level);
    levels.push_back(std::max(0.0, value - shift_s));
  }
  return levels;
}

}  // namespace placement::core
