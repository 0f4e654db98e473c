#ifndef PLACEMENT_CLIENTS_AGENT_RUN_RECORD_H_
#define PLACEMENT_CLIENTS_AGENT_RUN_RECORD_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "absl/types/optional.h"
#include "placement/v1/telemetry.pb.h"

namespace placement::agent {

// One step record a training command printed on its stdout: a JSON object
// on a line of its own with at least "step" and "step_time_s" (see
// docs/AGENT.md):
//
//   {"step": 0, "step_time_s": 0.84, "tokens": 8192,
//    "memory_allocated_gb": 31.2, "memory_reserved_gb": 33.0, "loss": 1.93}
struct StepRecord {
  int64_t step = 0;  // the command's own count, from 0
  double step_time_s = 0;
  int64_t tokens = 0;
  absl::optional<double> memory_allocated_gb;
  absl::optional<double> memory_reserved_gb;
  absl::optional<double> loss;
  // "offload": "cpu" | "nvme" when the step moved memory off the GPU.
  v1::Offload offload = v1::OFFLOAD_UNSPECIFIED;
};

// The step record on `line`, nullopt when the line is not one (any other
// output passes through untouched). A line that is a JSON object with
// "step" but a missing or non-positive "step_time_s" is not a record either.
absl::optional<StepRecord> ParseStepRecord(absl::string_view line);

// The checkpoint record on `line`: a JSON object with a whole, non-negative
// "checkpoint_step" N, printed after a checkpoint was saved that holds every
// step before the one numbered N (in the "step" numbering of the step
// records), so a relaunch resumes at step N:
//
//   {"checkpoint_step": 2000}
//
// nullopt when the line is not one (it passes through like any other
// output). A step record is never a checkpoint record.
absl::optional<int64_t> ParseCheckpointRecord(absl::string_view line);

// How one attempt of the command ended.
struct AttemptEnd {
  int exit_code = 0;    // when it exited
  int term_signal = 0;  // when a signal killed it (then exit_code is -1)
  bool timed_out = false;
  bool preempted = false;  // stopped because the agent was told to stop
};

// The outcome of an attempt from its exit and the tail of its output:
// exit 0 succeeded; CUDA/NCCL out-of-memory text is OUT_OF_MEMORY; NCCL or
// collective timeouts are COLLECTIVE_TIMEOUT; Xid / ECC / fallen-off-the-bus
// text is HARDWARE_ERROR; SIGTERM from outside (to the command, or to the
// agent, which forwards it: `preempted`) is PREEMPTED; anything else
// FAILED. `*reason` gets a one-line explanation (the matching output line).
v1::RunOutcome ClassifyAttempt(const AttemptEnd& end,
                               absl::string_view output_tail,
                               std::string* reason);

// One attempt as the summary needs it.
struct Attempt {
  absl::Time start;
  absl::Time end;
  int64_t steps = 0;  // step records it printed
  v1::RunOutcome outcome = v1::RUN_OUTCOME_UNSPECIFIED;
  std::string reason;  // empty when it succeeded
  // The "step" of its first step record (where it started or resumed).
  absl::optional<int64_t> first_step;
  // The largest checkpoint_step it printed.
  absl::optional<int64_t> checkpoint_step;
};

// Everything the agent knows about a finished run.
struct RunFacts {
  std::string run_id;
  std::string agent_id;
  std::string pool;
  std::string sku;
  double card_memory_gb = 0;  // the SKU's nominal memory
  std::vector<std::string> node_names;
  v1::Recipe recipe;  // gpu_count set
  std::string plan_id;
  std::string team;
  bool exclusive = true;
  bool collectives_opened = false;
  v1::Interconnect interconnect = v1::INTERCONNECT_NONE;
  v1::Offload offload = v1::OFFLOAD_NONE;  // the operator's statement
  std::vector<Attempt> attempts;
  // Every sample, across attempts, in order (step = run-wide index).
  std::vector<v1::StepSample> samples;
  // Offload reported by any step record.
  v1::Offload record_offload = v1::OFFLOAD_UNSPECIFIED;
  // The most memory NVML saw in use on any one GPU (0: not sampled).
  double nvml_peak_gb = 0;
  // Which peak to report (--report_peak); unspecified: the largest measured.
  v1::PeakMemoryKind report_peak = v1::PEAK_MEMORY_KIND_UNSPECIFIED;
};

// The run summary, following docs/AGENT.md:
//   steps_attempted  every step record of every attempt
//   steps_succeeded  the steps the run kept (see StepsKept)
//   retries          attempts - 1; outcome: that of the last attempt
//   step times       mean, p50, p95 over every step record
//   wall time        first attempt's start to last attempt's end
//   peak_memory_gb   the largest of the records' allocated/reserved memory
//                    and NVML's used memory, peak_memory_kind saying which
//                    it is (or the kind report_peak asks for, when it was
//                    measured); an OOM with no measurement is the card's
//                    whole memory (the job needed at least that), as
//                    DEVICE_USED
//   peak_memory_allocated_gb / _reserved_gb  the records' largest of each
//                    (0: no record carried it); the recipe's reported_peak
//                    is set to peak_memory_kind
// FailedPrecondition when nothing was measured to build it from (no step
// record and no memory reading).
absl::StatusOr<v1::BenchmarkRun> BuildRunSummary(const RunFacts& facts);

// The steps of a run that count as succeeded, in the "step" numbering of
// its records counted from the run's first record (its base):
//   - the last attempt exited 0: its step records, plus the steps it resumed
//     from (its first step minus the base, never more than the latest
//     checkpoint of the attempts before it kept);
//   - it did not: the steps the latest checkpoint kept (the largest
//     checkpoint_step minus the base), what a relaunch would not redo.
// Never negative, never more than `steps_attempted`. Without checkpoint
// records a failed run kept nothing and a succeeded one its last attempt's
// step records.
int64_t StepsKept(const std::vector<Attempt>& attempts,
                  int64_t steps_attempted);

// p-th percentile (0..100) by nearest rank; 0 for no values.
double Percentile(std::vector<double> values, double p);

}  // namespace placement::agent

#endif  // PLACEMENT_CLIENTS_AGENT_RUN_RECORD_H_
