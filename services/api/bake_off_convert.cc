#include "services/api/bake_off_convert.h"

#include "absl/strings/str_cat.h"
#include "common/proto_time.h"
#include "core/plan/bake_off_verdict.h"
#include "services/api/placement_convert.h"
#include "services/api/recipe_convert.h"
#include "services/api/run_convert.h"

namespace placement::services {
namespace {

const core::Pool* FindPool(const std::vector<core::Pool>& pools,
                           const std::string& name) {
  for (const core::Pool& pool : pools) {
    if (pool.name == name) return &pool;
  }
  return nullptr;
}

const core::GpuSku* FindSku(const std::vector<core::GpuSku>& skus,
                            const std::string& id) {
  for (const core::GpuSku& sku : skus) {
    if (sku.id == id) return &sku;
  }
  return nullptr;
}

// The run as the verdict reads it: its columns, and its failure reason
// from its upload when the reason has no row of its own (stored before
// migration 0025) and storage read the (small) upload for it.
absl::StatusOr<core::BakeOffUpload> UploadFromStored(
    const storage::MatchedUpload& stored) {
  core::BakeOffUpload u = stored.run;
  if (stored.upload_for_failure_reason.has_value()) {
    v1::BenchmarkRun run;
    if (!run.ParseFromString(*stored.upload_for_failure_reason)) {
      return absl::DataLossError("stored run does not parse");
    }
    u.failure_reason = run.failure_reason();
  }
  return u;
}

void UploadToProto(const core::BakeOffUpload& u, int64_t rate_micros,
                   v1::BakeOffUpload* p) {
  p->set_run_id(u.run_id);
  p->set_recipe_key(u.recipe_key);
  p->set_carries_plan_id(u.carries_plan_id);
  p->set_outcome(OutcomeToProto(u.outcome));
  p->set_succeeded(u.Succeeded());
  p->set_failure_reason(u.failure_reason);
  p->set_steps_attempted(u.steps_attempted);
  p->set_steps_succeeded(u.steps_succeeded);
  p->set_gpu_count(u.gpu_count);
  p->set_gpu_hours(u.gpu_hours);
  p->set_gpu_hours_per_successful_step(u.GpuHoursPerSuccessfulStep());
  p->set_cost_micros_per_successful_step(u.GpuHoursPerSuccessfulStep() *
                                         static_cast<double>(rate_micros));
  p->set_peak_memory_gb(u.peak_memory_gb);
  p->set_offload(OffloadToProto(u.offload));
  p->set_interconnect(InterconnectToProto(u.interconnect));
  common::TimeToProto(u.accepted, p->mutable_accept_time());
}

void PoolVerdictToProto(const core::BakeOffPoolVerdict& v,
                        v1::BakeOffPoolVerdict* p) {
  p->set_pool(v.pool_name);
  p->set_sku(v.sku_id);
  p->set_gpu_count(v.gpu_count);
  p->set_recipe_key(v.recipe_key);
  p->set_first_choice(v.first_choice);
  p->set_runs(v.runs);
  p->set_runs_succeeded(v.runs_succeeded);
  p->set_successful_steps(v.successful_steps);
  p->set_gpu_hours_per_successful_step(v.gpu_hours_per_successful_step);
  p->mutable_gpu_hours_per_successful_step_band()->set_low(
      v.gpu_hours_per_successful_step_band.low);
  p->mutable_gpu_hours_per_successful_step_band()->set_high(
      v.gpu_hours_per_successful_step_band.high);
  p->set_cost_micros_per_successful_step(v.cost_micros_per_successful_step);
  p->mutable_cost_micros_per_successful_step_band()->set_low(
      v.cost_micros_per_successful_step_band.low);
  p->mutable_cost_micros_per_successful_step_band()->set_high(
      v.cost_micros_per_successful_step_band.high);
  p->set_peak_memory_gb(v.peak_memory_gb);
  p->set_card_memory_gb(v.card_memory_gb);
  p->set_over_bought(v.over_bought);
  p->set_idle_memory_gb(v.idle_memory_gb);
  p->set_offload_miss(v.offload_miss);
  p->set_collectives_on_pcie(v.collectives_on_pcie);
  if (v.eval.has_value()) EvalStatusToProto(*v.eval, p->mutable_eval_status());
  p->set_eligible(v.eligible);
  for (const std::string& finding : v.findings) p->add_findings(finding);
}

// The pool `target` as the verdict judges it, without uploads and eval:
// `run` is its index among the proposed runs, -1 for the first choice.
core::BakeOffSubject SubjectFor(const v1::PlacePlanResponse& plan,
                                const storage::BakeOffTarget& target, int run,
                                const std::vector<core::Pool>& pools,
                                const std::vector<core::GpuSku>& skus) {
  core::BakeOffSubject subject;
  subject.pool_name = target.pool_name;
  subject.recipe_key = target.recipe_key;
  subject.first_choice = !plan.candidates().empty() &&
                         plan.candidates(0).pool() == target.pool_name;
  if (run >= 0) {
    subject.sku_id = plan.bake_off().runs(run).sku();
    subject.gpu_count = plan.bake_off().runs(run).gpu_count();
  } else {
    subject.sku_id = plan.candidates(0).sku();
    subject.gpu_count = plan.candidates(0).gpu_count();
  }
  const core::Pool* pool = FindPool(pools, target.pool_name);
  if (pool != nullptr) {
    subject.internal_rate_micros_per_gpu_hour =
        pool->internal_rate_micros_per_gpu_hour;
  }
  if (const core::GpuSku* sku = FindSku(skus, subject.sku_id)) {
    subject.card_memory_gb = sku->memory_gb;
  }
  return subject;
}

}  // namespace

std::vector<storage::BakeOffTarget> BakeOffTargets(
    const v1::PlacePlanResponse& plan) {
  std::vector<storage::BakeOffTarget> targets;
  if (!plan.has_bake_off() || plan.bake_off().runs().empty()) return targets;
  for (const v1::BakeOffRun& run : plan.bake_off().runs()) {
    targets.push_back({run.pool(), run.recipe_key()});
  }
  if (!plan.candidates().empty()) {
    const v1::PlacementCandidate& first = plan.candidates(0);
    bool proposed = false;
    for (const storage::BakeOffTarget& t : targets) {
      proposed = proposed || t.pool_name == first.pool();
    }
    if (!proposed) targets.push_back({first.pool(), first.recipe_key()});
  }
  return targets;
}

absl::Status BakeOffStatusToProto(const BakeOffReadings& readings,
                                  const std::vector<core::Pool>& pools,
                                  const std::vector<core::GpuSku>& skus,
                                  v1::GetBakeOffStatusResponse* response) {
  const v1::PlacePlanResponse& plan = readings.plan;
  response->set_plan_id(readings.plan_id);
  response->set_over_bought_threshold(core::kOverBoughtPeakShare);
  const int proposed = plan.has_bake_off() ? plan.bake_off().runs_size() : 0;
  response->set_proposed(proposed > 0);
  response->set_runs_total(proposed);
  if (proposed == 0) {
    response->set_complete(true);
    response->set_progress("0 of 0 complete");
    response->set_reason(
        plan.candidates().empty()
            ? "no bake-off: the plan has no candidate"
            : "no bake-off proposed: the leading candidates were measured "
              "already, or no measurement run was worth its cost");
    return absl::OkStatus();
  }
  std::vector<core::BakeOffSubject> subjects;
  int complete = 0;
  for (size_t i = 0; i < readings.targets.size(); ++i) {
    const storage::BakeOffTarget& target = readings.targets[i];
    const bool is_proposed = static_cast<int>(i) < proposed;
    core::BakeOffSubject subject = SubjectFor(
        plan, target, is_proposed ? static_cast<int>(i) : -1, pools, skus);
    if (i < readings.evals.size()) subject.eval = readings.evals[i];
    v1::BakeOffRunStatus* run_status =
        is_proposed ? response->add_runs() : nullptr;
    if (run_status != nullptr) {
      *run_status->mutable_run() = plan.bake_off().runs(i);
    }
    if (i < readings.uploads.size()) {
      for (const storage::MatchedUpload& stored : readings.uploads[i]) {
        absl::StatusOr<core::BakeOffUpload> upload = UploadFromStored(stored);
        if (!upload.ok()) return upload.status();
        if (run_status != nullptr) {
          UploadToProto(*upload, subject.internal_rate_micros_per_gpu_hour,
                        run_status->add_uploads());
        }
        subject.uploads.push_back(*std::move(upload));
      }
    }
    if (run_status != nullptr && !subject.uploads.empty()) {
      run_status->set_complete(true);
      ++complete;
    }
    subjects.push_back(std::move(subject));
  }
  response->set_runs_complete(complete);
  response->set_progress(absl::StrCat(complete, " of ", proposed, " complete"));
  response->set_complete(complete == proposed);
  if (complete < proposed) {
    std::string missing;
    for (const v1::BakeOffRunStatus& run : response->runs()) {
      if (run.complete()) continue;
      absl::StrAppend(&missing, missing.empty() ? "" : ", ", run.run().pool());
    }
    response->set_reason(absl::StrCat("waiting for a run on ", missing,
                                      " (its recipe key, or this plan's id)"));
    return absl::OkStatus();
  }
  const core::BakeOffVerdict verdict = core::JudgeBakeOff(subjects);
  v1::BakeOffVerdict* v = response->mutable_verdict();
  v->set_winner_pool(verdict.winner_pool);
  v->set_decisive(verdict.decisive);
  v->set_summary(verdict.summary);
  for (const core::BakeOffPoolVerdict& pool : verdict.pools) {
    PoolVerdictToProto(pool, v->add_pools());
  }
  return absl::OkStatus();
}

}  // namespace placement::services
