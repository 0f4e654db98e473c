#include "core/planner.h"

#include <algorithm>
#include <cmath>
#include <tuple>
#include <unordered_map>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "core/step_time_model.h"

namespace placement::core {
namespace {

// Per-SKU work shared by every pool of that SKU.
struct SkuView {
  ExactSkuResult resolved;
  std::optional<EvidenceStats> measured;
  std::optional<TransferredEvidence> transferred;
  bool looked_up = false;
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

}  // namespace

FieldViolations ValidatePlanRequest(const PlanRequest& request) {
  FieldViolations v = ValidateRecipe(NormalizeRecipe(request.recipe));
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

absl::StatusOr<PlanResult> Plan(const PlanRequest& request,
                                const std::vector<Pool>& pools,
                                const std::vector<GpuSku>& skus,
                                const EvidenceSource& evidence) {
  const FieldViolations violations = ValidatePlanRequest(request);
  if (!violations.empty()) {
    std::vector<std::string> parts;
    for (const FieldViolation& v : violations) {
      parts.push_back(absl::StrCat(v.field, ": ", v.description));
    }
    return absl::InvalidArgumentError(absl::StrJoin(parts, "; "));
  }
  PlanResult result;
  result.recipe = NormalizeRecipe(request.recipe);
  const Recipe& recipe = result.recipe;
  absl::StatusOr<ModelArchitecture> arch = ResolveArchitecture(recipe);
  if (!arch.ok()) return arch.status();
  result.recipe_key = RecipeKey(recipe);
  result.predicted_memory =
      PredictPeakMemory(recipe, *arch, DefaultMemoryModelConstants());
  const MemoryBreakdown& predicted = result.predicted_memory;
  const PlanConstraints& c = request.constraints;

  std::vector<const Pool*> ordered;
  ordered.reserve(pools.size());
  for (const Pool& pool : pools) ordered.push_back(&pool);
  std::sort(ordered.begin(), ordered.end(),
            [](const Pool* a, const Pool* b) { return a->name < b->name; });

  std::unordered_map<std::string, SkuView> views;
  std::vector<const GpuSku*> candidate_skus;  // parallel to candidates
  auto reject = [&](const Pool& pool, const char* rule, std::string reason) {
    result.rejections.push_back(
        {pool.name, pool.sku_id, rule, std::move(reason)});
  };

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
    if (auto r = CheckQuota(recipe, pool, c.max_gpus)) {
      reject(pool, kQuotaRule, r->reason);
      continue;
    }
    SkuView& view = views[pool.sku_id];
    if (!view.looked_up) {
      view.looked_up = true;
      view.resolved = CheckExactSku(pool.sku_id, skus);
      if (view.resolved.sku) {
        view.measured = evidence.Find(result.recipe_key, view.resolved.sku->id);
        if (!view.measured) {
          view.transferred =
              BestTransfer(evidence.FindSimilar(recipe.model, recipe.method,
                                                view.resolved.sku->id),
                           recipe);
        }
      }
    }
    if (view.resolved.rejection) {
      reject(pool, kExactSkuRule, view.resolved.rejection->reason);
      continue;
    }
    const GpuSku& sku = *view.resolved.sku;
    if (auto r = CheckCollectivesNeedFabric(recipe, pool, sku)) {
      reject(pool, kCollectivesNeedFabricRule, r->reason);
      continue;
    }
    const EvidenceStats* measured = view.measured ? &*view.measured : nullptr;
    const TransferredEvidence* transferred =
        view.transferred ? &*view.transferred : nullptr;
    if (measured != nullptr) {
      if (auto r = CheckRetriesCostMoney(*measured)) {
        reject(pool, kRetriesCostMoneyRule, r->reason);
        continue;
      }
    }
    const EvidenceStats* observed =
        measured != nullptr ? measured
                            : (transferred ? &transferred->stats : nullptr);
    const FitVerdict fit = CheckFitWithoutOffload(
        predicted.total_gb, predicted.optimizer_may_page_to_cpu, sku, observed,
        c.headroom_fraction);
    if (!fit.fits) {
      reject(pool, kFitWithoutOffloadRule,
             absl::StrCat(fit.reason, " (", DescribeBreakdown(predicted), ")"));
      continue;
    }

    Candidate cand;
    cand.pool_name = pool.name;
    cand.sku_id = sku.id;
    cand.gpu_count = recipe.gpu_count;
    cand.fits = true;
    cand.peak_memory_gb = fit.peak_gb;
    cand.headroom_gb = fit.headroom_gb;
    const EvidenceChoice choice = ChooseEvidence(measured, transferred);
    cand.basis = choice.basis;
    cand.confidence = choice.confidence;
    cand.evidence_runs = choice.runs;
    double per_step_gpu_hours = 0;
    if (observed != nullptr && observed->gpu_hours_per_successful_step) {
      per_step_gpu_hours = *observed->gpu_hours_per_successful_step;
    } else {
      const StepTimeEstimate est = EstimateStepTime(recipe, *arch, sku, pool);
      per_step_gpu_hours = est.step_time_s * recipe.gpu_count / 3600;
      cand.basis = EvidenceBasis::kEstimated;
      cand.confidence = Confidence::kLow;
      cand.reasons.push_back(absl::StrFormat(
          "%s: step time %.2f s estimated from %.0f TFLOP/s x %.0f%% MFU "
          "(compute %.2f s, exposed communication %.2f s)",
          kEvidenceBeatsEstimatesRule, est.step_time_s,
          PeakDenseTflops(recipe, sku), 100 * kAssumedMfu, est.compute_s,
          est.exposed_communication_s));
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
      reject(pool, kDeadlineRule,
             absl::StrCat("expected wall time ",
                          absl::FormatDuration(cand.expected_wall_time),
                          " exceeds the deadline of ",
                          absl::FormatDuration(*c.deadline)));
      continue;
    }

    cand.reasons.push_back(
        absl::StrCat(kFitWithoutOffloadRule, ": ", fit.reason));
    if (cand.basis == EvidenceBasis::kMeasured) {
      cand.reasons.push_back(absl::StrFormat(
          "%s: %d measured run(s), %d succeeded; %.4f GPU-hours per "
          "successful step including failures and retries",
          kRetriesCostMoneyRule, measured->runs, measured->successful_runs,
          per_step_gpu_hours));
      if (measured->failure_share > 0 || measured->retry_rate > 0) {
        cand.warnings.push_back(absl::StrFormat(
            "%s: %.0f%% of runs failed, %.2f retries per run",
            kRetriesCostMoneyRule, 100 * measured->failure_share,
            measured->retry_rate));
      }
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
    if (request.serving) {
      cand.eval_requirement = CheckServeWhatYouEvaluated(
          recipe, sku.id, request.serving->sku_id, request.serving->precision);
    }
    result.candidates.push_back(std::move(cand));
    candidate_skus.push_back(&sku);
  }

  // over_bought needs every fitting candidate.
  for (size_t i = 0; i < result.candidates.size(); ++i) {
    bool smaller_fits = false;
    for (size_t j = 0; j < result.candidates.size(); ++j) {
      if (candidate_skus[j]->memory_gb < candidate_skus[i]->memory_gb) {
        smaller_fits = true;
        break;
      }
    }
    if (auto w = CheckOverBought(result.candidates[i].peak_memory_gb,
                                 *candidate_skus[i], smaller_fits)) {
      result.candidates[i].warnings.push_back(*std::move(w));
    }
  }

  const bool by_time = c.objective == Objective::kShortestTime;
  std::stable_sort(result.candidates.begin(), result.candidates.end(),
                   [by_time](const Candidate& a, const Candidate& b) {
                     if (by_time) {
                       return std::tie(a.expected_wall_time,
                                       a.expected_cost_micros, a.pool_name) <
                              std::tie(b.expected_wall_time,
                                       b.expected_cost_micros, b.pool_name);
                     }
                     return std::tie(a.expected_cost_micros,
                                     a.expected_wall_time, a.pool_name) <
                            std::tie(b.expected_cost_micros,
                                     b.expected_wall_time, b.pool_name);
                   });
  for (size_t i = 0; i < result.candidates.size(); ++i) {
    result.candidates[i].rank = static_cast<int>(i) + 1;
  }
  if (!result.candidates.empty()) {
    result.eval_requirement = result.candidates.front().eval_requirement;
  }

  // The bake-off: the same recipe key on each leading SKU lacking
  // measurements (one pool per SKU, the best ranked).
  const size_t leading =
      std::min<size_t>(kLeadingCandidates, result.candidates.size());
  BakeOff bake_off;
  for (size_t i = 0; i < leading; ++i) {
    const Candidate& cand = result.candidates[i];
    if (cand.basis == EvidenceBasis::kMeasured) continue;
    const bool seen = std::any_of(
        bake_off.runs.begin(), bake_off.runs.end(),
        [&](const BakeOffRun& run) { return run.sku_id == cand.sku_id; });
    if (!seen) {
      bake_off.runs.push_back({cand.pool_name, cand.sku_id, cand.gpu_count});
    }
  }
  if (!bake_off.runs.empty()) {
    bake_off.recipe_key = result.recipe_key;
    bake_off.recipe = recipe;
    bake_off.settings = DescribeSettings(recipe);
    bake_off.measure = {"peak memory per GPU", "step time (p50, p95)",
                        "steps attempted and succeeded, retries, failures",
                        "whether CPU/NVMe offload was needed",
                        "which link the collectives used (NVLink, PCIe, host "
                        "memory)"};
    bake_off.reason = absl::StrCat(
        kEvidenceBeatsEstimatesRule, ": ", bake_off.runs.size(),
        bake_off.runs.size() == 1 ? " of the leading candidates has"
                                  : " of the leading candidates have",
        " no measured run of recipe ", result.recipe_key,
        "; run it on each at equal sequence length, rank and precision");
    if (request.serving) {
      bake_off.eval_requirement = CheckServeWhatYouEvaluated(
          recipe, bake_off.runs.front().sku_id, request.serving->sku_id,
          request.serving->precision);
    }
    result.bake_off = std::move(bake_off);
  }
  return result;
}

}  // namespace placement::core
