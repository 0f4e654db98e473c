#include "services/api/placement_convert.h"

#include "absl/strings/str_cat.h"
#include "common/proto_time.h"
#include "core/money.h"
#include "services/api/recipe_convert.h"
#include "services/api/timing_convert.h"

namespace placement::services {
namespace {

void DurationToProto(absl::Duration d, google::protobuf::Duration* out) {
  const int64_t nanos = absl::ToInt64Nanoseconds(d);
  out->set_seconds(nanos / 1'000'000'000);
  out->set_nanos(static_cast<int32_t>(nanos % 1'000'000'000));
}

v1::EvidenceBasis BasisToProto(core::EvidenceBasis basis) {
  switch (basis) {
    case core::EvidenceBasis::kMeasured:
      return v1::EVIDENCE_BASIS_MEASURED;
    case core::EvidenceBasis::kTransferred:
      return v1::EVIDENCE_BASIS_TRANSFERRED;
    case core::EvidenceBasis::kEstimated:
      return v1::EVIDENCE_BASIS_ESTIMATED;
    case core::EvidenceBasis::kUnspecified:
      break;
  }
  return v1::EVIDENCE_BASIS_UNSPECIFIED;
}

v1::Confidence ConfidenceToProto(core::Confidence confidence) {
  switch (confidence) {
    case core::Confidence::kLow:
      return v1::CONFIDENCE_LOW;
    case core::Confidence::kMedium:
      return v1::CONFIDENCE_MEDIUM;
    case core::Confidence::kHigh:
      return v1::CONFIDENCE_HIGH;
    case core::Confidence::kUnspecified:
      break;
  }
  return v1::CONFIDENCE_UNSPECIFIED;
}

v1::Fit FitToProto(core::Fit fit) {
  switch (fit) {
    case core::Fit::kFits:
      return v1::FIT_FITS;
    case core::Fit::kBorderline:
      return v1::FIT_BORDERLINE;
    case core::Fit::kDoesNotFit:
      return v1::FIT_DOES_NOT_FIT;
    case core::Fit::kUnspecified:
      break;
  }
  return v1::FIT_UNSPECIFIED;
}

void MemoryToProto(const core::MemoryBreakdown& m, v1::MemoryEstimate* out) {
  out->set_weights_gb(m.weights_gb);
  out->set_gradients_gb(m.gradients_gb);
  out->set_optimizer_gb(m.optimizer_gb);
  out->set_activations_gb(m.activations_gb);
  out->set_logits_gb(m.logits_gb);
  out->set_overhead_gb(m.overhead_gb);
  out->set_total_gb(m.total_gb);
  out->set_optimizer_may_page_to_cpu(m.optimizer_may_page_to_cpu);
  out->set_allocated_gb(m.allocated_gb);
  out->set_reserved_gb(m.reserved_gb);
  out->set_reported_gb(m.reported_gb);
}

}  // namespace

void BandToProto(const core::Band& band, v1::Band* out) {
  out->set_low(band.low);
  out->set_high(band.high);
}

const char* ObjectiveName(core::Objective objective) {
  switch (objective) {
    case core::Objective::kShortestTime:
      return "SHORTEST_TIME";
    case core::Objective::kFinishByDeadline:
      return "FINISH_BY_DEADLINE";
    case core::Objective::kCostOfDelay:
      return "COST_OF_DELAY";
    case core::Objective::kUnspecified:
    case core::Objective::kLowestCost:
      break;
  }
  return "LOWEST_COST";
}

core::Objective ObjectiveFromProto(v1::Objective objective) {
  switch (objective) {
    case v1::OBJECTIVE_SHORTEST_TIME:
      return core::Objective::kShortestTime;
    case v1::OBJECTIVE_FINISH_BY_DEADLINE:
      return core::Objective::kFinishByDeadline;
    case v1::OBJECTIVE_COST_OF_DELAY:
      return core::Objective::kCostOfDelay;
    default:
      return core::Objective::kLowestCost;
  }
}

core::PlanRequest PlanRequestFromProto(const v1::PlacePlanRequest& in) {
  core::PlanRequest request;
  request.recipe = RecipeFromProto(in.recipe());
  request.total_steps = in.total_steps();
  const v1::PlanConstraints& c = in.constraints();
  request.constraints.allowed_pools.assign(c.allowed_pools().begin(),
                                           c.allowed_pools().end());
  request.constraints.required_labels.insert(c.required_labels().begin(),
                                             c.required_labels().end());
  request.constraints.max_gpus = c.max_gpus();
  if (c.has_deadline()) {
    request.constraints.deadline = absl::Seconds(c.deadline().seconds()) +
                                   absl::Nanoseconds(c.deadline().nanos());
  }
  // Undeclared numbers were refused before conversion (UndeclaredEnumValues).
  request.constraints.objective = ObjectiveFromProto(c.objective());
  request.constraints.delay_cost_micros_per_hour =
      c.delay_cost_micros_per_hour();
  if (in.has_serving()) {
    request.serving = core::ServingTarget{
        in.serving().sku(), PrecisionFromProto(in.serving().precision())};
  }
  request.team = in.team();
  return request;
}

void FailureRateToProto(const core::FailureRate& in, v1::FailureRate* out) {
  out->set_per_hour(in.per_hour);
  BandToProto(in.per_hour_band, out->mutable_per_hour_band());
  out->set_failures(in.failures);
  out->set_run_hours(in.hours);
  out->set_lost_hours_per_failure(in.lost_hours_per_failure);
  out->set_lost_hours_measured(in.lost_hours_measured);
  out->set_recipe_measured(in.recipe_measured);
}

void ObservedCostToProto(const core::ObservedCost& in, double projected,
                         v1::ObservedCost* out) {
  out->set_gpu_hours_per_successful_step(in.gpu_hours_per_successful_step);
  BandToProto(in.band, out->mutable_band());
  out->set_job_steps(in.job_steps);
  if (projected > 0)
    out->set_projected_gpu_hours_per_successful_step(projected);
}

namespace {

// The estimate's figures and what they rest on.
void CandidateEstimateToProto(const core::Candidate& c,
                              v1::PlacementCandidate* p) {
  BandToProto(c.peak_memory_gb_band, p->mutable_peak_memory_gb_band());
  p->set_step_time_s(c.step_time_s);
  BandToProto(c.step_time_s_band, p->mutable_step_time_s_band());
  p->set_peak_memory_gb(c.peak_memory_gb);
  p->set_headroom_gb(c.headroom_gb);
  p->set_oom_probability(c.oom_probability);
  p->set_gpu_hours_per_1k_successful_steps(c.gpu_hours_per_1k_successful_steps);
  p->set_expected_gpu_hours(c.expected_gpu_hours);
  p->set_startup_gpu_hours(c.startup_gpu_hours);
  p->set_startup_measured(c.startup_measured);
  p->set_step_gpu_hours(c.step_gpu_hours);
  p->set_rework_gpu_hours(c.rework_gpu_hours);
  FailureRateToProto(c.failure_rate, p->mutable_failure_rate());
  p->set_expected_cost_micros(c.expected_cost_micros);
  if (c.list_price_cost_micros.has_value()) {
    p->set_list_price_cost_micros(*c.list_price_cost_micros);
  }
  DurationToProto(c.expected_wall_time, p->mutable_expected_wall_time());
  p->set_basis(BasisToProto(c.basis));
  p->set_evidence_runs(c.evidence_runs);
  p->set_confidence(ConfidenceToProto(c.confidence));
  p->set_transferred_from_recipe_key(c.transferred_from_recipe_key);
  p->set_transferred_from_sku(c.transferred_from_sku_id);
  p->set_prior_peak_memory_gb(c.prior_peak_memory_gb);
  p->set_prior_step_time_s(c.prior_step_time_s);
  BandToProto(c.expected_gpu_hours_band, p->mutable_expected_gpu_hours_band());
  if (c.observed.has_value()) {
    ObservedCostToProto(*c.observed,
                        c.projected_gpu_hours_per_successful_step_at_observed,
                        p->mutable_observed());
  }
  if (c.exploration.has_value()) {
    const core::ConfigurationExploration& x = *c.exploration;
    v1::ConfigurationExploration* out = p->mutable_exploration();
    out->set_measured_recipe_key(x.measured_recipe_key);
    out->set_measured_cost_micros(
        core::SaturatingMicros(x.measured_value_micros));
    out->set_premium_micros(core::SaturatingMicros(x.premium_micros));
    out->set_expected_saving_micros(
        core::SaturatingMicros(x.expected_saving_micros));
    out->set_demand_steps(x.demand_steps);
    out->set_win_probability(x.win_probability);
  }
}

void CandidateToProto(const core::Candidate& c, v1::PlacementCandidate* p) {
  p->set_rank(c.rank);
  p->set_pool(c.pool_name);
  p->set_sku(c.sku_id);
  p->set_gpu_count(c.gpu_count);
  p->set_fit(FitToProto(c.fit));
  // The deprecated boolean, for older clients: a candidate fits or is
  // borderline (what does not fit is a rejection).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
  p->set_fits(c.fits);
#pragma GCC diagnostic pop
  *p->mutable_recipe() = RecipeToProto(c.recipe);
  p->set_recipe_key(c.recipe_key);
  p->set_measure_first(c.measure_first);
  CandidateEstimateToProto(c, p);
  if (c.eval_requirement.has_value()) {
    p->set_eval_requirement(*c.eval_requirement);
  }
  if (c.eval_status.has_value()) {
    EvalStatusToProto(*c.eval_status, p->mutable_eval_status());
  }
  for (const std::string& reason : c.reasons) p->add_reasons(reason);
  for (const std::string& warning : c.warnings) p->add_warnings(warning);
  if (c.timing.has_value()) {
    CandidateTimingToProto(*c.timing, p->mutable_timing());
  }
}

void BakeOffToProto(const core::BakeOff& b, v1::BakeOff* p) {
  p->set_recipe_key(b.recipe_key);
  *p->mutable_recipe() = RecipeToProto(b.recipe);
  p->set_settings(b.settings);
  for (const core::BakeOffRun& run : b.runs) {
    v1::BakeOffRun* r = p->add_runs();
    r->set_pool(run.pool_name);
    r->set_sku(run.sku_id);
    r->set_gpu_count(run.gpu_count);
    r->set_recipe_key(run.recipe_key);
    r->set_borderline(run.borderline);
    r->set_steps(run.steps);
    r->set_cost_micros(run.cost_micros);
    r->set_expected_saving_micros(run.expected_saving_micros);
    r->set_win_probability(run.win_probability);
    r->set_reason(run.reason);
  }
  p->set_expected_demand_steps(b.expected_demand_steps);
  for (const std::string& m : b.measure) p->add_measure(m);
  if (b.eval_requirement.has_value()) {
    p->set_eval_requirement(*b.eval_requirement);
  }
  p->set_reason(b.reason);
}

}  // namespace

void EvalStatusToProto(const core::EvalStatus& s, v1::EvalStatus* p) {
  p->set_met(s.met);
  p->set_recipe_key(s.recipe_key);
  p->set_serving_sku(s.serving_sku_id);
  p->set_serving_precision(PrecisionToProto(s.serving_precision));
  for (const core::EvalCheck& check : s.checks) {
    v1::EvalCheck* c = p->add_checks();
    c->set_criterion(check.criterion.name);
    c->set_metric_name(check.criterion.metric);
    if (check.criterion.min_score) c->set_min_score(*check.criterion.min_score);
    if (check.criterion.max_score) c->set_max_score(*check.criterion.max_score);
    c->set_passed(check.passed);
    if (check.eval.has_value()) {
      c->set_run_id(check.eval->run_id);
      c->set_score(check.eval->score);
    }
  }
  if (!s.eval.has_value()) return;
  p->set_run_id(s.eval->run_id);
  p->set_metric_name(s.eval->metric);
  p->set_score(s.eval->score);
  common::TimeToProto(s.eval->recorded, p->mutable_record_time());
}

v1::PlacePlanResponse PlanResultToProto(const core::PlanResult& result) {
  v1::PlacePlanResponse out;
  out.set_recipe_key(result.recipe_key);
  *out.mutable_recipe() = RecipeToProto(result.recipe);
  for (const core::Candidate& c : result.candidates) {
    CandidateToProto(c, out.add_candidates());
  }
  for (const core::Rejection& r : result.rejections) {
    v1::PoolRejection* p = out.add_rejections();
    p->set_pool(r.pool_name);
    p->set_sku(r.sku_id);
    p->set_rule(r.rule);
    p->set_reason(r.reason);
  }
  if (result.bake_off.has_value()) {
    BakeOffToProto(*result.bake_off, out.mutable_bake_off());
  }
  if (result.eval_requirement.has_value()) {
    out.set_eval_requirement(*result.eval_requirement);
  }
  if (result.eval_status.has_value()) {
    EvalStatusToProto(*result.eval_status, out.mutable_eval_status());
  }
  MemoryToProto(result.predicted_memory, out.mutable_predicted_memory());
  if (result.deadline.has_value()) {
    DeadlineVerdictToProto(*result.deadline, out.mutable_deadline());
  }
  if (result.standard.has_value()) {
    const core::StandardApplication& s = *result.standard;
    v1::StandardApplied* p = out.mutable_standard();
    p->set_standard_id(s.standard_id);
    p->set_pool(s.pool_name);
    p->set_applied(s.applied);
    p->set_reason(s.reason);
    p->set_contradicted(s.contradicted);
    for (const std::string& c : s.contradictions) {
      p->add_contradictions(c);
      // The plan's own warnings: the same for every plan of this result.
      out.add_warnings(absl::StrCat("standard_contradicted: standard ",
                                    s.standard_id, ": ", c));
    }
  }
  return out;
}

}  // namespace placement::services
