#include "core/plan/planner.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <tuple>
#include <unordered_map>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "core/field_violation.h"
#include "core/models/step_time_model.h"
#include "core/plan/configuration_search.h"

namespace placement::core {
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
};

int64_t CostMicros(double gpu_hours, int64_t rate_micros) {
  return static_cast<int64_t>(std::llround(gpu_hours * rate_micros));
}

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

bool Measured(const Candidate& c) {
  return c.basis == EvidenceBasis::kMeasured;
}

double NominalValue(const Candidate& c, Objective objective) {
  return objective == Objective::kShortestTime
             ? absl::ToDoubleSeconds(c.expected_wall_time)
             : static_cast<double>(c.expected_cost_micros);
}

std::string DescribeValue(double value, Objective objective) {
  if (objective == Objective::kShortestTime) {
    return absl::FormatDuration(absl::Seconds(std::round(value)));
  }
  return absl::StrFormat("%.2f", value / 1e6);
}

}  // namespace

FieldViolations ValidatePlanRequest(const PlanRequest& request) {
  FieldViolations v =
      ValidateRecipe(NormalizeRecipe(ValidationProbe(request.recipe)));
  if (request.total_steps < 1) {
    v.push_back({"total_steps", "must be at least 1"});
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

double RankingValue(const Candidate& c, Objective objective) {
  const double nominal = NominalValue(c, objective);
  if (Measured(c) || c.step_time_s <= 0) return nominal;
  return nominal * c.step_time_s_band.high / c.step_time_s;
}

ConfigurationOutcome EvaluateConfiguration(const PlanRequest& request,
                                           const Recipe& recipe,
                                           const ModelArchitecture& arch,
                                           const MemoryBreakdown& predicted,
                                           const Pool& pool, const GpuSku& sku,
                                           const ConfigurationEvidence& ev,
                                           bool explain) {
  const PlanConstraints& c = request.constraints;
  ConfigurationOutcome out;
  out.recipe = recipe;
  out.predicted_memory = predicted;
  auto reject = [&](const char* rule, std::string reason) {
    out.rejection = RuleRejection{rule, explain ? std::move(reason) : ""};
    return out;
  };
  if (auto r = CheckQuota(recipe, pool, c.max_gpus)) {
    return reject(kQuotaRule, r->reason);
  }
  if (auto r = CheckCollectivesNeedFabric(recipe, pool, sku)) {
    return reject(kCollectivesNeedFabricRule, r->reason);
  }
  if (auto r = CheckInterNodeFabric(recipe, pool)) {
    return reject(kInterNodeFabricRule, r->reason);
  }
  const EvidenceStats* measured = ev.measured;
  const TransferredEvidence* transferred = ev.transferred;
  if (measured != nullptr) {
    if (auto r = CheckRetriesCostMoney(*measured)) {
      return reject(kRetriesCostMoneyRule, r->reason);
    }
  }
  // Step time and GPU-hours come from evidence on this SKU only; another
  // SKU's runs give memory, and their step times reach this SKU through the
  // fleet model.
  const EvidenceStats* same_sku =
      measured != nullptr ? measured
                          : (transferred ? &transferred->stats : nullptr);
  const CrossSkuMemory* cross = same_sku == nullptr ? ev.cross_sku : nullptr;
  EvidenceStats cross_stats;
  if (cross != nullptr) {
    cross_stats = cross->source;
    cross_stats.peak_memory_gb = cross->peak_gb;
    cross_stats.max_peak_memory_gb =
        std::max(cross->peak_gb,
                 cross_stats.max_peak_memory_gb + cross->context_adjustment_gb);
  }
  const EvidenceStats* observed =
      same_sku != nullptr ? same_sku : (cross ? &cross_stats : nullptr);
  const double memory_scale = observed == nullptr ? ev.memory_scale : 1;
  out.fit = CheckFitWithoutOffload(
      out.predicted_memory.total_gb * memory_scale,
      out.predicted_memory.optimizer_may_page_to_cpu, sku, observed,
      c.headroom_fraction, measured == nullptr && observed != nullptr, explain);
  if (!out.fit.fits) {
    if (!explain) return reject(kFitWithoutOffloadRule, "");
    return reject(kFitWithoutOffloadRule,
                  absl::StrCat(out.fit.reason, " (",
                               DescribeBreakdown(out.predicted_memory), ")"));
  }

  Candidate& cand = out.candidate;
  cand.pool_name = pool.name;
  cand.sku_id = sku.id;
  cand.gpu_count = recipe.gpu_count;
  cand.fit = out.fit.fit;
  cand.fits = true;
  cand.peak_memory_gb = out.fit.peak_gb;
  cand.peak_memory_gb_band = out.fit.band;
  cand.headroom_gb = out.fit.headroom_gb;
  const EvidenceChoice choice = ChooseEvidence(measured, transferred);
  cand.basis = choice.basis;
  cand.confidence = choice.confidence;
  cand.evidence_runs = choice.runs;
  if (cross != nullptr) {
    cand.basis = EvidenceBasis::kTransferred;
    cand.confidence = cross->source.successful_runs >= 3 ? Confidence::kMedium
                                                         : Confidence::kLow;
    cand.evidence_runs = cross->source.runs;
    cand.transferred_from_recipe_key = cross->recipe_key;
    cand.transferred_from_sku_id = cross->from_sku_id;
  }
  cand.prior_peak_memory_gb = out.predicted_memory.total_gb;
  double per_step_gpu_hours = 0;
  if (same_sku != nullptr && same_sku->gpu_hours_per_successful_step) {
    per_step_gpu_hours = *same_sku->gpu_hours_per_successful_step;
    cand.step_time_s = same_sku->median_step_time_s > 0
                           ? same_sku->median_step_time_s
                           : per_step_gpu_hours * 3600 / recipe.gpu_count;
    cand.step_time_s_band =
        measured != nullptr
            ? Band{cand.step_time_s,
                   std::max(cand.step_time_s, same_sku->p95_step_time_s)}
            : StepTimeBand(cand.step_time_s);
    if (explain) {
      cand.prior_step_time_s =
          EstimateStepTime(recipe, arch, sku, pool).step_time_s;
    }
  } else {
    const StepTimeEstimate est = EstimateStepTime(recipe, arch, sku, pool);
    cand.prior_step_time_s = est.step_time_s;
    const FleetStepTime* fleet =
        same_sku == nullptr ? ev.fleet_step_time : nullptr;
    cand.step_time_s = est.step_time_s * (fleet ? fleet->factor : 1);
    per_step_gpu_hours = cand.step_time_s * recipe.gpu_count / 3600;
    cand.step_time_s_band = fleet ? Band{cand.step_time_s * fleet->band_low,
                                         cand.step_time_s * fleet->band_high}
                                  : StepTimeBand(cand.step_time_s);
    if (cross == nullptr) {
      cand.basis = EvidenceBasis::kEstimated;
      cand.confidence = Confidence::kLow;
    }
    if (explain && fleet != nullptr) {
      cand.reasons.push_back(absl::StrFormat(
          "%s: step time %.2f s (band %.2f-%.2f s) = the analytic %.2f s x "
          "%.2f from the fleet model (log step time over recipe x SKU, "
          "fitted to %d measured cells; %s; %s)",
          kEvidenceBeatsEstimatesRule, cand.step_time_s,
          cand.step_time_s_band.low, cand.step_time_s_band.high,
          est.step_time_s, fleet->factor, fleet->cells,
          fleet->recipe_measured
              ? absl::StrCat("this recipe measured on ",
                             absl::StrJoin(fleet->recipe_skus, ", "))
              : "this recipe never measured",
          fleet->sku_measured
              ? absl::StrCat(sku.id,
                             "'s ratio learned from the recipes "
                             "measured on it")
              : absl::StrCat(sku.id, " never measured: its prior ratio")));
    } else if (explain) {
      std::string network;
      if (est.inter_node_bandwidth_gb_s > 0) {
        network = absl::StrFormat(", across nodes at %.2f GB/s per GPU (%s)",
                                  est.inter_node_bandwidth_gb_s,
                                  InterNodeBandwidthOf(pool).source);
      }
      cand.reasons.push_back(absl::StrFormat(
          "%s: step time %.2f s (band %.2f-%.2f s) estimated from %.0f TFLOP/s "
          "x %.0f%% efficiency (fitted to published runs; compute %.2f s, "
          "exposed communication %.2f s%s)",
          kEvidenceBeatsEstimatesRule, est.step_time_s,
          cand.step_time_s_band.low, cand.step_time_s_band.high,
          PeakDenseTflops(recipe, sku), 100 * est.efficiency, est.compute_s,
          est.exposed_communication_s, network));
    }
  }
  cand.gpu_hours_per_1k_successful_steps = per_step_gpu_hours * 1000;
  cand.expected_gpu_hours = per_step_gpu_hours * request.total_steps;
  cand.expected_cost_micros = CostMicros(
      cand.expected_gpu_hours, pool.internal_rate_micros_per_gpu_hour);
  if (pool.list_price_micros_per_gpu_hour) {
    cand.list_price_cost_micros = CostMicros(
        cand.expected_gpu_hours, *pool.list_price_micros_per_gpu_hour);
  }
  cand.expected_wall_time =
      absl::Seconds(cand.expected_gpu_hours * 3600 / recipe.gpu_count);
  if (c.deadline && cand.expected_wall_time > *c.deadline) {
    if (!explain) return reject(kDeadlineRule, "");
    return reject(kDeadlineRule,
                  absl::StrCat("expected wall time ",
                               absl::FormatDuration(cand.expected_wall_time),
                               " exceeds the deadline of ",
                               absl::FormatDuration(*c.deadline)));
  }
  if (!explain) return out;
  cand.recipe = recipe;

  cand.reasons.push_back(
      absl::StrCat(kFitWithoutOffloadRule, ": ", out.fit.reason));
  if (observed == nullptr && memory_scale != 1) {
    cand.reasons.push_back(absl::StrFormat(
        "%s: predicted memory x%.3f, the fleet's re-fit of the memory model "
        "for %s recipes (median of measured / predicted over the uploaded "
        "runs, shrunk toward the published fit)",
        kEvidenceBeatsEstimatesRule, memory_scale,
        TrainingFrameworkName(recipe.framework)));
  }
  if (cand.basis == EvidenceBasis::kMeasured) {
    cand.reasons.push_back(absl::StrFormat(
        "%s: %d measured run(s), %d succeeded; %.4f GPU-hours per "
        "successful step including failures and retries",
        kRetriesCostMoneyRule, measured->runs, measured->successful_runs,
        per_step_gpu_hours));
    if (measured->failure_share > 0 || measured->retry_rate > 0) {
      cand.warnings.push_back(
          absl::StrFormat("%s: %.0f%% of runs failed, %.2f retries per run",
                          kRetriesCostMoneyRule, 100 * measured->failure_share,
                          measured->retry_rate));
    }
  } else if (cross != nullptr) {
    cand.reasons.push_back(absl::StrFormat(
        "%s: peak memory TRANSFERRED from the same recipe measured on %s "
        "(p95 %.1f GB over %d successful run(s), %+.1f GB for the cards' "
        "context overhead); step time not measured on %s",
        kEvidenceBeatsEstimatesRule, cross->from_sku_id, cross->source_peak_gb,
        cross->source.successful_runs, cross->context_adjustment_gb, sku.id));
  } else if (cand.basis == EvidenceBasis::kTransferred) {
    cand.transferred_from_recipe_key = transferred->source.stats.recipe_key;
    cand.reasons.push_back(absl::StrFormat(
        "%s: TRANSFERRED from %s (%s) with step time x%.2f and memory "
        "x%.2f",
        kEvidenceBeatsEstimatesRule, transferred->source.stats.recipe_key,
        DescribeSettings(transferred->source.recipe),
        transferred->step_time_scale, transferred->memory_scale));
  } else {
    cand.warnings.push_back(absl::StrCat(
        kEvidenceBeatsEstimatesRule, ": ESTIMATED, no run of this recipe on ",
        sku.id, " yet; low confidence"));
  }
  for (std::string& w : CollectiveFabricWarnings(recipe, pool, sku)) {
    cand.warnings.push_back(std::move(w));
  }
  if (auto w = InterNodeFabricWarning(recipe, pool)) {
    cand.warnings.push_back(*std::move(w));
  }
  if (request.serving) {
    cand.eval_requirement = CheckServeWhatYouEvaluated(
        recipe, sku.id, request.serving->sku_id, request.serving->precision);
  }
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

void RankCandidates(Objective objective, std::vector<Candidate>* candidates) {
  const bool by_time = objective == Objective::kShortestTime;
  auto key = [&](const Candidate& c) {
    return std::make_tuple(c.fit != Fit::kFits, RankingValue(c, objective),
                           by_time
                               ? static_cast<double>(c.expected_cost_micros)
                               : absl::ToDoubleSeconds(c.expected_wall_time),
                           c.pool_name);
  };
  std::stable_sort(
      candidates->begin(), candidates->end(),
      [&](const Candidate& a, const Candidate& b) { return key(a) < key(b); });
  const char* what = by_time ? "wall time" : "cost";
  for (size_t i = 0; i < candidates->size(); ++i) {
    Candidate& c = (*candidates)[i];
    c.rank = static_cast<int>(i) + 1;
    if (Measured(c)) continue;
    const double nominal = NominalValue(c, objective);
    const double pessimistic = RankingValue(c, objective);
    // The first measured candidate below it, and the last one above it that
    // it would beat on its optimistic estimate.
    for (size_t j = i + 1; j < candidates->size(); ++j) {
      const Candidate& m = (*candidates)[j];
      if (!Measured(m) || m.fit != c.fit) continue;
      c.reasons.push_back(absl::StrFormat(
          "%s: %s ranks above MEASURED pool %s because it still wins at its "
          "pessimistic edge (%s %s at the upper step-time band vs %s "
          "measured)",
          kEvidenceBeatsEstimatesRule, EvidenceBasisName(c.basis), m.pool_name,
          what, DescribeValue(pessimistic, objective),
          DescribeValue(NominalValue(m, objective), objective)));
      break;
    }
    // The measured candidate ranked just above it that its optimistic
    // estimate would beat, if any (one reason, not one per measured pool).
    for (size_t j = i; j-- > 0;) {
      const Candidate& m = (*candidates)[j];
      if (!Measured(m) || m.fit != c.fit) continue;
      const double measured = NominalValue(m, objective);
      if (nominal >= measured) break;
      c.reasons.push_back(absl::StrFormat(
          "%s: ranks after MEASURED pool %s: %s only by its optimistic "
          "estimate (%s %s vs %s measured; %s at the upper step-time band)",
          kEvidenceBeatsEstimatesRule, m.pool_name,
          by_time ? "faster" : "cheaper", what,
          DescribeValue(nominal, objective), DescribeValue(measured, objective),
          DescribeValue(pessimistic, objective)));
      break;
    }
  }
}

std::optional<BakeOff> ProposeBakeOff(const PlanRequest& request,
                                      std::vector<Candidate>* candidates) {
  BakeOff bake_off;
  for (size_t i = 0; i < candidates->size(); ++i) {
    Candidate& cand = (*candidates)[i];
    const bool borderline = cand.fit == Fit::kBorderline;
    const bool leading_unmeasured =
        i < static_cast<size_t>(kLeadingCandidates) && !Measured(cand);
    if (!borderline && !leading_unmeasured) continue;
    cand.measure_first = true;
    const bool seen = std::any_of(
        bake_off.runs.begin(), bake_off.runs.end(), [&](const BakeOffRun& r) {
          return r.sku_id == cand.sku_id && r.recipe_key == cand.recipe_key;
        });
    if (!seen) {
      bake_off.runs.push_back({cand.pool_name, cand.sku_id, cand.gpu_count,
                               cand.recipe_key, borderline});
    }
  }
  if (bake_off.runs.empty()) return std::nullopt;
  const Candidate* first = nullptr;
  for (const Candidate& c : *candidates) {
    if (c.measure_first) {
      first = &c;
      break;
    }
  }
  bake_off.recipe_key = first->recipe_key;
  bake_off.recipe = first->recipe;
  bake_off.settings = DescribeSettings(first->recipe);
  bake_off.measure = {"peak memory per GPU", "step time (p50, p95)",
                      "steps attempted and succeeded, retries, failures",
                      "whether CPU/NVMe offload was needed",
                      "which link the collectives used (NVLink, PCIe, host "
                      "memory)"};
  const size_t borderline = static_cast<size_t>(
      std::count_if(bake_off.runs.begin(), bake_off.runs.end(),
                    [](const BakeOffRun& r) { return r.borderline; }));
  const size_t unmeasured = bake_off.runs.size() - borderline;
  std::string what;
  if (unmeasured > 0) {
    what =
        absl::StrCat(unmeasured, " of the leading candidates ",
                     unmeasured == 1 ? "has" : "have", " no measured run of ",
                     unmeasured == 1 ? "its" : "their", " recipe");
  }
  if (borderline > 0) {
    absl::StrAppend(&what, what.empty() ? "" : "; ", borderline,
                    borderline == 1 ? " candidate has" : " candidates have",
                    " a BORDERLINE fit to measure first");
  }
  bake_off.reason = absl::StrCat(
      kEvidenceBeatsEstimatesRule, ": ", what, "; run recipe ",
      bake_off.recipe_key, bake_off.runs.size() == 1 ? " there" : " on each",
      " at equal sequence length, rank and precision");
  if (request.serving) {
    bake_off.eval_requirement = CheckServeWhatYouEvaluated(
        bake_off.recipe, bake_off.runs.front().sku_id, request.serving->sku_id,
        request.serving->precision);
  }
  return bake_off;
}

absl::StatusOr<PlanResult> Plan(const PlanRequest& request,
                                const std::vector<Pool>& pools,
                                const std::vector<GpuSku>& skus,
                                const EvidenceSource& evidence,
                                const FleetModel* fleet) {
  const FieldViolations violations = ValidatePlanRequest(request);
  if (!violations.empty()) return InvalidArgumentWithViolations(violations);
  const OpenSettings open = OpenSettingsOf(request.recipe);
  PlanResult result;
  result.recipe = NormalizeRecipe(request.recipe);
  absl::StatusOr<ModelArchitecture> arch = ResolveArchitecture(result.recipe);
  if (!arch.ok()) return arch.status();
  const PlanConstraints& c = request.constraints;
  const Objective objective = c.objective;

  std::vector<const Pool*> ordered;
  ordered.reserve(pools.size());
  for (const Pool& pool : pools) ordered.push_back(&pool);
  std::sort(ordered.begin(), ordered.end(),
            [](const Pool* a, const Pool* b) { return a->name < b->name; });

  std::unordered_map<std::string, SkuView> views;
  // Pools of one SKU and shape share their configurations, with their keys,
  // predictions and evidence.
  struct ShapeEntry {
    std::vector<Recipe> configurations;
    std::vector<std::string> keys;
    std::vector<MemoryBreakdown> predicted;
    std::vector<KeyEvidence> evidence;
  };
  std::unordered_map<std::string, ShapeEntry> shapes;
  // Keys and predictions depend only on the layout, not on the pool.
  using LayoutKey = std::tuple<int, int, int, int, int, int>;
  std::map<LayoutKey, std::pair<std::string, MemoryBreakdown>> by_layout;
  auto reject = [&](const Pool& pool, const char* rule, std::string reason) {
    result.rejections.push_back(
        {pool.name, pool.sku_id, rule, std::move(reason)});
  };
  std::vector<ConfigurationOutcome> outcomes;
  // Each recipe key's statistics on every catalog SKU, looked up once
  // through the evidence's recipe-key index (one ordered visit of the SKUs
  // that measured the key, not one lookup per catalog SKU).
  std::unordered_map<std::string,
                     std::vector<std::pair<const GpuSku*, EvidenceStats>>>
      on_other_skus;
  auto measured_elsewhere = [&](const std::string& key) -> const auto& {
    auto [found, fresh] = on_other_skus.try_emplace(key);
    if (fresh) {
      for (KeyedEvidence& measured : evidence.FindAcrossSkus(key)) {
        // SKUs outside the catalog are skipped, as a lookup per catalog
        // SKU would.
        auto other = std::find_if(
            skus.begin(), skus.end(),
            [&](const GpuSku& s) { return s.id == measured.stats.sku_id; });
        if (other != skus.end()) {
          found->second.emplace_back(&*other, std::move(measured.stats));
        }
      }
    }
    return found->second;
  };
  const double memory_scale =
      fleet != nullptr ? fleet->PlanMemoryScale(result.recipe.framework) : 1;

  for (const Pool* pool_ptr : ordered) {
    const Pool& pool = *pool_ptr;
    std::string why;
    if (!Allowed(pool, c, &why)) {
      reject(pool, kConstraintsRule, std::move(why));
      continue;
    }
    if (auto r = CheckTrainingStaysOffServingPools(pool)) {
      reject(pool, kTrainingStaysOffServingPoolsRule, r->reason);
      continue;
    }
    if (!open.gpu_count) {
      if (auto r = CheckQuota(result.recipe, pool, c.max_gpus)) {
        reject(pool, kQuotaRule, r->reason);
        continue;
      }
    } else if (GpuLimit(pool, c.max_gpus) < 1) {
      reject(pool, kQuotaRule,
             absl::StrCat("pool ", pool.name, " grants a quota of ",
                          pool.gpu_quota, " GPUs"));
      continue;
    }
    SkuView& view = views[pool.sku_id];
    if (!view.looked_up) {
      view.looked_up = true;
      view.resolved = CheckExactSku(pool.sku_id, skus);
      if (view.resolved.sku) {
        view.similar = evidence.FindSimilar(
            result.recipe.model, result.recipe.method, view.resolved.sku->id);
      }
    }
    if (view.resolved.rejection) {
      reject(pool, kExactSkuRule, view.resolved.rejection->reason);
      continue;
    }
    const GpuSku& sku = *view.resolved.sku;

    const std::string shape =
        absl::StrCat(sku.id, "/", pool.gpus_per_node, "/", pool.node_count, "/",
                     pool.gpu_quota, "/", static_cast<int>(pool.fabric));
    auto [it, inserted] = shapes.try_emplace(shape);
    ShapeEntry& entry = it->second;
    if (inserted) {
      entry.configurations =
          EnumerateConfigurations(request.recipe, result.recipe,
                                  arch->num_layers, pool, sku, c.max_gpus);
      for (const Recipe& configuration : entry.configurations) {
        const LayoutKey layout{
            configuration.gpu_count,
            static_cast<int>(configuration.parallelism),
            configuration.tensor_parallel_degree,
            configuration.pipeline_parallel_degree,
            configuration.data_parallel_degree,
            static_cast<int>(configuration.activation_checkpointing)};
        auto [known, fresh] = by_layout.try_emplace(layout);
        if (fresh) {
          known->second = {RecipeKey(configuration),
                           PredictPeakMemory(configuration, *arch,
                                             DefaultMemoryModelConstants())};
        }
        entry.keys.push_back(known->second.first);
        entry.predicted.push_back(known->second.second);
        KeyEvidence& ev = entry.evidence.emplace_back();
        ev.measured = evidence.Find(entry.keys.back(), sku.id);
        if (!ev.measured) {
          ev.transferred = BestTransfer(view.similar, configuration);
          if (!ev.transferred) {
            ev.cross_sku = CrossSkuMemoryTransfer(
                measured_elsewhere(entry.keys.back()), sku);
          }
          if (fleet != nullptr) {
            ev.fleet_step_time = fleet->StepTime(entry.keys.back(), sku.id);
          }
        }
      }
    }
    const std::vector<Recipe>& configurations = entry.configurations;
    if (configurations.empty()) {
      reject(pool, kQuotaRule,
             absl::StrCat("no valid configuration of the recipe within the ",
                          GpuLimit(pool, c.max_gpus), " GPUs pool ", pool.name,
                          " may grant"));
      continue;
    }
    // A single configuration is explained at once; a search explains only
    // the configuration it keeps (and the one it reports).
    const bool search = configurations.size() > 1;
    auto evaluate = [&](size_t i, bool explain) {
      const KeyEvidence& ev = entry.evidence[i];
      ConfigurationOutcome o = EvaluateConfiguration(
          request, configurations[i], *arch, entry.predicted[i], pool, sku,
          {ev.measured ? &*ev.measured : nullptr,
           ev.transferred ? &*ev.transferred : nullptr,
           ev.cross_sku ? &*ev.cross_sku : nullptr,
           ev.fleet_step_time ? &*ev.fleet_step_time : nullptr, memory_scale},
          explain);
      o.recipe_key = entry.keys[i];
      o.candidate.recipe_key = entry.keys[i];
      return o;
    };
    outcomes.clear();
    for (size_t i = 0; i < configurations.size(); ++i) {
      outcomes.push_back(evaluate(i, !search));
    }
    const size_t chosen = ChooseConfiguration(outcomes, objective);
    if (search) outcomes[chosen] = evaluate(chosen, true);
    ConfigurationOutcome& best = outcomes[chosen];
    if (best.rejection) {
      std::string reason = best.rejection->reason;
      if (open.any() && outcomes.size() > 1) {
        reason = absl::StrCat("none of ", outcomes.size(),
                              " configurations is viable; the one needing "
                              "the least memory, ",
                              DescribeConfiguration(best.recipe), ": ", reason);
      }
      reject(pool, best.rejection->rule.c_str(), std::move(reason));
      continue;
    }
    Candidate cand = std::move(best.candidate);
    if (open.any()) {
      int viable = 0;
      for (const auto& o : outcomes) viable += o.rejection ? 0 : 1;
      cand.reasons.insert(
          cand.reasons.begin(),
          absl::StrCat(
              "configuration: chose ", DescribeConfiguration(cand.recipe),
              cand.fit == Fit::kFits
                  ? (objective == Objective::kShortestTime
                         ? ", the fastest that FITS"
                         : ", the cheapest that FITS")
                  : ", none FITS: the BORDERLINE one with the least peak "
                    "memory per GPU",
              " of ", viable, " viable out of ", outcomes.size(),
              " evaluated; ",
              static_cast<int64_t>(cand.recipe.sequence_length) *
                  cand.recipe.micro_batch_size *
                  cand.recipe.gradient_accumulation_steps *
                  cand.recipe.data_parallel_degree,
              " tokens per optimizer step (micro-batch and accumulation are "
              "per data-parallel replica, as torchrun and HF Trainer count "
              "them) (",
              open.gpu_count ? "GPU count " : "",
              open.parallelism ? "parallelism " : "",
              open.checkpointing ? "checkpointing " : "",
              "left open by the request)"));
      if (open.checkpointing && RecomputesActivations(cand.recipe)) {
        for (size_t i = 0; i < outcomes.size(); ++i) {
          const ConfigurationOutcome& o = outcomes[i];
          if (RecomputesActivations(o.recipe) ||
              o.recipe.gpu_count != cand.recipe.gpu_count ||
              o.recipe.parallelism != cand.recipe.parallelism ||
              o.recipe.tensor_parallel_degree !=
                  cand.recipe.tensor_parallel_degree) {
            continue;
          }
          cand.reasons.insert(
              cand.reasons.begin() + 1,
              absl::StrCat("activation checkpointing turned on by the "
                           "planner (the request left it open): without it ",
                           o.rejection ? o.rejection->reason : o.fit.reason));
          break;
        }
      }
    }
    result.candidates.push_back(std::move(cand));
  }

  MarkOverBought(skus, &result.candidates);
  RankCandidates(objective, &result.candidates);
  if (!result.candidates.empty()) {
    result.eval_requirement = result.candidates.front().eval_requirement;
    if (open.any()) result.recipe = result.candidates.front().recipe;
  }
  result.recipe_key = RecipeKey(result.recipe);
  result.predicted_memory =
      PredictPeakMemory(result.recipe, *arch, DefaultMemoryModelConstants());
  result.bake_off = ProposeBakeOff(request, &result.candidates);
  return result;
}

}  // namespace placement::core
