#include "core/evidence/measured_run.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "absl/strings/str_cat.h"
#include "core/evidence/run_attempts.h"
#include "core/recipe.h"

namespace placement::core {
namespace {

// The steps ran inside the run: their time may exceed its wall time only by
// clock granularity and the tools' rounding.
constexpr double kWallTimeSlackShare = 0.05;
constexpr double kWallTimeSlackSeconds = 60;

void CheckPositive(FieldViolations& v, const char* field, double value,
                   double max) {
  if (!std::isfinite(value) || value <= 0 || value > max) {
    v.push_back(
        {field, absl::StrCat("must be positive, finite and at most ", max)});
  }
}

void CheckGpuCount(const MeasuredRun& run, FieldViolations& v) {
  if (run.gpu_count < 1 || run.gpu_count > kMaxGpuCount) {
    v.push_back(
        {"gpu_count", absl::StrCat("must be between 1 and ", kMaxGpuCount)});
  }
}

void CheckSteps(const MeasuredRun& run, FieldViolations& v) {
  if (run.steps_attempted < 0 || run.steps_attempted > kMaxSteps) {
    v.push_back(
        {"steps_attempted", absl::StrCat("must be between 0 and ", kMaxSteps)});
  }
  if (run.steps_succeeded < 0) {
    v.push_back({"steps_succeeded", "must not be negative"});
  } else if (run.steps_succeeded > run.steps_attempted) {
    v.push_back(
        {"steps_succeeded", "must not exceed the number of steps attempted"});
  }
}

void CheckStepTimes(const MeasuredRun& run, FieldViolations& v) {
  CheckPositive(v, "step_time_mean_s", run.step_time_mean_s,
                kMaxStepTimeSeconds);
  CheckPositive(v, "step_time_p50_s", run.step_time_p50_s, kMaxStepTimeSeconds);
  CheckPositive(v, "step_time_p95_s", run.step_time_p95_s, kMaxStepTimeSeconds);
  if (std::isfinite(run.step_time_p50_s) &&
      std::isfinite(run.step_time_p95_s) &&
      run.step_time_p95_s < run.step_time_p50_s) {
    v.push_back({"step_time_p95_s", "must not be below the p50 step time"});
  }
}

void CheckCollectives(const MeasuredRun& run, FieldViolations& v) {
  if (run.collectives_opened && run.interconnect == Interconnect::kNone) {
    v.push_back({"interconnect",
                 "collectives were opened, so they used some interconnect"});
  }
}

void CheckWallTime(const MeasuredRun& run, FieldViolations& v) {
  if (run.started == absl::InfinitePast() ||
      run.ended == absl::InfinitePast()) {
    return;  // unknown: the caller reports the missing time
  }
  if (run.ended < run.started) {
    v.push_back({"ended", "must not be before the start time"});
    return;
  }
  if (run.steps_attempted <= 0 || !std::isfinite(run.step_time_mean_s) ||
      run.step_time_mean_s <= 0) {
    return;  // no busy time to compare (the figures are reported above)
  }
  const double busy_seconds =
      static_cast<double>(run.steps_attempted) * run.step_time_mean_s;
  const double wall_seconds = absl::ToDoubleSeconds(run.ended - run.started);
  if (busy_seconds >
      wall_seconds * (1 + kWallTimeSlackShare) + kWallTimeSlackSeconds) {
    v.push_back(
        {"step_time_mean_s",
         absl::StrCat("steps attempted x mean step time = ", busy_seconds,
                      " s exceeds the run's wall time of ", wall_seconds,
                      " s")});
    return;
  }
  const int64_t attempts = std::max(0, run.retries) + int64_t{1};
  const double explained_seconds =
      busy_seconds +
      static_cast<double>(attempts) * kMaxPlausibleOverheadSeconds;
  if (wall_seconds > explained_seconds) {
    v.push_back(
        {"ended",
         absl::StrCat("the run's wall time of ", wall_seconds,
                      " s is not explained by its steps: steps attempted x "
                      "mean step time = ",
                      busy_seconds, " s, plus at most ",
                      kMaxPlausibleOverheadSeconds,
                      " s of start-up and "
                      "detection for each of its ",
                      attempts, " attempt(s)")});
  }
}

void CheckRetryOutcomes(const MeasuredRun& run, FieldViolations& v) {
  if (run.retry_outcomes.empty()) return;
  if (static_cast<int64_t>(run.retry_outcomes.size()) != run.retries) {
    v.push_back({"retry_outcomes",
                 absl::StrCat("names ", run.retry_outcomes.size(),
                              " failed attempt(s) but the run reports ",
                              run.retries, " retries: one outcome a retry")});
    return;
  }
  for (size_t i = 0; i < run.retry_outcomes.size(); ++i) {
    const RunOutcome o = run.retry_outcomes[i];
    if (o == RunOutcome::kSucceeded || o == RunOutcome::kUnspecified) {
      v.push_back({absl::StrCat("retry_outcomes[", i, "]"),
                   "a retried attempt failed: it must name a failure"});
    }
  }
}

}  // namespace

FieldViolations ValidateMeasuredRun(const MeasuredRun& run) {
  FieldViolations v;
  CheckGpuCount(run, v);
  CheckSteps(run, v);
  CheckStepTimes(run, v);
  CheckPositive(v, "peak_memory_gb", run.peak_memory_gb, kMaxPeakMemoryGb);
  if (run.retries < 0 || run.retries > kMaxRetries) {
    v.push_back(
        {"retries", absl::StrCat("must be between 0 and ", kMaxRetries)});
  }
  CheckCollectives(run, v);
  CheckWallTime(run, v);
  CheckRetryOutcomes(run, v);
  return v;
}

FieldViolations ValidateMeasuredRunInPool(const MeasuredRun& run,
                                          const Pool& pool) {
  FieldViolations v;
  if (run.sku_id != pool.sku_id) {
    v.push_back(
        {"sku_id", absl::StrCat("pool '", pool.name, "' has ", pool.sku_id,
                                " cards, not ", run.sku_id)});
  }
  if (run.gpu_count > pool.total_gpus()) {
    v.push_back({"gpu_count", absl::StrCat("pool '", pool.name, "' has only ",
                                           pool.total_gpus(), " GPUs")});
  }
  return v;
}

FieldViolations ValidateMeasuredRunOnSku(const MeasuredRun& run,
                                         const GpuSku& sku) {
  FieldViolations v;
  if (run.offload == Offload::kNone && std::isfinite(run.peak_memory_gb) &&
      run.peak_memory_gb > sku.UsableMemoryGb() * (1 + kPeakMemoryTolerance)) {
    v.push_back({"peak_memory_gb",
                 absl::StrCat(run.peak_memory_gb, " GB is more than a ", sku.id,
                              " holds (", sku.UsableMemoryGb(),
                              " GB usable) and no offload was reported")});
  }
  return v;
}

}  // namespace placement::core
