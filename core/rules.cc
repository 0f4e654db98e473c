#include "core/rules.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "core/step_time_model.h"

namespace placement::core {

ExactSkuResult CheckExactSku(const std::string& sku_id,
                             const std::vector<GpuSku>& catalog) {
  ExactSkuResult result;
  absl::StatusOr<GpuSku> sku = ResolveSku(sku_id, catalog);
  if (sku.ok()) {
    result.sku = *std::move(sku);
  } else {
    result.rejection =
        RuleRejection{kExactSkuRule, std::string(sku.status().message())};
  }
  return result;
}

FitVerdict CheckFitWithoutOffload(double predicted_peak_gb,
                                  bool optimizer_may_page_to_cpu,
                                  const GpuSku& sku,
                                  const EvidenceStats* measured,
                                  double headroom_fraction) {
  FitVerdict v;
  v.measured = measured != nullptr && measured->p95_peak_memory_gb > 0;
  v.peak_gb = v.measured ? measured->p95_peak_memory_gb : predicted_peak_gb;
  v.headroom_gb = sku.memory_gb - v.peak_gb;
  const double needed = v.peak_gb + headroom_fraction * sku.memory_gb;
  if (measured != nullptr && measured->offload_share > 0) {
    v.reason = absl::StrFormat(
        "%.0f%% of the measured runs on %s needed CPU/NVMe offload: an "
        "offloaded run is a miss, not a fit",
        100 * measured->offload_share, sku.id);
    return v;
  }
  if (optimizer_may_page_to_cpu) {
    v.reason =
        "a paged optimizer may page its states to CPU RAM, which is "
        "offload; use AdamW or 8-bit AdamW to prove an on-GPU fit";
    return v;
  }
  if (needed > sku.memory_gb) {
    v.reason = absl::StrFormat(
        "%s peak %.1f GB + %.0f%% headroom does not fit %s's %.0f GB",
        v.measured ? "measured p95" : "predicted", v.peak_gb,
        100 * headroom_fraction, sku.id, sku.memory_gb);
    return v;
  }
  v.fits = true;
  v.reason = absl::StrFormat("%s peak %.1f GB leaves %.1f GB of %.0f GB",
                             v.measured ? "measured p95" : "predicted",
                             v.peak_gb, v.headroom_gb, sku.memory_gb);
  return v;
}

std::optional<std::string> CheckOverBought(double peak_gb, const GpuSku& sku,
                                           bool smaller_card_fits) {
  const double idle = sku.memory_gb - peak_gb;
  if (idle > sku.memory_gb / 2 && smaller_card_fits) {
    return absl::StrFormat(
        "%s: %s would leave %.0f of %.0f GB idle and a smaller card fits; "
        "this job over-buys the card",
        kOverBoughtRule, sku.id, idle, sku.memory_gb);
  }
  return std::nullopt;
}

std::optional<RuleRejection> CheckCollectivesNeedFabric(const Recipe& r,
                                                        const Pool& pool,
                                                        const GpuSku& sku) {
  if (r.gpu_count <= 1) return std::nullopt;
  const bool nvlink = CollectivesUseNvlink(sku, pool, r.gpu_count);
  if (nvlink) return std::nullopt;
  std::string link;
  if (pool.gpus_per_node > 0 && r.gpu_count > pool.gpus_per_node) {
    link = absl::StrCat("spans nodes of ", pool.gpus_per_node, " GPUs");
  } else if (pool.fabric == Fabric::kNvlink) {
    link = absl::StrCat("has ", sku.id,
                        " bridged in NVLink pairs only, so a group of ",
                        r.gpu_count, " crosses PCIe");
  } else {
    link = "is PCIe-only";
  }
  if (ShardsModel(r)) {
    return RuleRejection{
        kCollectivesNeedFabricRule,
        absl::StrCat(ParallelismName(r.parallelism), " over ", r.gpu_count,
                     " GPUs (tp=", r.tensor_parallel_degree,
                     ", pp=", r.pipeline_parallel_degree,
                     ") opens collectives in every step, but pool ", pool.name,
                     " ", link, "; move it to an NVLink/NVSwitch pool")};
  }
  if (r.gpu_count > 2) {
    return RuleRejection{
        kCollectivesNeedFabricRule,
        absl::StrCat("data parallel over ", r.gpu_count,
                     " GPUs without NVLink: "
                     "pool ",
                     pool.name, " ", link,
                     "; off NVLink only one GPU or a pair is allowed")};
  }
  return std::nullopt;
}

EvidenceChoice ChooseEvidence(const EvidenceStats* measured,
                              const TransferredEvidence* transferred) {
  EvidenceChoice c;
  if (measured != nullptr && measured->runs > 0) {
    c.basis = EvidenceBasis::kMeasured;
    c.runs = measured->runs;
    c.confidence = measured->successful_runs >= 3 ? Confidence::kHigh
                                                  : Confidence::kMedium;
  } else if (transferred != nullptr) {
    c.basis = EvidenceBasis::kTransferred;
    c.runs = transferred->stats.runs;
    c.confidence = transferred->stats.successful_runs >= 3 ? Confidence::kMedium
                                                           : Confidence::kLow;
  }
  return c;
}

std::optional<double> GpuHoursPerSuccessfulStep(const EvidenceStats& s) {
  if (s.steps_succeeded <= 0) return std::nullopt;
  return s.gpu_hours / s.steps_succeeded;
}

std::optional<RuleRejection> CheckRetriesCostMoney(const EvidenceStats& s) {
  if (s.runs > 0 && s.steps_succeeded <= 0) {
    return RuleRejection{
        kRetriesCostMoneyRule,
        absl::StrFormat("%d measured run(s) spent %.1f GPU-hours without one "
                        "successful step",
                        s.runs, s.gpu_hours)};
  }
  return std::nullopt;
}

std::optional<RuleRejection> CheckTrainingStaysOffServingPools(
    const Pool& pool) {
  if (pool.purpose != PoolPurpose::kTraining) {
    return RuleRejection{
        kTrainingStaysOffServingPoolsRule,
        absl::StrCat("pool ", pool.name, " is a ",
                     PoolPurposeName(pool.purpose),
                     " pool: fine-tunes never take serving capacity")};
  }
  if (!pool.exclusive) {
    return RuleRejection{
        kTrainingStaysOffServingPoolsRule,
        absl::StrCat("pool ", pool.name,
                     " is not exclusive: its cards are time-sliced with "
                     "other tenants")};
  }
  return std::nullopt;
}

std::optional<RuleRejection> CheckQuota(const Recipe& r, const Pool& pool,
                                        int max_gpus) {
  if (r.gpu_count > pool.gpu_quota) {
    return RuleRejection{
        kQuotaRule,
        absl::StrCat("the job needs ", r.gpu_count, " GPUs but pool ",
                     pool.name, " grants a quota of ", pool.gpu_quota)};
  }
  if (r.gpu_count > pool.total_gpus()) {
    return RuleRejection{kQuotaRule, absl::StrCat("the job needs ", r.gpu_count,
                                                  " GPUs but pool ", pool.name,
                                                  " has ", pool.total_gpus())};
  }
  if (max_gpus > 0 && r.gpu_count > max_gpus) {
    return RuleRejection{
        kQuotaRule,
        absl::StrCat("the job needs ", r.gpu_count,
                     " GPUs, above the request's max_gpus of ", max_gpus)};
  }
  return std::nullopt;
}

std::optional<std::string> CheckServeWhatYouEvaluated(
    const Recipe& r, const std::string& training_sku_id,
    const std::string& serving_sku_id, Precision serving_precision) {
  const bool other_sku = serving_sku_id != training_sku_id;
  const bool other_precision = serving_precision != Precision::kUnspecified &&
                               serving_precision != r.precision;
  if (!other_sku && !other_precision) return std::nullopt;
  std::string why;
  if (other_sku) {
    why = absl::StrCat("trained on ", training_sku_id, ", served on ",
                       serving_sku_id);
  }
  if (other_precision) {
    absl::StrAppend(&why, why.empty() ? "" : "; ", "trained in ",
                    PrecisionName(r.precision), ", served in ",
                    PrecisionName(serving_precision));
  }
  return absl::StrCat("export the model and run a production-like eval on ",
                      serving_sku_id, " in ",
                      PrecisionName(serving_precision == Precision::kUnspecified
                                        ? r.precision
                                        : serving_precision),
                      " before serving (", why, ")");
}

const char* EvidenceBasisName(EvidenceBasis basis) {
  switch (basis) {
    case EvidenceBasis::kMeasured:
      return "MEASURED";
    case EvidenceBasis::kTransferred:
      return "TRANSFERRED";
    case EvidenceBasis::kEstimated:
      return "ESTIMATED";
    case EvidenceBasis::kUnspecified:
      break;
  }
  return "UNSPECIFIED";
}

const char* ConfidenceName(Confidence confidence) {
  switch (confidence) {
    case Confidence::kLow:
      return "LOW";
    case Confidence::kMedium:
      return "MEDIUM";
    case Confidence::kHigh:
      return "HIGH";
    case Confidence::kUnspecified:
      break;
  }
  return "UNSPECIFIED";
}

}  // namespace placement::core
