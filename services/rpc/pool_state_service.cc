#include "services/rpc/pool_state_service.h"

#include <iostream>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "common/proto_bytes.h"
#include "common/proto_time.h"
#include "common/sha256.h"
#include "core/queue/pool_state.h"
#include "core/queue/queue_history.h"
#include "services/api/grpc_status.h"
#include "services/api/pool_state_convert.h"
#include "services/rpc/admit.h"
#include "services/rpc/db_call.h"
#include "storage/stores/pool_state_store.h"

namespace placement::services {
namespace {

constexpr int kMaxForecastCounts = 16;
// A report observed further than this from the service's clock is taken,
// with a warning: its age is counted from its arrival, its job times
// against its own observe_time.
constexpr absl::Duration kSkewWarning = absl::Hours(1);

// The stored responses of the plans that placed `jobs` (each carries its
// plan's id), by job id; a plan not stored is left out. One read for every
// use a report makes of them.
using PlanResponses = std::map<std::string, std::string>;
PlanResponses PlanResponsesOf(const std::vector<const core::QueuedJob*>& jobs,
                              const storage::PoolStateContext& context) {
  PlanResponses by_job;
  if (jobs.empty()) return by_job;
  std::vector<std::string> plan_ids;
  for (const core::QueuedJob* job : jobs) {
    plan_ids.push_back(absl::AsciiStrToLower(job->plan_id));
  }
  const std::map<std::string, std::string> stored =
      context.plan_responses(plan_ids);
  for (size_t i = 0; i < jobs.size(); ++i) {
    auto it = stored.find(plan_ids[i]);
    if (it != stored.end()) by_job[jobs[i]->job_id] = it->second;
  }
  return by_job;
}

// The jobs of `state` with a plan id whose planned run time the pool's row
// does not carry over (to be read from their stored plans).
std::vector<const core::QueuedJob*> JobsWithoutPlannedRunTime(
    const core::PoolState& state, const storage::PoolStateContext& context) {
  std::vector<const core::QueuedJob*> unknown;
  for (const auto* jobs : {&state.running, &state.pending}) {
    for (const core::QueuedJob& job : *jobs) {
      if (job.plan_id.empty()) continue;
      if (context.previous.has_value() &&
          context.previous->planned.contains(job.job_id)) {
        continue;
      }
      unknown.push_back(&job);
    }
  }
  return unknown;
}

// The run times this service's plans expected of the jobs of `state` that
// carry a plan id: carried over from the pool's row, else read from the
// stored plans (`responses`).
core::PlannedRunTimes PlannedRunTimesOf(
    const core::PoolState& state, const storage::PoolStateContext& context,
    const PlanResponses& responses) {
  core::PlannedRunTimes planned;
  for (const auto* jobs : {&state.running, &state.pending}) {
    for (const core::QueuedJob& job : *jobs) {
      if (job.plan_id.empty()) continue;
      if (context.previous.has_value()) {
        auto it = context.previous->planned.find(job.job_id);
        if (it != context.previous->planned.end()) {
          planned[job.job_id] = it->second;
          continue;
        }
      }
      auto response = responses.find(job.job_id);
      if (response == responses.end()) continue;
      if (std::optional<core::PlannedRunTime> run = PlannedRunTimeFromPlan(
              response->second, state.pool_name, job.gpus)) {
        planned[job.job_id] = *run;
      }
    }
  }
  return planned;
}

// Keeps the start forecast of each of `placed` (jobs of `state` a plan
// placed, seen for the first time) from its plan's stored response (checked
// by LearnFromReport when the job starts: the pool's calibration).
void AddPlanPredictions(const std::vector<const core::QueuedJob*>& placed,
                        const core::PoolState& state,
                        const PlanResponses& responses,
                        std::vector<core::StartPrediction>* open) {
  for (const core::QueuedJob* job : placed) {
    auto response = responses.find(job->job_id);
    if (response == responses.end()) continue;
    if (std::optional<core::StartPrediction> prediction =
            StartPredictionFromPlan(response->second, state.pool_name, *job)) {
      open->push_back(*std::move(prediction));
    }
  }
}

// Whether `report` may replace the pool's row, and the row it becomes.
storage::PoolStateDecision Decide(const storage::PoolStateContext& context,
                                  const core::PoolState& state,
                                  const std::string& report,
                                  const std::string& fingerprint) {
  storage::PoolStateDecision decision;
  const std::optional<storage::PoolStateRecord>& previous = context.previous;
  std::optional<absl::Time> previous_observed;
  if (previous.has_value()) previous_observed = previous->observed;
  if (previous_observed.has_value() && absl::ToUnixMicros(*previous_observed) ==
                                           absl::ToUnixMicros(state.observed)) {
    if (previous->fingerprint != fingerprint) {
      decision.status = absl::AlreadyExistsError(absl::StrCat(
          "pool ", state.pool_name,
          " already has a different report observed at that time; a "
          "report is stored once per observe_time"));
    }
    return decision;  // the same report again: nothing to write
  }
  core::Pool pool;
  pool.name = state.pool_name;
  pool.node_count = context.node_count;
  pool.gpus_per_node = context.gpus_per_node;
  core::FieldViolations violations =
      core::ValidatePoolState(state, pool, previous_observed, context.now);
  if (!violations.empty()) {
    decision.status =
        core::InvalidArgumentWithViolations(WithStatePaths(violations));
    return decision;
  }
  storage::PoolStateRecord record;
  record.pool_name = state.pool_name;
  record.observed = state.observed;
  record.fingerprint = fingerprint;
  record.report = report;
  std::optional<core::PoolState> before;
  if (previous.has_value()) {
    record.history = previous->history;
    record.predictions = previous->predictions;
    v1::PoolState parsed;
    if (previous->observed.has_value() &&
        parsed.ParseFromString(previous->report)) {
      before = PoolStateFromProto(parsed);
    }
  }
  const core::PoolState* previous_state = before ? &*before : nullptr;
  // The stored plans of the jobs first seen placed (their start forecasts)
  // and of those whose planned run time is not carried over, read once.
  const std::vector<const core::QueuedJob*> placed =
      core::NewlyPlacedJobs(previous_state, state, record.predictions);
  std::vector<const core::QueuedJob*> to_read =
      JobsWithoutPlannedRunTime(state, context);
  to_read.insert(to_read.end(), placed.begin(), placed.end());
  const PlanResponses responses = PlanResponsesOf(to_read, context);
  AddPlanPredictions(placed, state, responses, &record.predictions);
  core::LearnFromReport(previous_state, state, &record.history,
                        &record.predictions);
  record.planned = PlannedRunTimesOf(state, context, responses);
  decision.store = std::move(record);
  return decision;
}

}  // namespace

grpc::ServerUnaryReactor* PoolStateService::ReportPoolState(
    grpc::CallbackServerContext* context,
    const v1::ReportPoolStateRequest* request,
    v1::ReportPoolStateResponse* response) {
  if (absl::Status admitted = Admit(auth_, *context, *request);
      !admitted.ok()) {
    return FinishNow(context, ToGrpcStatus(admitted));
  }
  core::FieldViolations shape = ValidatePoolStateShape(request->state());
  if (!request->has_state()) shape.push_back({"state", "is required"});
  if (!shape.empty()) return FinishNow(context, InvalidArgument(shape));
  auto state =
      std::make_shared<core::PoolState>(PoolStateFromProto(request->state()));
  auto report = std::make_shared<std::string>(
      common::DeterministicBytes(request->state()));
  return FinishOnDbWorker(
      context, workers_,
      [this, state, report, response](storage::DbSession& session) {
        const std::string fingerprint = common::Sha256(*report);
        absl::StatusOr<storage::PoolStateWritten> written =
            storage::ReplacePoolState(session, state->pool_name,
                                      [&](const storage::PoolStateContext& c) {
                                        return Decide(c, *state, *report,
                                                      fingerprint);
                                      });
        if (!written.ok()) return written.status();
        if (!written->duplicate) {
          if (absl::Status reloaded = evidence_.ReloadWith(session);
              !reloaded.ok()) {
            std::cerr << "placementd: pool state committed; the cache re-reads "
                         "it later (immediate reload failed: "
                      << reloaded << ")\n";
          }
          evidence_.NoteLocalChange();
        }
        response->set_pool(state->pool_name);
        common::TimeToProto(state->observed, response->mutable_observe_time());
        if (written->received != absl::InfinitePast()) {
          common::TimeToProto(written->received,
                              response->mutable_receive_time());
        }
        response->set_duplicate(written->duplicate);
        response->set_evidence_version(written->evidence_version);
        const absl::Duration skew = written->received - state->observed;
        if (!written->duplicate && absl::AbsDuration(skew) > kSkewWarning) {
          response->add_warnings(absl::StrCat(
              "clock_skew: observe_time is ", absl::FormatDuration(skew),
              " from this service's clock when it arrived; the report's age "
              "is counted from its arrival, its jobs' times against its "
              "observe_time"));
        }
        return absl::OkStatus();
      });
}

grpc::ServerUnaryReactor* PoolStateService::GetPoolState(
    grpc::CallbackServerContext* context,
    const v1::GetPoolStateRequest* request,
    v1::GetPoolStateResponse* response) {
  if (absl::Status admitted = Admit(auth_, *context, *request);
      !admitted.ok()) {
    return FinishNow(context, ToGrpcStatus(admitted));
  }
  std::shared_ptr<const CatalogSnapshot> snapshot = evidence_.Current();
  if (snapshot == nullptr) {
    return FinishNow(
        context,
        ToGrpcStatus(absl::UnavailableError("pools are not loaded yet")));
  }
  const core::Pool* pool = nullptr;
  for (const core::Pool& p : snapshot->pools) {
    if (p.name == request->pool()) pool = &p;
  }
  if (pool == nullptr) {
    return FinishNow(context, ToGrpcStatus(absl::NotFoundError(
                                  absl::StrCat("no pool ", request->pool()))));
  }
  core::FieldViolations v;
  if (request->gpu_counts_size() > kMaxForecastCounts) {
    v.push_back({"gpu_counts", absl::StrCat("at most ", kMaxForecastCounts)});
  }
  std::set<int> counts;
  for (int i = 0; i < request->gpu_counts_size(); ++i) {
    const int g = request->gpu_counts(i);
    if (g < 1 || g > pool->total_gpus()) {
      v.push_back(
          {absl::StrCat("gpu_counts[", i, "]"),
           absl::StrCat("must be 1 to the pool's ", pool->total_gpus())});
    }
    counts.insert(g);
  }
  if (!v.empty()) return FinishNow(context, InvalidArgument(v));
  if (counts.empty()) counts = {1, pool->gpus_per_node};
  response->set_pool(pool->name);
  const core::PoolQueue* queue = snapshot->ReportedQueue(pool->name);
  absl::Duration age;
  if (auto it = snapshot->pool_queues.find(pool->name);
      it != snapshot->pool_queues.end()) {
    HistoryToProto(it->second->history, response->mutable_history());
  }
  if (queue != nullptr) {
    *response->mutable_state() = PoolStateToProto(queue->state);
    common::TimeToProto(queue->received, response->mutable_receive_time());
    age = std::max(absl::ZeroDuration(), absl::Now() - queue->received);
    common::DurationToProto(age, response->mutable_age());
    response->set_stale(age > max_age_);
  }
  for (int g : counts) {
    StartForecastToProto(g, core::EstimateStart(queue, g, age, max_age_),
                         response->add_forecasts());
  }
  return FinishNow(context, grpc::Status::OK);
}

}  // namespace placement::services
