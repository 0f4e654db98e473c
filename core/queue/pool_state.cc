#include "core/queue/pool_state.h"

#include <algorithm>
#include <set>

#include "absl/strings/str_cat.h"

namespace placement::core {
namespace {

std::string TimeText(absl::Time t) {
  return absl::FormatTime("%Y-%m-%dT%H:%M:%SZ", t, absl::UTCTimeZone());
}

// The checks every job shares, whatever its list.
void CheckJob(const QueuedJob& job, const std::string& path, const Pool& pool,
              absl::Time observed, std::set<std::string>* ids,
              FieldViolations* v) {
  if (job.job_id.empty()) {
    v->push_back({path + ".job_id", "is required"});
  } else if (job.job_id.size() > kMaxJobIdLength) {
    v->push_back({path + ".job_id",
                  absl::StrCat("at most ", kMaxJobIdLength, " characters")});
  } else if (!ids->insert(job.job_id).second) {
    v->push_back({path + ".job_id",
                  absl::StrCat("'", job.job_id, "' is reported twice")});
  }
  if (job.gpus < 1) {
    v->push_back({path + ".gpus", "must be at least 1"});
  } else if (job.gpus > pool.total_gpus()) {
    v->push_back({path + ".gpus",
                  absl::StrCat(job.gpus, " GPUs is more than pool ", pool.name,
                               " has (", pool.total_gpus(), ")")});
  }
  if (job.time_limit.has_value() && *job.time_limit <= absl::ZeroDuration()) {
    v->push_back({path + ".time_limit", "must be positive when set"});
  }
  if (job.submitted.has_value() && *job.submitted > observed) {
    v->push_back({path + ".submit_time",
                  absl::StrCat("is after the report's observe_time (",
                               TimeText(*job.submitted), " > ",
                               TimeText(observed), ")")});
  }
  if (job.started.has_value()) {
    if (*job.started > observed) {
      v->push_back({path + ".start_time",
                    absl::StrCat("is after the report's observe_time (",
                                 TimeText(*job.started), " > ",
                                 TimeText(observed), ")")});
    }
    if (job.submitted.has_value() && *job.submitted > *job.started) {
      v->push_back({path + ".submit_time",
                    absl::StrCat("is after the job's start_time (",
                                 TimeText(*job.submitted), " > ",
                                 TimeText(*job.started), ")")});
    }
  }
}

void CheckList(const std::vector<QueuedJob>& jobs, const char* name,
               const Pool& pool, absl::Time observed,
               std::set<std::string>* ids, FieldViolations* v) {
  if (jobs.size() > static_cast<size_t>(kMaxReportedJobs)) {
    v->push_back({name, absl::StrCat("at most ", kMaxReportedJobs, " jobs")});
    return;
  }
  for (size_t i = 0; i < jobs.size(); ++i) {
    CheckJob(jobs[i], absl::StrCat(name, "[", i, "]"), pool, observed, ids, v);
  }
}

// A finished job's start and end, in order and observed; a waiting job not
// started.
void CheckEndsAndWaits(const PoolState& state, FieldViolations* out) {
  FieldViolations& v = *out;
  for (size_t i = 0; i < state.finished.size(); ++i) {
    const QueuedJob& job = state.finished[i];
    const std::string path = absl::StrCat("finished[", i, "]");
    if (!job.started.has_value() || !job.ended.has_value()) {
      v.push_back({path, "a finished job needs start_time and end_time"});
      continue;
    }
    if (*job.ended < *job.started) {
      v.push_back(
          {path + ".end_time", absl::StrCat("is before the job's start_time (",
                                            TimeText(*job.ended), " < ",
                                            TimeText(*job.started), ")")});
    }
    if (*job.ended > state.observed) {
      v.push_back({path + ".end_time",
                   absl::StrCat("is after the report's observe_time (",
                                TimeText(*job.ended), " > ",
                                TimeText(state.observed), ")")});
    }
  }
  for (size_t i = 0; i < state.pending.size(); ++i) {
    if (state.pending[i].started.has_value()) {
      v.push_back({absl::StrCat("pending[", i, "].start_time"),
                   "must be unset for a job that has not started"});
    }
  }
}

}  // namespace

FieldViolations ValidatePoolState(const PoolState& state, const Pool& pool,
                                  std::optional<absl::Time> previous_observed,
                                  absl::Time now) {
  FieldViolations v;
  if (state.observed == absl::InfinitePast() ||
      state.observed == absl::InfiniteFuture()) {
    v.push_back({"observe_time", "is required"});
    return v;
  }
  if (state.observed > now + kMaxReportClockSkew) {
    v.push_back(
        {"observe_time",
         absl::StrCat("is ", absl::FormatDuration(state.observed - now),
                      " after this service's clock (at most ",
                      absl::FormatDuration(kMaxReportClockSkew), " of skew)")});
  }
  if (previous_observed.has_value() && state.observed <= *previous_observed) {
    v.push_back(
        {"observe_time",
         absl::StrCat("is not after the pool's last report (",
                      TimeText(state.observed),
                      " <= ", TimeText(*previous_observed),
                      "): reports must arrive in the order they were made")});
  }
  if (state.gpus_total < 0) {
    v.push_back({"gpus_total", "must not be negative"});
  } else if (state.gpus_total > pool.total_gpus()) {
    v.push_back(
        {"gpus_total",
         absl::StrCat(state.gpus_total, " GPUs is more than pool ", pool.name,
                      " has (", pool.node_count, " x ", pool.gpus_per_node,
                      " = ", pool.total_gpus(), ")")});
  }
  if (state.gpus_allocated < 0) {
    v.push_back({"gpus_allocated", "must not be negative"});
  } else if (state.gpus_allocated > state.gpus_total) {
    v.push_back({"gpus_allocated",
                 absl::StrCat(state.gpus_allocated, " is more than gpus_total ",
                              state.gpus_total)});
  }
  std::set<std::string> ids;
  CheckList(state.running, "running", pool, state.observed, &ids, &v);
  CheckList(state.pending, "pending", pool, state.observed, &ids, &v);
  CheckList(state.finished, "finished", pool, state.observed, &ids, &v);
  int64_t running_gpus = 0;
  for (size_t i = 0; i < state.running.size(); ++i) {
    running_gpus += std::max(0, state.running[i].gpus);
    if (!state.running[i].started.has_value()) {
      v.push_back({absl::StrCat("running[", i, "].start_time"),
                   "is required for a running job"});
    }
  }
  if (running_gpus > state.gpus_allocated) {
    v.push_back({"running", absl::StrCat("the running jobs hold ", running_gpus,
                                         " GPUs, more than gpus_allocated ",
                                         state.gpus_allocated)});
  }
  CheckEndsAndWaits(state, &v);
  return v;
}

}  // namespace placement::core
