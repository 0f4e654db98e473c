#ifndef PLACEMENT_CORE_PLAN_RULES_H_
#define PLACEMENT_CORE_PLAN_RULES_H_

// The rules of the fine-tuning placement guide ("L40S vs A100 for Enterprise
// Fine-Tuning Workloads"), each a named function with a stable name used in
// rejections and warnings.

#include <optional>
#include <string>
#include <vector>

#include "core/evidence/evidence.h"
#include "core/models/band_calibration.h"
#include "core/models/fit.h"
#include "core/pool.h"
#include "core/recipe.h"
#include "core/sku.h"

namespace placement::core {

inline constexpr char kExactSkuRule[] = "exact_sku";
inline constexpr char kFitWithoutOffloadRule[] = "fit_without_offload";
inline constexpr char kOverBoughtRule[] = "over_bought";
inline constexpr char kCollectivesNeedFabricRule[] = "collectives_need_fabric";
// A job spanning nodes needs a network between them: rejected when the pool
// declares none, warned about when it declared nothing.
inline constexpr char kInterNodeFabricRule[] = "inter_node_fabric";
inline constexpr char kEvidenceBeatsEstimatesRule[] =
    "evidence_beats_estimates";
inline constexpr char kRetriesCostMoneyRule[] = "retries_cost_money";
inline constexpr char kTrainingStaysOffServingPoolsRule[] =
    "training_stays_off_serving_pools";
inline constexpr char kQuotaRule[] = "quota";
inline constexpr char kServeWhatYouEvaluatedRule[] = "serve_what_you_evaluated";
// Not rules of the guide, but named reasons a pool drops out of a plan.
inline constexpr char kConstraintsRule[] = "constraints";
inline constexpr char kDeadlineRule[] = "deadline";

// A pool ruled out by one rule, with a reason a human can act on.
struct RuleRejection {
  std::string rule;
  std::string reason;
};

// exact_sku: the pool's SKU must name exactly one catalog card ("A100" does
// not). Returns the resolved SKU, or the rejection.
struct ExactSkuResult {
  std::optional<GpuSku> sku;
  std::optional<RuleRejection> rejection;
};
ExactSkuResult CheckExactSku(const std::string& sku_id,
                             const std::vector<GpuSku>& catalog);

// Extra share of the card a request may keep free (PlanConstraints);
// 0 = only the fixed reserve (kFitReserveGb, core/models/fit.h). A flat 10% on
// top of an estimate that is already a band rejected runs that really ran.
inline constexpr double kDefaultHeadroomFraction = 0.0;

// fit_without_offload: a job fits a card only if its peak memory fits in the
// card's memory, less max(kFitReserveGb, headroom_fraction x memory), and no
// CPU/NVMe offload is involved. The peak is a band (core/models/fit.h): the
// memory model's calibration error around a prediction, +-6% around a measured
// peak (EvidenceStats::peak_memory_gb, which replaces it), the model's band
// around transferred evidence. A single measured run that needed offload is
// a miss, and so is a paged optimizer (possible offload): DOES_NOT_FIT.
// An estimated or transferred peak gets `estimate_band` (the recipe's
// calibrated band, widened where the estimate extrapolates:
// MemoryBandFactors in core/models/band_calibration.h).
// With `explain` false the reason is left empty (the planner's search).
struct FitVerdict {
  Fit fit = Fit::kUnspecified;
  bool fits = false;       // FITS or BORDERLINE: a candidate
  double peak_gb = 0;      // the point the verdict used
  Band band;               // its band
  double headroom_gb = 0;  // card memory - peak (negative when over)
  bool measured = false;   // peak_gb came from runs of this recipe
  // The chance that a run peaks above the card's usable memory, reading the
  // band as the p10-p90 of a lognormal (OomProbability).
  double oom_probability = 0;
  std::string reason;
};
// What runs on another card prove of the peak here: the same recipe key
// succeeded in every run on `from_sku_id`, whose usable memory is `gb` (the
// cards' context difference added), so its peak is at most that. A card
// with that much room, reserve kept, FITS it whatever the estimate band
// says: the same tensors are allocated on either card.
struct ProvenPeakCeiling {
  double gb = 0;
  std::string from_sku_id;
};
FitVerdict CheckFitWithoutOffload(
    double predicted_peak_gb, bool optimizer_may_page_to_cpu, const GpuSku& sku,
    const EvidenceStats* measured,
    double headroom_fraction = kDefaultHeadroomFraction,
    bool measured_is_transferred = false, bool explain = true,
    BandFactors estimate_band = kMemoryBandCalibrated,
    const ProvenPeakCeiling* ceiling = nullptr);

// over_bought: a fitting card that leaves more than half its memory idle is
// flagged when a pool with a smaller card also fits. Returns the warning.
std::optional<std::string> CheckOverBought(double peak_gb, const GpuSku& sku,
                                           bool smaller_card_fits);

// collectives_need_fabric: tensor (and sequence) parallel groups exchange
// activations between dependent matmuls and need NVLink-class links for the
// whole group inside one node: rejected on a PCIe-only pool, on
// bridged-pair PCIe cards (A100/H100 PCIe, H100 NVL) for a group larger
// than a pair, and across nodes ("Stop at L40S if the plan quietly became
// tensor parallel across a PCIe box"). Data parallel and sharded data
// parallel (DDP, ZeRO-2, ZeRO-3, FSDP) and pipeline stages are allowed
// anywhere; across PCIe cards they are warned about (see
// CollectiveFabricWarnings) and the step-time model charges their
// communication at PCIe bandwidth.
std::optional<RuleRejection> CheckCollectivesNeedFabric(const Recipe& recipe,
                                                        const Pool& pool,
                                                        const GpuSku& sku);

// The warnings of a layout that CheckCollectivesNeedFabric allows: data
// parallel or sharded collectives that cross PCIe instead of NVLink.
std::vector<std::string> CollectiveFabricWarnings(const Recipe& recipe,
                                                  const Pool& pool,
                                                  const GpuSku& sku);

// Whether a job of `gpu_count` GPUs spans more than one node of `pool`.
bool SpansNodes(const Pool& pool, int gpu_count);

// inter_node_fabric: a job that spans nodes runs its pipeline stages and
// (sharded) data parallel over the pool's inter-node fabric. Declared NONE:
// rejected (the job must fit in one node). Never declared: allowed, at a
// conservative bandwidth (see InterNodeBandwidth), with a warning naming
// pool.inter_node_fabric.
std::optional<RuleRejection> CheckInterNodeFabric(const Recipe& recipe,
                                                  const Pool& pool);
std::optional<std::string> InterNodeFabricWarning(const Recipe& recipe,
                                                  const Pool& pool);

// evidence_beats_estimates: the basis a number rests on, best first.
enum class EvidenceBasis {
  kUnspecified = 0,
  kMeasured = 1,     // runs of this recipe key on this SKU
  kTransferred = 2,  // runs of a nearby recipe on this SKU, scaled
  kEstimated = 3,    // the memory and step-time models only
};
enum class Confidence {
  kUnspecified = 0,
  kLow = 1,
  kMedium = 2,
  kHigh = 3,
};
struct EvidenceChoice {
  EvidenceBasis basis = EvidenceBasis::kEstimated;
  Confidence confidence = Confidence::kLow;
  int64_t runs = 0;
};
// MEASURED whenever the exact recipe has a run on the SKU (even a failing
// one: failures are evidence too); else TRANSFERRED; else ESTIMATED (low).
// Measured confidence is high from 3 successful runs, medium below;
// transferred is medium from 3 successful source runs, low below.
EvidenceChoice ChooseEvidence(const EvidenceStats* measured,
                              const TransferredEvidence* transferred);

// retries_cost_money: GPU-hours per successful step count every GPU-hour
// spent, failed runs and retries included, over the steps that succeeded.
// nullopt when no step succeeded (the rejection says why).
std::optional<double> GpuHoursPerSuccessfulStep(const EvidenceStats& stats);
std::optional<RuleRejection> CheckRetriesCostMoney(const EvidenceStats& stats);

// training_stays_off_serving_pools: never a serving pool, never a pool whose
// cards are time-sliced with other tenants.
std::optional<RuleRejection> CheckTrainingStaysOffServingPools(
    const Pool& pool);

// quota: the job's GPUs must fit the pool's gpu_quota (0 = no GPU may be
// planned there), its size, and the request's max_gpus (0 = no limit).
std::optional<RuleRejection> CheckQuota(const Recipe& recipe, const Pool& pool,
                                        int max_gpus);

// serve_what_you_evaluated: an export-and-eval step on the serving SKU is
// required when the serving SKU differs from the training SKU or the
// serving precision from the training precision. Returns the requirement.
std::optional<std::string> CheckServeWhatYouEvaluated(
    const Recipe& recipe, const std::string& training_sku_id,
    const std::string& serving_sku_id, Precision serving_precision);

const char* EvidenceBasisName(EvidenceBasis basis);
const char* ConfidenceName(Confidence confidence);

}  // namespace placement::core

#endif  // PLACEMENT_CORE_PLAN_RULES_H_
