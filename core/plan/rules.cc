#include "core/plan/rules.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "core/models/band_calibration.h"
#include "core/models/oom_probability.h"
#include "core/models/step_time_model.h"

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

namespace {

// The fit verdict in words: the peak and its band against the card, and
// what the band says (held at `proven`, a ceiling, when given).
std::string FitReason(const FitVerdict& v, const char* source,
                      const GpuSku& sku, double reserve_gb,
                      const ProvenPeakCeiling* proven) {
  const std::string peak = absl::StrFormat(
      "%s peak %.1f GB (band %.1f-%.1f GB) on %s's %.1f GB usable (%.0f GB "
      "nominal) less %.1f GB reserve",
      source, v.peak_gb, v.band.low, v.band.high, sku.id, sku.UsableMemoryGb(),
      sku.memory_gb, reserve_gb);
  switch (v.fit) {
    case Fit::kFits:
      if (proven != nullptr) {
        return absl::StrFormat(
            "%s: FITS, the band's upper edge held at what every run of this "
            "recipe on %s succeeded within (its %.1f GB usable)",
            peak, proven->from_sku_id, proven->gb);
      }
      return absl::StrCat(peak, ": FITS, even at the band's upper edge");
    case Fit::kBorderline:
      return absl::StrCat(
          peak, ": BORDERLINE, the band straddles the card; measure first");
    default:
      return absl::StrCat(peak,
                          ": DOES_NOT_FIT, even the band's lower edge is over");
  }
}

}  // namespace

FitVerdict CheckFitWithoutOffload(
    double predicted_peak_gb, bool optimizer_may_page_to_cpu, const GpuSku& sku,
    const EvidenceStats* measured, double headroom_fraction,
    bool measured_is_transferred, bool explain, BandFactors estimate_band,
    const ProvenPeakCeiling* ceiling) {
  FitVerdict v;
  const bool observed = measured != nullptr && measured->peak_memory_gb > 0;
  v.measured = observed && !measured_is_transferred;
  v.peak_gb = observed ? measured->peak_memory_gb : predicted_peak_gb;
  // An estimate (predicted, or carried from another SKU or a nearby recipe)
  // gets the band calibrated on publications held out of the fit
  // (core/models/band_calibration.h): its recipe's, widened where it
  // extrapolates.
  v.band = v.measured ? MeasuredMemoryBand(v.peak_gb)
                      : Band{v.peak_gb * estimate_band.low,
                             v.peak_gb * estimate_band.high};
  const double usable_gb = sku.UsableMemoryGb();
  const double reserve = std::max(kFitReserveGb, headroom_fraction * usable_gb);
  // The band's upper edge is an estimate; a ceiling is proven. Applied only
  // where it settles the fit (a ceiling above the card proves nothing here).
  const bool proven = ceiling != nullptr && !v.measured &&
                      v.peak_gb <= ceiling->gb &&
                      ceiling->gb <= usable_gb - reserve;
  // The reason says the edge was held only where the ceiling lowered it.
  const bool held = proven && ceiling->gb < v.band.high;
  if (held) {
    v.band.high = ceiling->gb;
    v.band.low = std::min(v.band.low, v.band.high);
  }
  v.oom_probability = proven ? 0 : OomProbability(v.band, usable_gb);
  v.headroom_gb = usable_gb - v.peak_gb;
  v.fit = Fit::kDoesNotFit;
  if (!explain) {
    if ((measured != nullptr && measured->offload_share > 0) ||
        optimizer_may_page_to_cpu) {
      return v;
    }
    v.fit = ClassifyFit(v.band, usable_gb, reserve);
    v.fits = v.fit != Fit::kDoesNotFit;
    return v;
  }
  if (measured != nullptr && measured->offload_share > 0) {
    v.reason = absl::StrFormat(
        "%.0f%% of the %s runs on %s needed CPU/NVMe offload: an "
        "offloaded run is a miss, not a fit",
        100 * measured->offload_share,
        measured_is_transferred ? "nearby recipe's" : "measured", sku.id);
    return v;
  }
  if (optimizer_may_page_to_cpu) {
    v.reason =
        "a paged optimizer may page its states to CPU RAM, which is "
        "offload; use AdamW or 8-bit AdamW to prove an on-GPU fit";
    return v;
  }
  v.fit = ClassifyFit(v.band, usable_gb, reserve);
  v.fits = v.fit != Fit::kDoesNotFit;
  const char* source = v.measured ? "measured"
                       : observed ? "transferred"
                                  : "predicted";
  v.reason = FitReason(v, source, sku, reserve, held ? ceiling : nullptr);
  return v;
}

std::optional<std::string> CheckOverBought(double peak_gb, const GpuSku& sku,
                                           bool smaller_card_fits) {
  const double usable_gb = sku.UsableMemoryGb();
  const double idle = usable_gb - peak_gb;
  if (idle > usable_gb / 2 && smaller_card_fits) {
    return absl::StrFormat(
        "%s: %s would leave %.0f of %.0f GB idle and a smaller card fits; "
        "this job over-buys the card",
        kOverBoughtRule, sku.id, idle, usable_gb);
  }
  return std::nullopt;
}

bool SpansNodes(const Pool& pool, int gpu_count) {
  return pool.gpus_per_node > 0 && gpu_count > pool.gpus_per_node;
}

std::optional<RuleRejection> CheckCollectivesNeedFabric(const Recipe& r,
                                                        const Pool& pool,
                                                        const GpuSku& sku) {
  const int tp = r.tensor_parallel_degree;
  if (tp <= 1) return std::nullopt;
  std::string link;
  if (SpansNodes(pool, tp)) {
    link = absl::StrCat("would span nodes of ", pool.gpus_per_node, " GPUs");
  } else if (CollectivesUseNvlink(sku, pool, tp)) {
    return std::nullopt;
  } else if (pool.fabric == Fabric::kNvlink && sku.HasNvlink()) {
    link = absl::StrCat("would cross PCIe: ", sku.id,
                        " is bridged in NVLink pairs only");
  } else {
    link = absl::StrCat("would cross PCIe: pool ", pool.name, " is PCIe-only");
  }
  return RuleRejection{
      kCollectivesNeedFabricRule,
      absl::StrCat("tensor parallel group of ", tp,
                   " exchanges activations between dependent matmuls in "
                   "every layer and ",
                   link,
                   "; keep tensor parallel inside an NVLink/NVSwitch node, or "
                   "use (sharded) data parallel")};
}

std::vector<std::string> CollectiveFabricWarnings(const Recipe& r,
                                                  const Pool& pool,
                                                  const GpuSku& sku) {
  std::vector<std::string> warnings;
  const int dp = r.data_parallel_degree;
  if (dp <= 1) return warnings;
  // The data-parallel group inside one node: tp x dp GPUs share the node.
  const int in_node = std::min(r.gpu_count, std::max(1, pool.gpus_per_node));
  if (in_node > 1 && !CollectivesUseNvlink(sku, pool, in_node)) {
    warnings.push_back(absl::StrFormat(
        "%s: %s over %d GPUs crosses PCIe on pool %s (%.0f GB/s): %s every "
        "step; the estimate includes it and measured runs decide (their "
        "collective timeouts and retries raise the cost per successful "
        "step)",
        kCollectivesNeedFabricRule, ParallelismName(r.parallelism), dp,
        pool.name, CollectiveBandwidthGbS(sku, pool, in_node),
        ShardsModel(r) ? "weights are gathered and gradients scattered"
                       : "gradients are all-reduced"));
  }
  return warnings;
}

std::optional<RuleRejection> CheckInterNodeFabric(const Recipe& r,
                                                  const Pool& pool) {
  if (!SpansNodes(pool, r.gpu_count)) return std::nullopt;
  if (pool.inter_node_fabric != InterNodeFabric::kNone) return std::nullopt;
  return RuleRejection{
      kInterNodeFabricRule,
      absl::StrCat("the job needs ", r.gpu_count,
                   " GPUs, more than one node of ", pool.gpus_per_node,
                   ", but pool ", pool.name,
                   " declares pool.inter_node_fabric NONE: no job spans its "
                   "nodes")};
}

std::optional<std::string> InterNodeFabricWarning(const Recipe& r,
                                                  const Pool& pool) {
  if (!SpansNodes(pool, r.gpu_count)) return std::nullopt;
  if (pool.inter_node_fabric != InterNodeFabric::kUnspecified) {
    return std::nullopt;
  }
  const InterNodeBandwidth bw = InterNodeBandwidthOf(pool);
  return absl::StrFormat(
      "%s: the job spans %d nodes of pool %s, which never declared its "
      "inter-node fabric; the estimate assumes %.2f GB/s per GPU (%s); set "
      "pool.inter_node_fabric (and pool.inter_node_gb_s_per_gpu)",
      kInterNodeFabricRule,
      (r.gpu_count + pool.gpus_per_node - 1) / pool.gpus_per_node, pool.name,
      bw.gb_s_per_gpu, bw.source);
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
