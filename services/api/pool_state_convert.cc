#include "services/api/pool_state_convert.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "common/proto_time.h"
#include "core/queue/queue_forecast.h"
#include "services/api/run_convert.h"
#include "services/api/run_validation.h"
#include "services/api/timing_convert.h"

namespace placement::services {
namespace {

std::optional<absl::Time> TimeOrUnset(const v1::PoolJob& job,
                                      bool (v1::PoolJob::*has)() const,
                                      const google::protobuf::Timestamp& t) {
  if (!(job.*has)() || !IsWellFormedTime(t)) return std::nullopt;
  return common::TimeFromProto(t);
}

core::QueuedJob JobFromProto(const v1::PoolJob& in) {
  core::QueuedJob job;
  job.job_id = in.job_id();
  job.gpus = in.gpus();
  job.submitted =
      TimeOrUnset(in, &v1::PoolJob::has_submit_time, in.submit_time());
  job.started = TimeOrUnset(in, &v1::PoolJob::has_start_time, in.start_time());
  job.ended = TimeOrUnset(in, &v1::PoolJob::has_end_time, in.end_time());
  if (in.has_time_limit()) {
    job.time_limit = common::DurationFromProto(in.time_limit());
  }
  job.plan_id = in.plan_id();
  return job;
}

void JobToProto(const core::QueuedJob& job, v1::PoolJob* out) {
  out->set_job_id(job.job_id);
  out->set_gpus(job.gpus);
  if (job.submitted)
    common::TimeToProto(*job.submitted, out->mutable_submit_time());
  if (job.started) common::TimeToProto(*job.started, out->mutable_start_time());
  if (job.ended) common::TimeToProto(*job.ended, out->mutable_end_time());
  if (job.time_limit) {
    common::DurationToProto(*job.time_limit, out->mutable_time_limit());
  }
  out->set_plan_id(job.plan_id);
}

void CheckJobShape(const v1::PoolJob& job, const std::string& path,
                   core::FieldViolations* v) {
  auto check_time = [&](bool has, const google::protobuf::Timestamp& t,
                        const char* name) {
    if (has && !IsWellFormedTime(t)) {
      v->push_back({absl::StrCat(path, ".", name), "is not a valid time"});
    }
  };
  check_time(job.has_submit_time(), job.submit_time(), "submit_time");
  check_time(job.has_start_time(), job.start_time(), "start_time");
  check_time(job.has_end_time(), job.end_time(), "end_time");
  if (job.has_time_limit() &&
      (job.time_limit().seconds() < 0 || job.time_limit().nanos() < 0 ||
       job.time_limit().seconds() > 10LL * 366 * 86400)) {
    v->push_back({path + ".time_limit", "must be positive and under 10 years"});
  }
  if (!job.plan_id().empty() && !IsUuid(job.plan_id())) {
    v->push_back({path + ".plan_id", "must be a UUID (a plan's plan_id)"});
  }
}

double Percentile(std::vector<double> values, double p) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  return core::QuantileOfSorted(values, p);
}

}  // namespace

core::PoolState PoolStateFromProto(const v1::PoolState& in) {
  core::PoolState state;
  state.pool_name = in.pool();
  if (in.has_observe_time() && IsWellFormedTime(in.observe_time())) {
    state.observed = common::TimeFromProto(in.observe_time());
  }
  state.gpus_total = in.gpus_total();
  state.gpus_allocated = in.gpus_allocated();
  for (const v1::PoolJob& j : in.running())
    state.running.push_back(JobFromProto(j));
  for (const v1::PoolJob& j : in.pending())
    state.pending.push_back(JobFromProto(j));
  for (const v1::PoolJob& j : in.finished())
    state.finished.push_back(JobFromProto(j));
  return state;
}

v1::PoolState PoolStateToProto(const core::PoolState& state) {
  v1::PoolState out;
  out.set_pool(state.pool_name);
  if (state.observed != absl::InfinitePast()) {
    common::TimeToProto(state.observed, out.mutable_observe_time());
  }
  out.set_gpus_total(state.gpus_total);
  out.set_gpus_allocated(state.gpus_allocated);
  for (const core::QueuedJob& j : state.running)
    JobToProto(j, out.add_running());
  for (const core::QueuedJob& j : state.pending)
    JobToProto(j, out.add_pending());
  for (const core::QueuedJob& j : state.finished)
    JobToProto(j, out.add_finished());
  return out;
}

core::FieldViolations ValidatePoolStateShape(const v1::PoolState& state) {
  core::FieldViolations v;
  if (state.pool().empty()) v.push_back({"state.pool", "is required"});
  if (state.pool().size() > kMaxIdLength) {
    v.push_back(
        {"state.pool", absl::StrCat("at most ", kMaxIdLength, " characters")});
  }
  if (state.has_observe_time() && !IsWellFormedTime(state.observe_time())) {
    v.push_back({"state.observe_time", "is not a valid time"});
  }
  auto jobs = [&](const auto& list, const char* name) {
    // core bounds the count; shapes are checked for the first that many.
    const int n = std::min<int>(list.size(), core::kMaxReportedJobs);
    for (int i = 0; i < n; ++i) {
      CheckJobShape(list[i], absl::StrCat("state.", name, "[", i, "]"), &v);
    }
  };
  jobs(state.running(), "running");
  jobs(state.pending(), "pending");
  jobs(state.finished(), "finished");
  return v;
}

core::FieldViolations WithStatePaths(core::FieldViolations violations) {
  for (core::FieldViolation& v : violations) v.field = "state." + v.field;
  return violations;
}

std::optional<core::PlannedRunTime> PlannedRunTimeFromPlan(
    const std::string& plan_response, const std::string& pool_name, int gpus) {
  v1::PlacePlanResponse plan;
  if (!plan.ParseFromString(plan_response)) return std::nullopt;
  for (const v1::PlacementCandidate& c : plan.candidates()) {
    if (c.pool() != pool_name || c.gpu_count() != gpus) continue;
    const double median = absl::ToDoubleSeconds(
        common::DurationFromProto(c.expected_wall_time()));
    if (median <= 0) return std::nullopt;
    const double high =
        c.step_time_s() > 0 && c.step_time_s_band().high() > 0
            ? std::max(1.0, c.step_time_s_band().high() / c.step_time_s())
            : 1.0;
    return core::PlannedRunTime{median, median * high};
  }
  return std::nullopt;
}

std::optional<core::StartPrediction> StartPredictionFromPlan(
    const std::string& plan_response, const std::string& pool_name,
    const core::QueuedJob& job) {
  v1::PlacePlanResponse plan;
  if (!plan.ParseFromString(plan_response)) return std::nullopt;
  for (const v1::PlacementCandidate& c : plan.candidates()) {
    if (c.pool() != pool_name || c.gpu_count() != job.gpus) continue;
    const v1::CandidateTiming& t = c.timing();
    if (t.uncalibrated_start_levels_size() != core::kPredictionLevels ||
        !t.has_state_observe_time()) {
      return std::nullopt;
    }
    core::StartPrediction p;
    p.job_id = job.job_id;
    p.origin = common::TimeFromProto(t.state_observe_time()) +
               common::DurationFromProto(t.state_age());
    for (const google::protobuf::Duration& d : t.uncalibrated_start_levels()) {
      p.delay_s.push_back(absl::ToDoubleSeconds(common::DurationFromProto(d)));
    }
    if (!std::is_sorted(p.delay_s.begin(), p.delay_s.end())) {
      return std::nullopt;
    }
    return p;
  }
  return std::nullopt;
}

void StartForecastToProto(int gpus, const core::StartEstimate& e,
                          v1::StartForecast* out) {
  out->set_gpu_count(gpus);
  out->set_status(StartStatusToProto(e.status));
  out->set_reason(e.reason);
  if (!e.known()) return;
  for (double p : {0.1, 0.25, 0.5, 0.75, 0.9}) {
    v1::StartQuantile* q = out->add_quantiles();
    q->set_probability(p);
    SecondsToProto(e.Quantile(p), q->mutable_within());
  }
  SecondsToProto(e.mean_s, out->mutable_mean());
}

void HistoryToProto(const core::QueueHistory& h, v1::QueueHistorySummary* out) {
  out->set_finished_jobs(static_cast<int32_t>(h.durations_s.size()));
  SecondsToProto(Percentile(h.durations_s, 0.5), out->mutable_run_time_p50());
  SecondsToProto(Percentile(h.durations_s, 0.9), out->mutable_run_time_p90());
  out->set_waits(static_cast<int32_t>(h.waits_s.size()));
  SecondsToProto(Percentile(h.waits_s, 0.5), out->mutable_wait_p50());
  SecondsToProto(Percentile(h.waits_s, 0.9), out->mutable_wait_p90());
  out->set_checked_forecasts(static_cast<int32_t>(h.start_pits.size()));
  if (h.start_pits.empty()) return;
  for (double p : {0.1, 0.25, 0.5, 0.75, 0.9}) {
    const double share = static_cast<double>(std::count_if(
                             h.start_pits.begin(), h.start_pits.end(),
                             [p](double u) { return u <= p; })) /
                         static_cast<double>(h.start_pits.size());
    v1::CalibrationPoint* point = out->add_calibration();
    point->set_probability(p);
    point->set_share_started(share);
  }
}

}  // namespace placement::services
