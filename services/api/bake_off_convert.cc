#include "services/api/bake_off_convert.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/proto_time.h"
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

// The run as the verdict reads it: its columns, and what an old row keeps
// in its upload alone when storage read the (small) upload for it: its
// failure reason (no row of its own: stored before migration 0025) and its
// retries' causes (none in benchmark_runs: stored before migration 0022).
absl::StatusOr<core::BakeOffUpload> UploadFromStored(
    const storage::MatchedUpload& stored) {
  core::BakeOffUpload u = stored.run;
  if (stored.upload_for_failure_reason.has_value()) {
    v1::BenchmarkRun run;
    if (!run.ParseFromString(*stored.upload_for_failure_reason)) {
      return absl::DataLossError("stored run does not parse");
    }
    u.failure_reason = run.failure_reason();
    if (u.run.retry_outcomes.empty()) {
      u.run.retry_outcomes = UploadedRunFromProto(run).run.retry_outcomes;
    }
  }
  return u;
}

const v1::PlacementCandidate* CandidateOn(const v1::PlacePlanResponse& plan,
                                          const std::string& pool) {
  for (const v1::PlacementCandidate& c : plan.candidates()) {
    if (c.pool() == pool) return &c;
  }
  return nullptr;
}

// The plan's eval requirement on one target's recipe key under the
// criteria that apply to its pool; nullopt when the plan has none.
std::optional<core::EvalStatus> EvalOf(
    const v1::PlacePlanResponse& plan, const std::string& recipe_key,
    const std::vector<core::EvalEvidence>& evals, const core::Pool* pool,
    const std::vector<core::EvalCriterion>* criteria) {
  if (plan.eval_requirement().empty() || !plan.has_eval_status()) {
    return std::nullopt;
  }
  std::vector<core::EvalCriterion> applying;
  if (pool != nullptr && criteria != nullptr) {
    applying = core::CriteriaFor(*criteria, *pool);
  }
  return core::MatchEval(
      evals, recipe_key, plan.eval_status().serving_sku(),
      PrecisionFromProto(plan.eval_status().serving_precision()), applying);
}

void UploadToProto(const core::BakeOffUpload& u, int64_t rate_micros,
                   v1::BakeOffUpload* p) {
  const core::MeasuredRun& run = u.run;
  p->set_run_id(run.run_id);
  p->set_recipe_key(run.recipe_key);
  p->set_carries_plan_id(u.carries_plan_id);
  p->set_outcome(OutcomeToProto(run.outcome));
  p->set_succeeded(u.Succeeded());
  p->set_failure_reason(u.failure_reason);
  p->set_steps_attempted(run.steps_attempted);
  p->set_steps_succeeded(run.steps_succeeded);
  p->set_gpu_count(run.gpu_count);
  p->set_gpu_hours(run.GpuHours());
  p->set_gpu_hours_per_successful_step(u.GpuHoursPerSuccessfulStep());
  p->set_cost_micros_per_successful_step(u.GpuHoursPerSuccessfulStep() *
                                         static_cast<double>(rate_micros));
  p->set_peak_memory_gb(run.peak_memory_gb);
  p->set_offload(OffloadToProto(run.offload));
  p->set_interconnect(InterconnectToProto(run.interconnect));
  p->set_retries(run.retries);
  common::TimeToProto(u.accepted, p->mutable_accept_time());
}

void PoolVerdictToProto(const core::BakeOffPoolVerdict& v,
                        v1::BakeOffPoolVerdict* p) {
  p->set_pool(v.pool_name);
  p->set_sku(v.sku_id);
  p->set_gpu_count(v.gpu_count);
  p->set_recipe_key(v.recipe_key);
  p->set_first_choice(v.first_choice);
  p->set_proposed(v.proposed);
  p->set_measured(v.measured);
  p->set_runs(v.runs);
  p->set_runs_succeeded(v.runs_succeeded);
  p->set_successful_steps(v.successful_steps);
  p->set_gpu_hours_per_successful_step(v.gpu_hours_per_successful_step);
  BandToProto(v.gpu_hours_per_successful_step_band,
              p->mutable_gpu_hours_per_successful_step_band());
  p->set_cost_micros_per_successful_step(v.cost_micros_per_successful_step);
  BandToProto(v.cost_micros_per_successful_step_band,
              p->mutable_cost_micros_per_successful_step_band());
  p->set_startup_gpu_hours(v.startup_gpu_hours);
  p->set_step_gpu_hours(v.step_gpu_hours);
  if (v.measured) FailureRateToProto(v.failure_rate, p->mutable_failure_rate());
  if (v.observed.has_value()) {
    ObservedCostToProto(*v.observed, 0, p->mutable_observed());
  }
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

void VerdictToProto(const core::BakeOffVerdict& verdict, int64_t steps,
                    v1::BakeOffVerdict* v) {
  v->set_winner_pool(verdict.winner_pool);
  v->set_decisive(verdict.decisive);
  v->set_summary(verdict.summary);
  v->set_projected_steps(steps);
  for (const std::string& m : verdict.missing) v->add_missing(m);
  for (const core::BakeOffPoolVerdict& pool : verdict.pools) {
    PoolVerdictToProto(pool, v->add_pools());
  }
}

}  // namespace

std::vector<storage::BakeOffTarget> BakeOffTargets(
    const v1::PlacePlanResponse& plan, const std::string& also) {
  std::vector<storage::BakeOffTarget> targets;
  if (plan.candidates().empty()) return targets;
  auto add = [&](const std::string& pool, const std::string& recipe_key) {
    for (const storage::BakeOffTarget& t : targets) {
      if (t.pool_name == pool) return;
    }
    targets.push_back({pool, recipe_key});
  };
  if (plan.has_bake_off()) {
    for (const v1::BakeOffRun& run : plan.bake_off().runs()) {
      add(run.pool(), run.recipe_key());
    }
  }
  add(plan.candidates(0).pool(), plan.candidates(0).recipe_key());
  if (const v1::PlacementCandidate* c =
          also.empty() ? nullptr : CandidateOn(plan, also)) {
    add(c->pool(), c->recipe_key());
  }
  return targets;
}

core::RecordedPlan RecordedPlanOf(const BakeOffReadings& readings,
                                  const BakeOffCatalog& catalog) {
  const v1::PlacePlanResponse& plan = readings.plan;
  core::RecordedPlan recorded;
  recorded.plan_id = readings.plan_id;
  recorded.created = readings.created;
  recorded.team = readings.request.team();
  recorded.total_steps = readings.request.total_steps();
  const int proposed = plan.has_bake_off() ? plan.bake_off().runs_size() : 0;
  for (size_t i = 0; i < readings.targets.size(); ++i) {
    const storage::BakeOffTarget& t = readings.targets[i];
    core::BakeOffTarget target;
    target.pool_name = t.pool_name;
    target.recipe_key = t.recipe_key;
    target.proposed = static_cast<int>(i) < proposed;
    target.first_choice = plan.candidates(0).pool() == t.pool_name;
    if (const v1::PlacementCandidate* c = CandidateOn(plan, t.pool_name)) {
      target.sku_id = c->sku();
      target.gpu_count = c->gpu_count();
    }
    if (target.proposed) {
      target.sku_id = plan.bake_off().runs(i).sku();
      target.gpu_count = plan.bake_off().runs(i).gpu_count();
    }
    const core::Pool* pool =
        catalog.pools ? FindPool(*catalog.pools, t.pool_name) : nullptr;
    if (pool != nullptr) {
      target.internal_rate_micros_per_gpu_hour =
          pool->internal_rate_micros_per_gpu_hour;
    }
    if (const core::GpuSku* sku =
            catalog.skus ? FindSku(*catalog.skus, target.sku_id) : nullptr) {
      target.card_memory_gb = sku->memory_gb;
    }
    static const std::vector<core::EvalEvidence> kNoEvals;
    target.eval =
        EvalOf(plan, t.recipe_key,
               i < readings.evals.size() ? readings.evals[i] : kNoEvals, pool,
               catalog.criteria);
    recorded.targets.push_back(std::move(target));
  }
  return recorded;
}

absl::StatusOr<std::vector<core::BakeOffUpload>> UploadsOf(
    const BakeOffReadings& readings) {
  std::vector<core::BakeOffUpload> uploads;
  for (const std::vector<storage::MatchedUpload>& of_target :
       readings.uploads) {
    for (const storage::MatchedUpload& stored : of_target) {
      absl::StatusOr<core::BakeOffUpload> u = UploadFromStored(stored);
      if (!u.ok()) return u.status();
      uploads.push_back(*std::move(u));
    }
  }
  return uploads;
}

void BakeOffStatusToProto(const BakeOffReadings& readings,
                          const core::RecordedPlan& plan,
                          const std::vector<core::BakeOffUpload>& uploads,
                          v1::GetBakeOffStatusResponse* response) {
  response->set_plan_id(readings.plan_id);
  response->set_over_bought_threshold(core::kOverBoughtPeakShare);
  const core::BakeOffStatus status = core::JudgeRecordedPlan(plan, uploads);
  response->set_proposed(status.proposed > 0);
  response->set_runs_total(status.proposed);
  response->set_runs_complete(status.complete);
  response->set_progress(
      absl::StrCat(status.complete, " of ", status.proposed, " complete"));
  response->set_complete(status.all_complete);
  if (status.proposed == 0) {
    response->set_reason(
        readings.plan.candidates().empty()
            ? "no bake-off: the plan has no candidate"
            : "no bake-off proposed: the leading candidates were measured "
              "already, or no measurement run was worth its cost");
    return;
  }
  for (int i = 0; i < status.proposed; ++i) {
    const core::BakeOffTarget& target = plan.targets[i];
    v1::BakeOffRunStatus* run_status = response->add_runs();
    *run_status->mutable_run() = readings.plan.bake_off().runs(i);
    const std::vector<core::BakeOffUpload> matching =
        core::UploadsFor(target, uploads);
    for (const core::BakeOffUpload& u : matching) {
      UploadToProto(u, target.internal_rate_micros_per_gpu_hour,
                    run_status->add_uploads());
    }
    run_status->set_complete(!matching.empty());
  }
  if (!status.all_complete) {
    response->set_reason(
        absl::StrCat("waiting for a run of the proposed recipe key on ",
                     absl::StrJoin(status.waiting_for, ", ")));
    return;
  }
  VerdictToProto(*status.verdict, plan.total_steps,
                 response->mutable_verdict());
}

}  // namespace placement::services
