#include "core/plan/planner.h"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>
#include <unordered_map>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "core/evidence/layout_memory.h"
#include "core/field_violation.h"
#include "core/models/step_time_model.h"
#include "core/money.h"
#include "core/plan/configuration_exploration.h"
#include "core/plan/configuration_search.h"
#include "core/plan/ranking.h"

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

void MarkEvalStatus(const PlanRequest& request, const std::vector<Pool>& pools,
                    const EvidenceSource& evidence,
                    std::vector<Candidate>* candidates) {
  if (!request.serving) return;
  for (Candidate& c : *candidates) {
    if (!c.eval_requirement) continue;
    std::vector<EvalCriterion> criteria;
    for (const Pool& pool : pools) {
      if (pool.name == c.pool_name) {
        criteria = CriteriaFor(evidence.EvalCriteria(), pool);
      }
    }
    const Precision precision =
        request.serving->precision == Precision::kUnspecified
            ? c.recipe.precision
            : request.serving->precision;
    c.eval_status = MatchEval(
        evidence.FindEvals(c.recipe_key, request.serving->sku_id, precision),
        c.recipe_key, request.serving->sku_id, precision, criteria);
  }
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
  std::optional<LayoutMemoryScale> sibling_memory;
  std::optional<LayoutMemoryScale> succeeded_sibling;
  std::optional<MethodMemoryFloor> method_floor;

  // `memory_scale` and `model_startup` are the plan's, the same for every
  // configuration of the recipe (PlanContext).
  ConfigurationEvidence View(double memory_scale,
                             const ModelStartup* model_startup) const {
    ConfigurationEvidence view;
    view.measured = measured ? &*measured : nullptr;
    view.transferred = transferred ? &*transferred : nullptr;
    view.cross_sku = cross_sku ? &*cross_sku : nullptr;
    view.fleet_step_time = fleet_step_time ? &*fleet_step_time : nullptr;
    view.memory_scale = memory_scale;
    view.sibling_memory = sibling_memory ? &*sibling_memory : nullptr;
    view.succeeded_sibling = succeeded_sibling ? &*succeeded_sibling : nullptr;
    view.method_floor = method_floor ? &*method_floor : nullptr;
    view.model_startup = model_startup;
    return view;
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
                                      : 1),
        model_startup(fleet != nullptr ? fleet->Startup(recipe.model)
                                       : std::nullopt) {}

  const PlanRequest& request;
  const Recipe& recipe;  // normalized
  const ModelArchitecture& arch;
  const std::vector<GpuSku>& skus;
  const EvidenceSource& evidence;
  const FleetModel* fleet;
  OpenSettings open;
  double memory_scale = 1;  // FleetModel::PlanMemoryScale, or 1
  std::optional<ModelStartup> model_startup;  // FleetModel::Startup
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
  if (!ev.transferred && !ev.cross_sku) {
    SiblingLayouts siblings =
        ReadSiblingLayouts(view.similar, configuration, ctx->arch);
    ev.sibling_memory = std::move(siblings.raise);
    ev.succeeded_sibling = std::move(siblings.succeeded);
  }
  // The method's floor on the card, under a prediction or a peak carried
  // from another card; a recipe's runs on this card speak first.
  if (!ev.transferred && !ev.sibling_memory && !ev.succeeded_sibling &&
      ctx->fleet != nullptr) {
    ev.method_floor = ctx->fleet->MethodMemory(configuration.method, sku.id);
  }
  if (ctx->fleet != nullptr) {
    ev.fleet_step_time =
        ctx->fleet->StepTime(key, sku.id, configuration.method);
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

// Why `cand`'s configuration was the one chosen, its risk of running out of
// memory priced against `fallback` where the objective prices it. (Under
// the other objectives a BORDERLINE one is chosen only when none FITS.)
std::string ConfigurationChoiceRule(const Candidate& cand, Objective objective,
                                    const Candidate* fallback) {
  if (cand.fit == Fit::kFits) {
    return objective == Objective::kShortestTime ? ", the fastest that FITS"
                                                 : ", the cheapest that FITS";
  }
  if (!PricesOutOfMemoryRisk(objective) || fallback == nullptr) {
    return ", none FITS: the BORDERLINE one with the least peak memory per "
           "GPU";
  }
  if (SameConfiguration(cand, *fallback)) {
    return ", none FITS on any pool: the BORDERLINE one likeliest to fit";
  }
  return absl::StrCat(
      ", BORDERLINE: the cheapest with its risk of running out of memory "
      "priced against where the job would go then (pool ",
      fallback->pool_name, ", ", DescribeConfiguration(fallback->recipe),
      fallback->fit == Fit::kFits ? ", which FITS" : ", the likeliest to fit",
      ")");
}

// The first reason of a candidate whose configuration the planner chose:
// which one, why, out of how many, and what the request left open.
std::string ConfigurationChoiceReason(
    const Candidate& cand, const std::vector<ConfigurationOutcome>& outcomes,
    const OpenSettings& open, Objective objective, const Candidate* fallback) {
  int viable = 0;
  for (const auto& o : outcomes) viable += o.rejection ? 0 : 1;
  return absl::StrCat(
      "configuration: chose ", DescribeConfiguration(cand.recipe),
      ConfigurationChoiceRule(cand, objective, fallback), " of ", viable,
      " viable out of ", outcomes.size(), " evaluated; ",
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

// When the planner turned activation checkpointing on: the index in
// `outcomes` of the same layout without it, if one was evaluated.
std::optional<size_t> WithoutCheckpointing(
    const Candidate& cand, const std::vector<ConfigurationOutcome>& outcomes) {
  for (size_t i = 0; i < outcomes.size(); ++i) {
    const Recipe& r = outcomes[i].recipe;
    if (RecomputesActivations(r) || r.gpu_count != cand.recipe.gpu_count ||
        r.parallelism != cand.recipe.parallelism ||
        r.tensor_parallel_degree != cand.recipe.tensor_parallel_degree) {
      continue;
    }
    return i;
  }
  return std::nullopt;
}

// What `without` (WithoutCheckpointing, evaluated with its reasons) met.
std::string CheckpointingReason(const ConfigurationOutcome& without) {
  return absl::StrCat(
      "activation checkpointing turned on by the planner (the request left "
      "it open): without it ",
      without.rejection ? without.rejection->reason : without.fit.reason);
}

// The steps the fleet has run, on any SKU, of the recipe keys in `keys`:
// how much of a recipe class was asked for so far, and so (a class asked for
// n times is likely to be asked for about as often again) how much is still
// to come. FindAcrossSkus gives every SKU of a key at once: each key is read
// once.
int64_t HistorySteps(const std::set<std::string>& keys,
                     const EvidenceSource& evidence) {
  int64_t steps = 0;
  for (const std::string& key : keys) {
    for (const KeyedEvidence& e : evidence.FindAcrossSkus(key)) {
      steps += e.stats.steps_succeeded;
    }
  }
  return steps;
}

// The class's steps over the pool's viable configurations.
int64_t ConfigurationHistorySteps(
    const std::vector<ConfigurationOutcome>& outcomes, const PlanContext& ctx) {
  std::set<std::string> keys;
  for (const ConfigurationOutcome& o : outcomes) {
    if (!o.rejection) keys.insert(o.recipe_key);
  }
  return HistorySteps(keys, ctx.evidence);
}

// Why the pool's job measures `cand` in place of its measured configuration
// `measured`.
std::string ExplorationReason(const ConfigurationExploration& x,
                              const Candidate& cand, const Recipe& measured) {
  return absl::StrFormat(
      "%s: the job measures this configuration, never run on %s, in place of "
      "the pool's MEASURED %s (%s): it may cost this job up to %s more (at "
      "its pessimistic edge%s) and is expected to save %s over the %d steps "
      "of this recipe class still expected (%.0f%% chance it is cheaper); the "
      "pool ranks at the measured configuration's cost",
      kEvidenceBeatsEstimatesRule, cand.sku_id, DescribeConfiguration(measured),
      FormatMicrosAsCents(SaturatingMicros(x.measured_value_micros)),
      FormatMicrosAsCents(SaturatingMicros(std::max(0.0, x.premium_micros))),
      cand.fit == Fit::kBorderline ? ", its risk of running out of memory "
                                     "priced in"
                                   : "",
      FormatMicrosAsCents(SaturatingMicros(x.expected_saving_micros)),
      x.demand_steps, 100 * x.win_probability);
}

// One pool's configurations, each evaluated without its reasons, or the
// pool's rejection. Kept for the whole plan: a pool's choice prices the
// risk of running out of memory against the whole plan's fallback.
struct PoolEvaluation {
  const Pool* pool = nullptr;
  std::optional<Rejection> rejection;
  const GpuSku* sku = nullptr;
  const ShapeEntry* entry = nullptr;
  PoolReliabilityRollup single_gpu;
  PoolReliabilityRollup multi_gpu;
  std::vector<ConfigurationOutcome> outcomes;
};

ConfigurationOutcome EvaluateOne(const PoolEvaluation& e, size_t i,
                                 bool explain, const PlanContext& ctx) {
  ConfigurationEvidence evidence = e.entry->evidence[i].View(
      ctx.memory_scale, ctx.model_startup ? &*ctx.model_startup : nullptr);
  evidence.pool_single_gpu = &e.single_gpu;
  evidence.pool_multi_gpu = &e.multi_gpu;
  ConfigurationOutcome o = EvaluateConfiguration(
      ctx.request, e.entry->configurations[i], ctx.arch, e.entry->predicted[i],
      *e.pool, *e.sku, evidence, explain);
  o.recipe_key = e.entry->keys[i];
  o.candidate.recipe_key = e.entry->keys[i];
  return o;
}

// One pool: its admission checks, then each configuration evaluated (a
// single one explained at once; a search explains only the configuration it
// keeps, in ChooseForPool).
PoolEvaluation EvaluatePool(const Pool& pool, PlanContext* ctx) {
  PoolEvaluation e;
  e.pool = &pool;
  if (auto verdict = CheckPoolAdmission(pool, *ctx)) {
    e.rejection = std::move(verdict->rejection);
    return e;
  }
  const SkuView& view = ViewOf(pool, ctx);
  if (view.resolved.rejection) {
    e.rejection =
        Reject(pool, kExactSkuRule, view.resolved.rejection->reason).rejection;
    return e;
  }
  e.sku = &*view.resolved.sku;
  e.entry = &ShapeOf(pool, *e.sku, view, ctx);
  const size_t count = e.entry->configurations.size();
  if (count == 0) {
    e.rejection =
        Reject(pool, kQuotaRule,
               absl::StrCat("no valid configuration of the recipe within the ",
                            GpuLimit(pool, ctx->request.constraints.max_gpus),
                            " GPUs pool ", pool.name, " may grant"))
            .rejection;
    return e;
  }
  e.single_gpu = ctx->evidence.PoolReliability(pool.name, /*multi_gpu=*/false);
  e.multi_gpu = ctx->evidence.PoolReliability(pool.name, /*multi_gpu=*/true);
  e.outcomes.reserve(count);
  for (size_t i = 0; i < count; ++i) {
    e.outcomes.push_back(EvaluateOne(e, i, /*explain=*/count == 1, *ctx));
  }
  return e;
}

// Where a job goes when a BORDERLINE configuration runs out of memory, over
// every viable configuration of every pool (RiskFallback); nullopt when
// `objective` does not price that risk or nothing is viable.
std::optional<Candidate> PlanRiskFallback(
    const std::vector<PoolEvaluation>& evaluations, Objective objective) {
  if (!PricesOutOfMemoryRisk(objective)) return std::nullopt;
  std::vector<const Candidate*> viable;
  std::vector<const ConfigurationOutcome*> of_viable;
  for (const PoolEvaluation& e : evaluations) {
    for (const ConfigurationOutcome& o : e.outcomes) {
      if (o.rejection) continue;
      viable.push_back(&o.candidate);
      of_viable.push_back(&o);
    }
  }
  const Candidate* fallback = RiskFallback(viable, objective);
  if (fallback == nullptr) return std::nullopt;
  const size_t i = static_cast<size_t>(
      std::find(viable.begin(), viable.end(), fallback) - viable.begin());
  Candidate out = *fallback;
  out.recipe = of_viable[i]->recipe;  // set on the candidate when explained
  return out;
}

// The pool's configuration (ChooseConfiguration, its risk priced against
// `fallback` where the objective prices it), explained, or the rejection to
// report.
PoolVerdict ChooseForPool(PoolEvaluation* e, const Candidate* fallback,
                          const PlanContext& ctx) {
  const Pool& pool = *e->pool;
  if (e->rejection) return {std::nullopt, std::move(e->rejection)};
  std::vector<ConfigurationOutcome>& outcomes = e->outcomes;
  const size_t count = outcomes.size();
  const bool search = count > 1;
  const Objective objective = ctx.request.constraints.objective;
  std::optional<double> fallback_value;
  if (fallback != nullptr) fallback_value = RankingValue(*fallback, objective);
  size_t chosen = ChooseConfiguration(outcomes, objective, fallback_value);
  std::optional<ExploredConfiguration> explored;
  if (PricesOutOfMemoryRisk(objective) && search &&
      outcomes[chosen].candidate.basis == EvidenceBasis::kMeasured) {
    explored = ExploreConfiguration(outcomes, chosen, fallback_value,
                                    ctx.request.total_steps,
                                    ConfigurationHistorySteps(outcomes, ctx));
  }
  const size_t measured_index = chosen;
  if (explored) chosen = explored->index;
  if (search) outcomes[chosen] = EvaluateOne(*e, chosen, true, ctx);
  ConfigurationOutcome& best = outcomes[chosen];
  if (best.rejection) {
    std::string reason = best.rejection->reason;
    if (ctx.open.any() && count > 1) {
      reason = absl::StrCat("none of ", count,
                            " configurations is viable; the one needing the "
                            "least memory, ",
                            DescribeConfiguration(best.recipe), ": ", reason);
    }
    return Reject(pool, best.rejection->rule.c_str(), std::move(reason));
  }
  Candidate cand = std::move(best.candidate);
  if (ctx.open.any()) {
    std::vector<std::string> first = {ConfigurationChoiceReason(
        cand, outcomes, ctx.open, objective, fallback)};
    if (ctx.open.checkpointing && RecomputesActivations(cand.recipe)) {
      if (std::optional<size_t> i = WithoutCheckpointing(cand, outcomes)) {
        // A search evaluated it without its reasons.
        first.push_back(CheckpointingReason(
            search ? EvaluateOne(*e, *i, /*explain=*/true, ctx)
                   : outcomes[*i]));
      }
    }
    cand.reasons.insert(cand.reasons.begin(), first.begin(), first.end());
  }
  if (explored) {
    // After the configuration's choice, before its evidence.
    const size_t at = std::min<size_t>(1, cand.reasons.size());
    cand.reasons.insert(cand.reasons.begin() + at,
                        ExplorationReason(explored->exploration, cand,
                                          outcomes[measured_index].recipe));
    cand.exploration = std::move(explored->exploration);
  }
  return {std::move(cand), std::nullopt};
}

// The class's steps over the candidates' recipes, however many pools
// propose each.
int64_t ClassHistorySteps(const std::vector<Candidate>& candidates,
                          const EvidenceSource& evidence) {
  std::set<std::string> keys;
  for (const Candidate& cand : candidates) keys.insert(cand.recipe_key);
  return HistorySteps(keys, evidence);
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
  std::vector<PoolEvaluation> evaluations;
  evaluations.reserve(ordered.size());
  for (const Pool* pool : ordered) {
    evaluations.push_back(EvaluatePool(*pool, &ctx));
  }
  const std::optional<Candidate> fallback =
      PlanRiskFallback(evaluations, request.constraints.objective);
  const Candidate* fallback_ptr = fallback ? &*fallback : nullptr;
  for (PoolEvaluation& evaluation : evaluations) {
    PoolVerdict verdict = ChooseForPool(&evaluation, fallback_ptr, ctx);
    if (verdict.rejection) {
      result.rejections.push_back(*std::move(verdict.rejection));
    } else {
      result.candidates.push_back(*std::move(verdict.candidate));
    }
  }
  MarkOverBought(skus, &result.candidates);
  RankCandidates(request.constraints.objective, &result.candidates,
                 fallback_ptr);
  MarkEvalStatus(request, pools, evidence, &result.candidates);
  if (!result.candidates.empty()) {
    result.eval_requirement = result.candidates.front().eval_requirement;
    result.eval_status = result.candidates.front().eval_status;
    if (ctx.open.any()) result.recipe = result.candidates.front().recipe;
  }
  result.recipe_key = RecipeKey(result.recipe);
  result.predicted_memory =
      PredictPeakMemory(result.recipe, *arch, DefaultMemoryModelConstants());
  result.bake_off = ProposeBakeOff(
      request,
      request.total_steps + ClassHistorySteps(result.candidates, evidence),
      &result.candidates);
  return result;
}

}  // namespace placement::core
