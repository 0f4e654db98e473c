#ifndef PLACEMENT_CORE_QUEUE_POOL_STATE_H_
#define PLACEMENT_CORE_QUEUE_POOL_STATE_H_

// A pool's state as its orchestrator reports it (PoolStateService): the GPUs
// in use, the jobs running with what is known of their end, the jobs waiting
// in the order the orchestrator will start them, and the jobs that finished
// since the previous report. Times inside a report are read against its own
// observed time, by the reporter's clock; how old a report is, is counted
// from when it arrived, by the service's clock (so that a reporter's clock
// never makes state look fresher or staler than it is).

#include <optional>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "core/field_violation.h"
#include "core/pool.h"

namespace placement::core {

// One job on a pool.
struct QueuedJob {
  std::string job_id;  // the orchestrator's id, unique within a report
  int gpus = 0;
  std::optional<absl::Time> submitted;
  std::optional<absl::Time> started;  // running and finished jobs
  std::optional<absl::Time> ended;    // finished jobs
  // The orchestrator's limit on the job's run time (Slurm's TimeLimit).
  std::optional<absl::Duration> time_limit;
  std::string plan_id;  // the PlacePlan that placed it, when one did

  friend bool operator==(const QueuedJob&, const QueuedJob&) = default;
};

struct PoolState {
  std::string pool_name;
  absl::Time observed = absl::InfinitePast();  // by the reporter's clock
  int gpus_total = 0;      // in service now (nodes down left out)
  int gpus_allocated = 0;  // held by jobs, reported or not
  std::vector<QueuedJob> running;
  std::vector<QueuedJob> pending;   // in the order they will be started
  std::vector<QueuedJob> finished;  // since the previous report

  int gpus_free() const { return gpus_total - gpus_allocated; }

  friend bool operator==(const PoolState&, const PoolState&) = default;
};

// Bounds on a report.
inline constexpr int kMaxReportedJobs = 4096;  // per list
inline constexpr int kMaxJobIdLength = 128;
// How far ahead of the service's clock a report's observed time may be
// (clock skew between the reporter's host and the service's).
inline constexpr absl::Duration kMaxReportClockSkew = absl::Minutes(5);

// Violations of a report on `pool` (paths relative to the state:
// "gpus_total", "running[2].start_time"): GPUs beyond the pool's, allocated
// beyond total, running jobs holding more than is allocated, a job asking for
// more GPUs than the pool has, duplicate or missing job ids, and times out of
// order (submitted after started, started after the observed time, a finished
// job ending before it started or after the observed time, an observed time
// more than kMaxReportClockSkew past `now`, or not after `previous_observed`,
// the pool's last report). The plan ids' form is the API layer's to check.
FieldViolations ValidatePoolState(const PoolState& state, const Pool& pool,
                                  std::optional<absl::Time> previous_observed,
                                  absl::Time now);

}  // namespace placement::core

#endif  // PLACEMENT_CORE_QUEUE_POOL_STATE_H_
