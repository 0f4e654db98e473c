#include "core/plan/planner.h"

#include <algorithm>
#include <map>
#include <tuple>
#include <unordered_map>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "core/field_violation.h"
#include "core/models/step_time_model.h"
#include "core/money.h"
#include "core/plan/configuration_search.h"

namespace placement::core {
namespace {

bool Allowed(const Pool& pool, const PlanConstraints& c, std::string* why) {
  if (!c.allowed_pools.empty() &&
      std::find(c.allowed_pools.begin(), c.allowed_pools.end(), pool.name) ==
          c.allowed_pools.end()) {
    *why = "not in the request's allowed pools";
    return false;
  }
  for (const auto& [key, value] : c.required_labels) {
    auto it = pool.labels.find(key);
    if (it == pool.labels.end() || it->second != value) {
      *why = absl::StrCat("lacks the required label ", key, "=", value);
      return false;
    }
  }
  return true;
}

// The request with an open gpu_count replaced by the smallest count its
// fixed settings allow, so that validation checks what was set.
Recipe ValidationProbe(const Recipe& requested) {
  Recipe probe = requested;
  if (probe.gpu_count != 0) return probe;
  const int64_t fixed = int64_t{std::max(1, probe.tensor_parallel_degree)} *
                        std::max(1, probe.pipeline_parallel_degree) *
                        std::max(1, probe.data_parallel_degree);
  const bool multi = probe.parallelism != Parallelism::kUnspecified &&
                     probe.parallelism != Parallelism::kSingle;
  probe.gpu_count = static_cast<int>(
      std::min<int64_t>(kMaxGpuCount + 1, fixed == 1 && multi ? 2 : fixed));
  return probe;
}

// --- EvaluateConfiguration's steps. ---

// The rules a configuration must pass before it is estimated: quota,
// collectives need fabric, inter-node fabric and, when measured, retries
// cost money.
std::optional<RuleRejection> CheckLayoutRules(const Recipe& recipe,
                                              const Pool& pool,
                                              const GpuSku& sku, int max_gpus,
                                              const EvidenceStats* measured) {
  if (auto r = CheckQuota(recipe, pool, max_gpus)) {
    return RuleRejection{kQuotaRule, r->reason};
  }
  if (auto r = CheckCollectivesNeedFabric(recipe, pool, sku)) {
    return RuleRejection{kCollectivesNeedFabricRule, r->reason};
  }
  if (auto r = CheckInterNodeFabric(recipe, pool)) {
    return RuleRejection{kInterNodeFabricRule, r->reason};
  }
  if (measured != nullptr) {
    if (auto r = CheckRetriesCostMoney(*measured)) {
      return RuleRejection{kRetriesCostMoneyRule, r->reason};
    }
  }
  return std::nullopt;
}

// Which evidence a configuration's memory and step time come from. Step time
// and GPU-hours come from evidence on this SKU only; another SKU's runs give
// memory, and their step times reach this SKU through the fleet model.
struct EvidenceInUse {
  const EvidenceStats* measured = nullptr;
  const TransferredEvidence* transferred = nullptr;
  // Measured, else transferred from a nearby recipe, on this SKU.
  const EvidenceStats* same_sku = nullptr;
  // The same key on another SKU, only without `same_sku`.
  const CrossSkuMemory* cross = nullptr;
  EvidenceStats cross_stats;  // `cross` as the fit check reads it
  // The factor on the predicted memory: the fleet's without observed memory.
  double memory_scale = 1;

  // The observed memory the fit is checked against, if any.
  const EvidenceStats* observed() const {
    if (same_sku != nullptr) return same_sku;
    return cross != nullptr ? &cross_stats : nullptr;
  }
};

EvidenceInUse ResolveEvidence(const ConfigurationEvidence& ev) {
  EvidenceInUse in_use;
  in_use.measured = ev.measured;
  in_use.transferred = ev.transferred;
  in_use.same_sku = ev.measured != nullptr
                        ? ev.measured
                        : (ev.transferred ? &ev.transferred->stats : nullptr);
  in_use.cross = in_use.same_sku == nullptr ? ev.cross_sku : nullptr;
  if (in_use.cross != nullptr) {
    const CrossSkuMemory& cross = *in_use.cross;
    in_use.cross_stats = cross.source;
    in_use.cross_stats.peak_memory_gb = cross.peak_gb;
    in_use.cross_stats.max_peak_memory_gb =
        std::max(cross.peak_gb, in_use.cross_stats.max_peak_memory_gb +
                                    cross.context_adjustment_gb);
  }
  in_use.memory_scale = in_use.observed() == nullptr ? ev.memory_scale : 1;
  return in_use;
}

// The fit verdict of the predicted memory (scaled) or the observed one.
FitVerdict CheckFit(const MemoryBreakdown& predicted, const EvidenceInUse& ev,
                    const GpuSku& sku, double headroom_fraction, bool explain) {
  const EvidenceStats* observed = ev.observed();
  return CheckFitWithoutOffload(
      predicted.total_gb * ev.memory_scale, predicted.optimizer_may_page_to_cpu,
      sku, observed, headroom_fraction,
      ev.measured == nullptr && observed != nullptr, explain);
}

// The candidate's pool, card, fit and evidence basis (the basis may turn
// ESTIMATED when its step time has to be estimated).
void FillFitAndBasis(const Pool& pool, const GpuSku& sku, const Recipe& recipe,
                     const FitVerdict& fit, const EvidenceInUse& ev,
                     Candidate* cand) {
  cand->pool_name = pool.name;
  cand->sku_id = sku.id;
  cand->gpu_count = recipe.gpu_count;
  cand->fit = fit.fit;
  cand->fits = true;
  cand->peak_memory_gb = fit.peak_gb;
  cand->peak_memory_gb_band = fit.band;
  cand->headroom_gb = fit.headroom_gb;
  const EvidenceChoice choice = ChooseEvidence(ev.measured, ev.transferred);
  cand->basis = choice.basis;
  cand->confidence = choice.confidence;
  cand->evidence_runs = choice.runs;
  if (ev.cross != nullptr) {
    cand->basis = EvidenceBasis::kTransferred;
    cand->confidence = ev.cross->source.successful_runs >= 3
                           ? Confidence::kMedium
                           : Confidence::kLow;
    cand->evidence_runs = ev.cross->source.runs;
    cand->transferred_from_recipe_key = ev.cross->recipe_key;
    cand->transferred_from_sku_id = ev.cross->from_sku_id;
  }
}

// Step time from this SKU's runs (measured, or transferred from a nearby
// recipe). Returns the GPU-hours per successful step.
double StepTimeFromEvidence(const Recipe& recipe, const ModelArchitecture& arch,
                            const Pool& pool, const GpuSku& sku,
                            const EvidenceInUse& ev, bool explain,
                            Candidate* cand) {
  const EvidenceStats& stats = *ev.same_sku;
  const double per_step_gpu_hours = *stats.gpu_hours_per_successful_step;
  cand->step_time_s = stats.median_step_time_s > 0
                          ? stats.median_step_time_s
                          : per_step_gpu_hours * 3600 / recipe.gpu_count;
  cand->step_time_s_band =
      ev.measured != nullptr
          ? Band{cand->step_time_s,
                 std::max(cand->step_time_s, stats.p95_step_time_s)}
          : StepTimeBand(cand->step_time_s);
  if (explain) {
    cand->prior_step_time_s =
        EstimateStepTime(recipe, arch, sku, pool).step_time_s;
  }
  return per_step_gpu_hours;
}

std::string FleetStepTimeReason(const Candidate& cand,
                                const StepTimeEstimate& est,
                                const FleetStepTime& fleet, const GpuSku& sku) {
  return absl::StrFormat(
      "%s: step time %.2f s (band %.2f-%.2f s) = the analytic %.2f s x "
      "%.2f from the fleet model (log step time over recipe x SKU, "
      "fitted to %d measured cells; %s; %s)",
      kEvidenceBeatsEstimatesRule, cand.step_time_s, cand.step_time_s_band.low,
      cand.step_time_s_band.high, est.step_time_s, fleet.factor, fleet.cells,
      fleet.recipe_measured
          ? absl::StrCat("this recipe measured on ",
                         absl::StrJoin(fleet.recipe_skus, ", "))
          : "this recipe never measured",
      fleet.sku_measured
          ? absl::StrCat(sku.id,
                         "'s ratio learned from the recipes "
                         "measured on it")
          : absl::StrCat(sku.id, " never measured: its prior ratio"));
}

std::string AnalyticStepTimeReason(const Candidate& cand,
                                   const StepTimeEstimate& est,
                                   const Recipe& recipe, const Pool& pool,
                                   const GpuSku& sku) {
  std::string network;
  if (est.inter_node_bandwidth_gb_s > 0) {
    network = absl::StrFormat(", across nodes at %.2f GB/s per GPU (%s)",
                              est.inter_node_bandwidth_gb_s,
                              InterNodeBandwidthOf(pool).source);
  }
  return absl::StrFormat(
      "%s: step time %.2f s (band %.2f-%.2f s) estimated from %.0f TFLOP/s "
      "x %.0f%% efficiency (fitted to published runs; compute %.2f s, "
      "exposed communication %.2f s%s)",
      kEvidenceBeatsEstimatesRule, est.step_time_s, cand.step_time_s_band.low,
      cand.step_time_s_band.high, PeakDenseTflops(recipe, sku),
      100 * est.efficiency, est.compute_s, est.exposed_communication_s,
      network);
}

// Step time from the analytic model, corrected by the fleet model when it
// applies; the basis turns ESTIMATED unless memory was transferred from
// another SKU. Returns the GPU-hours per successful step.
double StepTimeFromModel(const Recipe& recipe, const ModelArchitecture& arch,
                         const Pool& pool, const GpuSku& sku,
                         const EvidenceInUse& ev,
                         const FleetStepTime* fleet_step_time, bool explain,
                         Candidate* cand) {
  const StepTimeEstimate est = EstimateStepTime(recipe, arch, sku, pool);
  cand->prior_step_time_s = est.step_time_s;
  const FleetStepTime* fleet =
      ev.same_sku == nullptr ? fleet_step_time : nullptr;
  cand->step_time_s = est.step_time_s * (fleet ? fleet->factor : 1);
  cand->step_time_s_band = fleet ? Band{cand->step_time_s * fleet->band_low,
                                        cand->step_time_s * fleet->band_high}
                                 : StepTimeBand(cand->step_time_s);
  if (ev.cross == nullptr) {
    cand->basis = EvidenceBasis::kEstimated;
    cand->confidence = Confidence::kLow;
  }
  if (explain) {
    cand->reasons.push_back(
        fleet != nullptr
            ? FleetStepTimeReason(*cand, est, *fleet, sku)
            : AnalyticStepTimeReason(*cand, est, recipe, pool, sku));
  }
  return cand->step_time_s * recipe.gpu_count / 3600;
}

// GPU-hours, cost (saturated: never wrapping to a cheap-looking figure) and
// wall time of the whole job.
void EstimateJob(int64_t total_steps, const Pool& pool, const Recipe& recipe,
                 double per_step_gpu_hours, Candidate* cand) {
  cand->gpu_hours_per_1k_successful_steps = per_step_gpu_hours * 1000;
  cand->expected_gpu_hours = per_step_gpu_hours * total_steps;
  cand->expected_cost_micros = CostMicros(
      cand->expected_gpu_hours, pool.internal_rate_micros_per_gpu_hour);
  if (pool.list_price_micros_per_gpu_hour) {
    cand->list_price_cost_micros = CostMicros(
        cand->expected_gpu_hours, *pool.list_price_micros_per_gpu_hour);
  }
  cand->expected_wall_time =
      absl::Seconds(cand->expected_gpu_hours * 3600 / recipe.gpu_count);
}

std::optional<RuleRejection> CheckDeadline(const PlanConstraints& c,
                                           const Candidate& cand,
                                           bool explain) {
  if (!c.deadline || cand.expected_wall_time <= *c.deadline) {
    return std::nullopt;
  }
  if (!explain) return RuleRejection{kDeadlineRule, ""};
  return RuleRejection{
      kDeadlineRule, absl::StrCat("expected wall time ",
                                  absl::FormatDuration(cand.expected_wall_time),
                                  " exceeds the deadline of ",
                                  absl::FormatDuration(*c.deadline))};
}

// The reason or warning that says what the candidate's figures rest on:
// measured runs, memory transferred from another SKU, a nearby recipe, or
// estimates alone.
void ExplainEvidence(const Recipe& recipe, const GpuSku& sku,
                     const EvidenceInUse& ev, double per_step_gpu_hours,
                     Candidate* cand) {
  if (ev.observed() == nullptr && ev.memory_scale != 1) {
    cand->reasons.push_back(absl::StrFormat(
        "%s: predicted memory x%.3f, the fleet's re-fit of the memory model "
        "for %s recipes (median of measured / predicted over the uploaded "
        "runs, shrunk toward the published fit)",
        kEvidenceBeatsEstimatesRule, ev.memory_scale,
        TrainingFrameworkName(recipe.framework)));
  }
  if (cand->basis == EvidenceBasis::kMeasured) {
    const EvidenceStats& measured = *ev.measured;
    cand->reasons.push_back(absl::StrFormat(
        "%s: %d measured run(s), %d succeeded; %.4f GPU-hours per "
        "successful step including failures and retries",
        kRetriesCostMoneyRule, measured.runs, measured.successful_runs,
        per_step_gpu_hours));
    if (measured.failure_share > 0 || measured.retry_rate > 0) {
      cand->warnings.push_back(
          absl::StrFormat("%s: %.0f%% of runs failed, %.2f retries per run",
                          kRetriesCostMoneyRule, 100 * measured.failure_share,
                          measured.retry_rate));
    }
  } else if (ev.cross != nullptr) {
    const CrossSkuMemory& cross = *ev.cross;
    cand->reasons.push_back(absl::StrFormat(
        "%s: peak memory TRANSFERRED from the same recipe measured on %s "
        "(p95 %.1f GB over %d successful run(s), %+.1f GB for the cards' "
        "context overhead); step time not measured on %s",
        kEvidenceBeatsEstimatesRule, cross.from_sku_id, cross.source_peak_gb,
        cross.source.successful_runs, cross.context_adjustment_gb, sku.id));
  } else if (cand->basis == EvidenceBasis::kTransferred) {
    const TransferredEvidence& transferred = *ev.transferred;
    cand->transferred_from_recipe_key = transferred.source.stats.recipe_key;
    cand->reasons.push_back(absl::StrFormat(
        "%s: TRANSFERRED from %s (%s) with step time x%.2f and memory "
        "x%.2f",
        kEvidenceBeatsEstimatesRule, transferred.source.stats.recipe_key,
        DescribeSettings(transferred.source.recipe),
        transferred.step_time_scale, transferred.memory_scale));
  } else {
    cand->warnings.push_back(absl::StrCat(
        kEvidenceBeatsEstimatesRule, ": ESTIMATED, no run of this recipe on ",
        sku.id, " yet; low confidence"));
  }
}

// The explanation of a viable configuration: its fit, its evidence, the
// fabric warnings and serve_what_you_evaluated.
void ExplainCandidate(const PlanRequest& request, const Recipe& recipe,
                      const Pool& pool, const GpuSku& sku,
                      const FitVerdict& fit, const EvidenceInUse& ev,
                      double per_step_gpu_hours, Candidate* cand) {
  cand->recipe = recipe;
  cand->reasons.push_back(
      absl::StrCat(kFitWithoutOffloadRule, ": ", fit.reason));
  ExplainEvidence(recipe, sku, ev, per_step_gpu_hours, cand);
  for (std::string& w : CollectiveFabricWarnings(recipe, pool, sku)) {
    cand->warnings.push_back(std::move(w));
  }
  if (auto w = InterNodeFabricWarning(recipe, pool)) {
    cand->warnings.push_back(*std::move(w));
  }
  if (request.serving) {
    cand->eval_requirement = CheckServeWhatYouEvaluated(
        recipe, sku.id, request.serving->sku_id, request.serving->precision);
  }
}

}  // namespace

FieldViolations ValidatePlanRequest(const PlanRequest& request) {
  FieldViolations v =
      ValidateRecipe(NormalizeRecipe(ValidationProbe(request.recipe)));
  if (request.total_steps < 1) {
    v.push_back({"total_steps", "must be at least 1"});
  } else if (request.total_steps > kMaxTotalSteps) {
    v.push_back(
        {"total_steps", absl::StrCat("must be at most ", kMaxTotalSteps)});
  }
  if (request.constraints.max_gpus < 0) {
    v.push_back({"constraints.max_gpus", "must not be negative"});
  }
  if (request.constraints.deadline.has_value() &&
      *request.constraints.deadline <= absl::ZeroDuration()) {
    v.push_back({"constraints.deadline", "must be positive when set"});
  }
  if (request.constraints.headroom_fraction < 0 ||
      request.constraints.headroom_fraction >= 1) {
    v.push_back({"constraints.headroom_fraction", "must be in [0, 1)"});
  }
  return v;
}

ConfigurationOutcome EvaluateConfiguration(
    const PlanRequest& request, const Recipe& recipe,
    const ModelArchitecture& arch, const MemoryBreakdown& predicted,
    const Pool& pool, const GpuSku& sku, const ConfigurationEvidence& evidence,
    bool explain) {
  const PlanConstraints& c = request.constraints;
  ConfigurationOutcome out;
  out.recipe = recipe;
  out.predicted_memory = predicted;
  auto reject = [&](RuleRejection r) {
    if (!explain) r.reason.clear();
    out.rejection = std::move(r);
    return out;
  };
  if (auto r =
          CheckLayoutRules(recipe, pool, sku, c.max_gpus, evidence.measured)) {
    return reject(*std::move(r));
  }
  const EvidenceInUse ev = ResolveEvidence(evidence);
  out.fit =
      CheckFit(out.predicted_memory, ev, sku, c.headroom_fraction, explain);
  if (!out.fit.fits) {
    if (!explain) return reject({kFitWithoutOffloadRule, ""});
    return reject({kFitWithoutOffloadRule,
                   absl::StrCat(out.fit.reason, " (",
                                DescribeBreakdown(out.predicted_memory), ")")});
  }
  Candidate& cand = out.candidate;
  FillFitAndBasis(pool, sku, recipe, out.fit, ev, &cand);
  cand.prior_peak_memory_gb = out.predicted_memory.total_gb;
  const double per_step_gpu_hours =
      ev.same_sku != nullptr && ev.same_sku->gpu_hours_per_successful_step
          ? StepTimeFromEvidence(recipe, arch, pool, sku, ev, explain, &cand)
          : StepTimeFromModel(recipe, arch, pool, sku, ev,
                              evidence.fleet_step_time, explain, &cand);
  EstimateJob(request.total_steps, pool, recipe, per_step_gpu_hours, &cand);
  if (auto r = CheckDeadline(c, cand, explain)) return reject(*std::move(r));
  if (!explain) return out;
  ExplainCandidate(request, recipe, pool, sku, out.fit, ev, per_step_gpu_hours,
                   &cand);
  return out;
}

size_t ChooseConfiguration(const std::vector<ConfigurationOutcome>& outcomes,
                           Objective objective) {
  size_t best = outcomes.size();
  // A BORDERLINE configuration is chosen to be measured first: the one
  // most likely to fit (least peak memory per GPU) is the one to measure.
  auto key = [&](const ConfigurationOutcome& o) {
    const bool fits = o.candidate.fit == Fit::kFits;
    return std::make_tuple(
        !fits, fits ? RankingValue(o.candidate, objective) : o.fit.peak_gb,
        fits ? 0.0 : RankingValue(o.candidate, objective), o.recipe.gpu_count);
  };
  for (size_t i = 0; i < outcomes.size(); ++i) {
    if (outcomes[i].rejection) continue;
    if (best == outcomes.size() || key(outcomes[i]) < key(outcomes[best])) {
      best = i;
    }
  }
  if (best != outcomes.size()) return best;
  for (size_t i = 0; i < outcomes.size(); ++i) {
    if (best == outcomes.size()) {
      best = i;
      continue;
    }
    const double mi = outcomes[i].predicted_memory.total_gb;
    const double mb = outcomes[best].predicted_memory.total_gb;
    if (mi < mb || (mi == mb && outcomes[i].recipe.gpu_count >
                                    outcomes[best].recipe.gpu_count)) {
      best = i;
    }
  }
  return best;
}

void MarkOverBought(const std::vector<GpuSku>& skus,
                    std::vector<Candidate>* candidates) {
  auto memory_of = [&](const std::string& id) {
    for (const GpuSku& sku : skus) {
      if (sku.id == id) return &sku;
    }
    return static_cast<const GpuSku*>(nullptr);
  };
  std::vector<const GpuSku*> cards;
  for (const Candidate& c : *candidates) cards.push_back(memory_of(c.sku_id));
  for (size_t i = 0; i < candidates->size(); ++i) {
    if (cards[i] == nullptr) continue;
    bool smaller_fits = false;
    for (size_t j = 0; j < candidates->size(); ++j) {
      if (cards[j] != nullptr && cards[j]->memory_gb < cards[i]->memory_gb) {
        smaller_fits = true;
        break;
      }
    }
    if (auto w = CheckOverBought((*candidates)[i].peak_memory_gb, *cards[i],
                                 smaller_fits)) {
      (*candidates)[i].warnings.push_back(*std::move(w));
    }
  }
}

namespace {

// Per-SKU work shared by every pool of that SKU.
struct SkuView {
  ExactSkuResult resolved;
  std::vector<KeyedEvidence> similar;  // FindSimilar, once per SKU
  bool looked_up = false;
};

// Evidence of one (recipe key, SKU), looked up once per plan.
struct KeyEvidence {
  std::optional<EvidenceStats> measured;
  std::optional<TransferredEvidence> transferred;
  std::optional<CrossSkuMemory> cross_sku;
  std::optional<FleetStepTime> fleet_step_time;

  ConfigurationEvidence View(double memory_scale) const {
    return {measured ? &*measured : nullptr,
            transferred ? &*transferred : nullptr,
            cross_sku ? &*cross_sku : nullptr,
            fleet_step_time ? &*fleet_step_time : nullptr, memory_scale};
  }
};

// Pools of one SKU and shape share their configurations, with their keys,
// predictions and evidence.
struct ShapeEntry {
  std::vector<Recipe> configurations;
  std::vector<std::string> keys;
  std::vector<MemoryBreakdown> predicted;
  std::vector<KeyEvidence> evidence;
};

// Keys and predictions depend only on the layout, not on the pool.
using LayoutKey = std::tuple<int, int, int, int, int, int>;

// What every pool of one plan shares: the request, its normalized recipe,
// and lookups made once per plan rather than once per pool.
struct PlanContext {
  PlanContext(const PlanRequest& request, const Recipe& recipe,
              const ModelArchitecture& arch, const std::vector<GpuSku>& skus,
              const EvidenceSource& evidence, const FleetModel* fleet)
      : request(request),
        recipe(recipe),
        arch(arch),
        skus(skus),
        evidence(evidence),
        fleet(fleet),
        open(OpenSettingsOf(request.recipe)),
        memory_scale(fleet != nullptr ? fleet->PlanMemoryScale(recipe.framework)
                                      : 1) {}

  const PlanRequest& request;
  const Recipe& recipe;  // normalized
  const ModelArchitecture& arch;
  const std::vector<GpuSku>& skus;
  const EvidenceSource& evidence;
  const FleetModel* fleet;
  OpenSettings open;
  double memory_scale = 1;  // FleetModel::PlanMemoryScale, or 1
  std::unordered_map<std::string, SkuView> views;
  std::unordered_map<std::string, ShapeEntry> shapes;
  std::map<LayoutKey, std::pair<std::string, MemoryBreakdown>> by_layout;
  // Each recipe key's statistics on every catalog SKU.
  std::unordered_map<std::string,
                     std::vector<std::pair<const GpuSku*, EvidenceStats>>>
      on_other_skus;
};

// Either a candidate or the rejection of one pool.
struct PoolVerdict {
  std::optional<Candidate> candidate;
  std::optional<Rejection> rejection;
};

PoolVerdict Reject(const Pool& pool, const char* rule, std::string reason) {
  return {std::nullopt,
          Rejection{pool.name, pool.sku_id, rule, std::move(reason)}};
}

// The checks made before any configuration: the request's constraints,
// training stays off serving pools, and a fixed GPU count's quota.
std::optional<PoolVerdict> CheckPoolAdmission(const Pool& pool,
                                              const PlanContext& ctx) {
  const PlanConstraints& c = ctx.request.constraints;
  std::string why;
  if (!Allowed(pool, c, &why)) {
    return Reject(pool, kConstraintsRule, std::move(why));
  }
  if (auto r = CheckTrainingStaysOffServingPools(pool)) {
    return Reject(pool, kTrainingStaysOffServingPoolsRule, r->reason);
  }
  if (!ctx.open.gpu_count) {
    if (auto r = CheckQuota(ctx.recipe, pool, c.max_gpus)) {
      return Reject(pool, kQuotaRule, r->reason);
    }
  } else if (GpuLimit(pool, c.max_gpus) < 1) {
    return Reject(pool, kQuotaRule,
                  absl::StrCat("pool ", pool.name, " grants a quota of ",
                               pool.gpu_quota, " GPUs"));
  }
  return std::nullopt;
}

// The pool's SKU resolved against the catalog, and the similar recipes
// measured on it; looked up once per SKU.
const SkuView& ViewOf(const Pool& pool, PlanContext* ctx) {
  SkuView& view = ctx->views[pool.sku_id];
  if (!view.looked_up) {
    view.looked_up = true;
    view.resolved = CheckExactSku(pool.sku_id, ctx->skus);
    if (view.resolved.sku) {
      view.similar = ctx->evidence.FindSimilar(
          ctx->recipe.model, ctx->recipe.method, view.resolved.sku->id);
    }
  }
  return view;
}

// Each recipe key's statistics on every catalog SKU, looked up once through
// the evidence's recipe-key index (one ordered visit of the SKUs that
// measured the key, not one lookup per catalog SKU).
const std::vector<std::pair<const GpuSku*, EvidenceStats>>& MeasuredElsewhere(
    const std::string& key, PlanContext* ctx) {
  auto [found, fresh] = ctx->on_other_skus.try_emplace(key);
  if (fresh) {
    for (KeyedEvidence& measured : ctx->evidence.FindAcrossSkus(key)) {
      // SKUs outside the catalog are skipped, as a lookup per catalog SKU
      // would.
      auto other = std::find_if(
          ctx->skus.begin(), ctx->skus.end(),
          [&](const GpuSku& s) { return s.id == measured.stats.sku_id; });
      if (other != ctx->skus.end()) {
        found->second.emplace_back(&*other, std::move(measured.stats));
      }
    }
  }
  return found->second;
}

// The evidence of one configuration's key on `sku`.
KeyEvidence LookUpEvidence(const std::string& key, const Recipe& configuration,
                           const GpuSku& sku, const SkuView& view,
                           PlanContext* ctx) {
  KeyEvidence ev;
  ev.measured = ctx->evidence.Find(key, sku.id);
  if (ev.measured) return ev;
  ev.transferred = BestTransfer(view.similar, configuration);
  if (!ev.transferred) {
    ev.cross_sku = CrossSkuMemoryTransfer(MeasuredElsewhere(key, ctx), sku);
  }
  if (ctx->fleet != nullptr) {
    ev.fleet_step_time = ctx->fleet->StepTime(key, sku.id);
  }
  return ev;
}

// The configurations of the recipe on pools of this SKU and shape, with
// their keys, predictions and evidence; built once per shape.
const ShapeEntry& ShapeOf(const Pool& pool, const GpuSku& sku,
                          const SkuView& view, PlanContext* ctx) {
  const std::string shape =
      absl::StrCat(sku.id, "/", pool.gpus_per_node, "/", pool.node_count, "/",
                   pool.gpu_quota, "/", static_cast<int>(pool.fabric));
  auto [it, inserted] = ctx->shapes.try_emplace(shape);
  ShapeEntry& entry = it->second;
  if (!inserted) return entry;
  entry.configurations = EnumerateConfigurations(
      ctx->request.recipe, ctx->recipe, ctx->arch.num_layers, pool, sku,
      ctx->request.constraints.max_gpus);
  for (const Recipe& configuration : entry.configurations) {
    const LayoutKey layout{
        configuration.gpu_count,
        static_cast<int>(configuration.parallelism),
        configuration.tensor_parallel_degree,
        configuration.pipeline_parallel_degree,
        configuration.data_parallel_degree,
        static_cast<int>(configuration.activation_checkpointing)};
    auto [known, fresh] = ctx->by_layout.try_emplace(layout);
    if (fresh) {
      known->second = {RecipeKey(configuration),
                       PredictPeakMemory(configuration, ctx->arch,
                                         DefaultMemoryModelConstants())};
    }
    entry.keys.push_back(known->second.first);
    entry.predicted.push_back(known->second.second);
    entry.evidence.push_back(
        LookUpEvidence(entry.keys.back(), configuration, sku, view, ctx));
  }
  return entry;
}

// The first reason of a candidate whose configuration the planner chose:
// which one, why, out of how many, and what the request left open.
std::string ConfigurationChoiceReason(
    const Candidate& cand, const std::vector<ConfigurationOutcome>& outcomes,
    const OpenSettings& open, Objective objective) {
  int viable = 0;
  for (const auto& o : outcomes) viable += o.rejection ? 0 : 1;
  return absl::StrCat(
      "configuration: chose ", DescribeConfiguration(cand.recipe),
      cand.fit == Fit::kFits
          ? (objective == Objective::kShortestTime ? ", the fastest that FITS"
                                                   : ", the cheapest that FITS")
          : ", none FITS: the BORDERLINE one with the least peak "
            "memory per GPU",
      " of ", viable, " viable out of ", outcomes.size(), " evaluated; ",
      static_cast<int64_t>(cand.recipe.sequence_length) *
          cand.recipe.micro_batch_size *
          cand.recipe.gradient_accumulation_steps *
          cand.recipe.data_parallel_degree,
      " tokens per optimizer step (micro-batch and accumulation are "
      "per data-parallel replica, as torchrun and HF Trainer count "
      "them) (",
      open.gpu_count ? "GPU count " : "",
      open.parallelism ? "parallelism " : "",
      open.checkpointing ? "checkpointing " : "", "left open by the request)");
}

// When the planner turned activation checkpointing on: what the same layout
// without it would have met.
std::optional<std::string> CheckpointingReason(
    const Candidate& cand, const std::vector<ConfigurationOutcome>& outcomes) {
  for (const ConfigurationOutcome& o : outcomes) {
    if (RecomputesActivations(o.recipe) ||
        o.recipe.gpu_count != cand.recipe.gpu_count ||
        o.recipe.parallelism != cand.recipe.parallelism ||
        o.recipe.tensor_parallel_degree != cand.recipe.tensor_parallel_degree) {
      continue;
    }
    return absl::StrCat(
        "activation checkpointing turned on by the planner (the request left "
        "it open): without it ",
        o.rejection ? o.rejection->reason : o.fit.reason);
  }
  return std::nullopt;
}

// One pool: its admission checks, then each configuration evaluated and the
// best one chosen (ChooseConfiguration), or the rejection to report.
PoolVerdict EvaluatePool(const Pool& pool, PlanContext* ctx) {
  if (auto verdict = CheckPoolAdmission(pool, *ctx)) return *verdict;
  const SkuView& view = ViewOf(pool, ctx);
  if (view.resolved.rejection) {
    return Reject(pool, kExactSkuRule, view.resolved.rejection->reason);
  }
  const GpuSku& sku = *view.resolved.sku;
  const ShapeEntry& entry = ShapeOf(pool, sku, view, ctx);
  const size_t count = entry.configurations.size();
  if (count == 0) {
    return Reject(
        pool, kQuotaRule,
        absl::StrCat("no valid configuration of the recipe within the ",
                     GpuLimit(pool, ctx->request.constraints.max_gpus),
                     " GPUs pool ", pool.name, " may grant"));
  }
  // A single configuration is explained at once; a search explains only
  // the configuration it keeps (and the one it reports).
  const bool search = count > 1;
  auto evaluate = [&](size_t i, bool explain) {
    ConfigurationOutcome o = EvaluateConfiguration(
        ctx->request, entry.configurations[i], ctx->arch, entry.predicted[i],
        pool, sku, entry.evidence[i].View(ctx->memory_scale), explain);
    o.recipe_key = entry.keys[i];
    o.candidate.recipe_key = entry.keys[i];
    return o;
  };
  std::vector<ConfigurationOutcome> outcomes;
  outcomes.reserve(count);
  for (size_t i = 0; i < count; ++i) outcomes.push_back(evaluate(i, !search));
  const Objective objective = ctx->request.constraints.objective;
  const size_t chosen = ChooseConfiguration(outcomes, objective);
  if (search) outcomes[chosen] = evaluate(chosen, true);
  ConfigurationOutcome& best = outcomes[chosen];
  if (best.rejection) {
    std::string reason = best.rejection->reason;
    if (ctx->open.any() && count > 1) {
      reason = absl::StrCat("none of ", count,
                            " configurations is viable; the one needing the "
                            "least memory, ",
                            DescribeConfiguration(best.recipe), ": ", reason);
    }
    return Reject(pool, best.rejection->rule.c_str(), std::move(reason));
  }
  Candidate cand = std::move(best.candidate);
  if (ctx->open.any()) {
    std::vector<std::string> first = {
        ConfigurationChoiceReason(cand, outcomes, ctx->open, objective)};
    if (ctx->open.checkpointing && RecomputesActivations(cand.recipe)) {
      if (auto r = CheckpointingReason(cand, outcomes)) {
        first.push_back(*std::move(r));
      }
    }
    cand.reasons.insert(cand.reasons.begin(), first.begin(), first.end());
  }
  return {std::move(cand), std::nullopt};
}

}  // namespace

absl::StatusOr<PlanResult> Plan(const PlanRequest& request,
                                const std::vector<Pool>& pools,
                                const std::vector<GpuSku>& skus,
                                const EvidenceSource& evidence,
                                const FleetModel* fleet) {
  const FieldViolations violations = ValidatePlanRequest(request);
  if (!violations.empty()) return InvalidArgumentWithViolations(violations);
  return PlanValidatedRequest(request, pools, skus, evidence, fleet);
}

absl::StatusOr<PlanResult> PlanValidatedRequest(const PlanRequest& request,
                                                const std::vector<Pool>& pools,
                                                const std::vector<GpuSku>& skus,
                                                const EvidenceSource& evidence,
                                                const FleetModel* fleet) {
  PlanResult result;
  result.recipe = NormalizeRecipe(request.recipe);
  absl::StatusOr<ModelArchitecture> arch = ResolveArchitecture(result.recipe);
  if (!arch.ok()) return arch.status();
  PlanContext ctx(request, result.recipe, *arch, skus, evidence, fleet);
  std::vector<const Pool*> ordered;
  ordered.reserve(pools.size());
  for (const Pool& pool : pools) ordered.push_back(&pool);
  std::sort(ordered.begin(), ordered.end(),
            [](const Pool* a, const Pool* b) { return a->name < b->name; });
  for (const Pool* pool : ordered) {
    PoolVerdict verdict = EvaluatePool(*pool, &ctx);
    if (verdict.rejection) {
      result.rejections.push_back(*std::move(verdict.rejection));
    } else {
      result.candidates.push_back(*std::move(verdict.candidate));
    }
  }
  MarkOverBought(skus, &result.candidates);
  RankCandidates(request.constraints.objective, &result.candidates);
  if (!result.candidates.empty()) {
    result.eval_requirement = result.candidates.front().eval_requirement;
    if (ctx.open.any()) result.recipe = result.candidates.front().recipe;
  }
  result.recipe_key = RecipeKey(result.recipe);
  result.predicted_memory =
      PredictPeakMemory(result.recipe, *arch, DefaultMemoryModelConstants());
  result.bake_off = ProposeBakeOff(request, &result.candidates);
  return result;
}

}  // namespace placement::core
