#include "services/api/telemetry_convert.h"

#include <algorithm>
#include <utility>

#include "common/proto_bytes.h"
#include "common/proto_time.h"
#include "core/units.h"
#include "services/api/recipe_convert.h"
#include "services/api/run_convert.h"

namespace placement::services {

storage::RunToStore RunToStoreFromProto(
    const v1::BenchmarkRun& in, UploadedRun converted, const core::Pool& pool,
    const std::string& sku_id, const std::vector<core::GpuSku>& catalog) {
  storage::RunToStore out;
  out.recipe = std::move(converted.recipe);
  out.recipe_proto = common::DeterministicBytes(RecipeToProto(out.recipe));
  out.upload = common::DeterministicBytes(in);
  out.agent_id = in.agent_id();
  out.tokens_per_second = in.tokens_per_second();
  out.exclusive = in.exclusive();
  out.plan_id = in.plan_id();
  out.failure_reason = in.failure_reason();
  // The pool's wait, measured (checked: submit_time is not after start).
  if (in.has_submit_time() && IsWellFormedTime(in.submit_time()) &&
      IsWellFormedTime(in.start_time())) {
    out.queue_wait_s = std::max(
        0.0, absl::ToDoubleSeconds(common::TimeFromProto(in.start_time()) -
                                   common::TimeFromProto(in.submit_time())));
  }

  out.run = std::move(converted.run);
  out.run.sku_id = sku_id;
  out.run.pool_name = pool.name;
  if (out.run.team.empty()) {
    auto team = pool.labels.find("team");
    if (team != pool.labels.end()) out.run.team = team->second;
  }
  for (const v1::EvalResult& eval : in.evals()) {
    core::EvalEvidence e;
    e.run_id = out.run.run_id;
    e.recipe_key = out.run.recipe_key;
    absl::StatusOr<core::GpuSku> serving =
        core::ResolveSku(eval.serving_sku(), catalog);
    e.serving_sku_id = serving.ok() ? serving->id : eval.serving_sku();
    e.serving_precision = PrecisionFromProto(eval.serving_precision());
    e.metric = eval.metric_name();
    e.score = eval.score();
    out.evals.push_back(std::move(e));
  }
  return out;
}

void StoredEvalToProto(const storage::StoredEval& stored,
                       v1::StoredEvalResult* out) {
  const core::EvalEvidence& e = stored.eval;
  out->set_run_id(e.run_id);
  out->set_recipe_key(e.recipe_key);
  v1::EvalResult* eval = out->mutable_eval();
  eval->set_serving_sku(e.serving_sku_id);
  eval->set_serving_precision(PrecisionToProto(e.serving_precision));
  eval->set_metric_name(e.metric);
  eval->set_score(e.score);
  common::TimeToProto(e.recorded, out->mutable_record_time());
}

void AckToProto(const storage::RunAck& ack,
                v1::UploadBenchmarkRunResponse* response) {
  response->set_run_id(ack.run_id);
  response->set_recipe_key(ack.recipe_key);
  common::TimeToProto(ack.accept_time, response->mutable_accept_time());
  response->set_gpu_hours(core::HoursFromMicroseconds(ack.gpu_microseconds));
  response->set_evidence_version(ack.evidence_version);
}

absl::Status StoredRunToProto(const storage::StoredRun& stored,
                              v1::GetBenchmarkRunResponse* response) {
  if (!response->mutable_run()->ParseFromString(stored.upload)) {
    return absl::DataLossError("stored run does not parse");
  }
  response->set_recipe_key(stored.ack.recipe_key);
  common::TimeToProto(stored.ack.accept_time, response->mutable_accept_time());
  return absl::OkStatus();
}

void RunSummaryToProto(const storage::RunSummary& s,
                       v1::BenchmarkRunSummary* out) {
  out->set_run_id(s.run_id);
  out->set_pool(s.pool_name);
  out->set_sku(s.sku_id);
  out->set_recipe_key(s.recipe_key);
  out->set_model(s.model);
  out->set_method(MethodToProto(s.method));
  out->set_gpu_count(s.gpu_count);
  common::TimeToProto(s.started, out->mutable_start_time());
  common::TimeToProto(s.ended, out->mutable_end_time());
  out->set_steps_attempted(s.steps_attempted);
  out->set_steps_succeeded(s.steps_succeeded);
  out->set_peak_memory_gb(s.peak_memory_gb);
  out->set_offload(OffloadToProto(s.offload));
  out->set_outcome(OutcomeToProto(s.outcome));
  out->set_retries(s.retries);
  out->set_gpu_hours(core::HoursFromMicroseconds(s.gpu_microseconds));
  common::TimeToProto(s.accept_time, out->mutable_accept_time());
  if (s.samples_dropped_at.has_value()) {
    common::TimeToProto(*s.samples_dropped_at,
                        out->mutable_samples_dropped_time());
  }
}

std::vector<storage::StepSampleRow> SampleRowsFromProto(
    const v1::StreamStepSamplesRequest& request) {
  std::vector<storage::StepSampleRow> rows;
  rows.reserve(request.samples_size());
  for (const v1::StepSample& s : request.samples()) {
    storage::StepSampleRow row;
    row.step = s.step();
    row.time = common::TimeFromProto(s.time());
    row.step_time_s = s.step_time_seconds();
    row.memory_allocated_gb = s.memory_allocated_gb();
    row.memory_reserved_gb = s.memory_reserved_gb();
    row.tokens = s.tokens();
    if (s.has_loss()) row.loss = s.loss();
    rows.push_back(row);
  }
  return rows;
}

void SampleProgressToProto(const std::string& run_id,
                           const storage::SampleProgress& progress,
                           v1::GetSampleProgressResponse* response) {
  response->set_run_id(run_id);
  response->set_committed_through_step(progress.committed_through_step);
  response->set_samples_stored(progress.samples);
  if (progress.samples_dropped_at.has_value()) {
    common::TimeToProto(*progress.samples_dropped_at,
                        response->mutable_samples_dropped_time());
  }
}

}  // namespace placement::services
