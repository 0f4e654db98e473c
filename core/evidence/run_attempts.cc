#include "core/evidence/run_attempts.h"

#include <algorithm>

#include "core/evidence/evidence.h"

namespace placement::core {

bool IsPoolCause(AttemptFailureCause cause) {
  return cause == AttemptFailureCause::kPreempted ||
         cause == AttemptFailureCause::kHardwareError ||
         cause == AttemptFailureCause::kCollectiveTimeout;
}

AttemptFailureCause CauseOf(RunOutcome outcome) {
  switch (outcome) {
    case RunOutcome::kPreempted:
      return AttemptFailureCause::kPreempted;
    case RunOutcome::kHardwareError:
      return AttemptFailureCause::kHardwareError;
    case RunOutcome::kCollectiveTimeout:
      return AttemptFailureCause::kCollectiveTimeout;
    case RunOutcome::kOom:
      return AttemptFailureCause::kOutOfMemory;
    default:
      return AttemptFailureCause::kOther;
  }
}

int64_t RunAttempts::PoolFailures() const {
  int64_t n = 0;
  for (int i = 0; i < kAttemptFailureCauses; ++i) {
    if (IsPoolCause(static_cast<AttemptFailureCause>(i))) {
      n += failures_by_cause[i];
    }
  }
  return n;
}

RunAttempts AttemptsOf(const MeasuredRun& run) {
  RunAttempts a;
  const int64_t retries = std::max(0, run.retries);
  const bool succeeded = run.outcome == RunOutcome::kSucceeded;
  a.attempts = retries + 1;
  a.failed_attempts = retries + (succeeded ? 0 : 1);
  // The retries' causes: as reported, else the run's own failure, else
  // unknown.
  const AttemptFailureCause retry_cause =
      succeeded ? AttemptFailureCause::kOther : CauseOf(run.outcome);
  for (int64_t i = 0; i < retries; ++i) {
    const AttemptFailureCause cause =
        i < static_cast<int64_t>(run.retry_outcomes.size())
            ? CauseOf(run.retry_outcomes[i])
            : retry_cause;
    ++a.failures_by_cause[static_cast<int>(cause)];
  }
  if (!succeeded) ++a.failures_by_cause[static_cast<int>(CauseOf(run.outcome))];

  const double step_s = std::max(0.0, run.step_time_mean_s);
  a.wall_hours = run.gpu_count > 0 ? run.GpuHours() / run.gpu_count : 0;
  a.busy_hours =
      std::min(a.wall_hours,
               static_cast<double>(std::max<int64_t>(0, run.steps_attempted)) *
                   step_s / 3600);
  a.counted_hours = std::min(
      a.wall_hours, a.busy_hours + static_cast<double>(a.attempts) *
                                       kMaxCountedOverheadSeconds / 3600);
  a.overhead_hours_per_attempt =
      (a.counted_hours - a.busy_hours) / static_cast<double>(a.attempts);
  a.kept_hours =
      std::min(a.busy_hours,
               static_cast<double>(std::max<int64_t>(0, run.steps_succeeded)) *
                   step_s / 3600);
  if (a.failed_attempts > 0) {
    a.lost_hours =
        std::max(0.0, a.counted_hours - a.kept_hours -
                          (succeeded ? a.overhead_hours_per_attempt : 0));
  }
  return a;
}

}  // namespace placement::core
