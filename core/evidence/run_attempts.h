#ifndef PLACEMENT_CORE_EVIDENCE_RUN_ATTEMPTS_H_
#define PLACEMENT_CORE_EVIDENCE_RUN_ATTEMPTS_H_

// One run record as the attempts it made. An agent retries a failed command
// inside one run (retries = attempts - 1; a Slurm requeue is recorded the
// same way), so a run's failures are its failed attempts, not its outcome
// alone: a run that succeeded after two retries failed twice, and a run
// that ended in a collective timeout after two retries failed three times.
//
// The figures here are what the planner's evidence counts of a run (the
// evidence and pool-reliability rollups), and they are robust to a run
// whose wall time its steps do not explain: the wall time counted is at
// most the steps' own time plus kMaxCountedOverheadSeconds per attempt (a
// start-up, a relaunch and a failure's detection). A run that claims days
// between start and end for a few minutes of steps (a wrong clock, a
// requeue's wait in the queue, a bad upload) then weighs as one plausible
// run, never as months of exposure or of lost time. Finance keeps the GPU
// time the run reported (docs/FINANCE.md).
//
// Mirrored in SQL by migration 0022 (placement_run_attempts), which derives
// the stored rollups from each inserted run; the two must agree
// (tests/storage/schema/failure_evidence_test.cc).

#include <cstdint>

namespace placement::core {

struct MeasuredRun;
enum class RunOutcome;

// Start-up (loading the model, compiling, warm-up), a relaunch and a
// failure's detection together, per attempt: at most this much of a run's
// wall time beyond its steps is counted as evidence. Half an hour holds the
// start-up of the largest recipes with compilation (~15 minutes) and a
// collective timeout's detection (PyTorch's default NCCL timeout is 10
// minutes).
inline constexpr double kMaxCountedOverheadSeconds = 1800;

// A run whose wall time exceeds its steps' time by more than this per
// attempt is refused at upload (a day past the agent's default attempt
// timeout of 24 h: no honest attempt spends longer outside its steps).
inline constexpr double kMaxPlausibleOverheadSeconds = 48 * 3600.0;

// Why an attempt failed, as the evidence counts it. kOther: FAILED, or a
// retry whose cause the run did not report.
enum class AttemptFailureCause {
  kPreempted = 0,
  kHardwareError = 1,
  kCollectiveTimeout = 2,
  kOutOfMemory = 3,
  kOther = 4,
};
inline constexpr int kAttemptFailureCauses = 5;

// Whether the cause is the pool's (its nodes or its fabric) rather than the
// recipe's: preemption, hardware error, collective timeout.
bool IsPoolCause(AttemptFailureCause cause);

// The cause an outcome names; kOther for FAILED and anything that is not a
// failure.
AttemptFailureCause CauseOf(RunOutcome outcome);

struct RunAttempts {
  int64_t attempts = 0;         // retries + 1
  int64_t failed_attempts = 0;  // retries, plus the last when it failed
  // Failed attempts by cause (AttemptFailureCause as the index). A retry
  // takes its cause from the run's retry_outcomes when the run reported
  // them, else from the run's outcome when that is a failure, else kOther.
  int64_t failures_by_cause[kAttemptFailureCauses] = {};
  double wall_hours = 0;     // ended - started, as reported
  double busy_hours = 0;     // steps attempted x mean step time
  double counted_hours = 0;  // wall, at most busy + kMax...Overhead/attempt
  // (counted - busy) / attempts: start-up and detection per attempt.
  double overhead_hours_per_attempt = 0;
  double kept_hours = 0;  // steps succeeded x mean step time
  // Counted hours that produced no kept step and were not the start-up a
  // success needs anyway: counted - kept, less one attempt's overhead when
  // the run succeeded. 0 for a run with no failed attempt.
  double lost_hours = 0;

  int64_t PoolFailures() const;
};

// The attempts of `run` (its figures valid by ValidateMeasuredRun; an
// unknown start or end counts as no wall time). Per GPU: multiply by the
// GPU count for GPU-hours.
RunAttempts AttemptsOf(const MeasuredRun& run);

}  // namespace placement::core

#endif  // PLACEMENT_CORE_EVIDENCE_RUN_ATTEMPTS_H_
