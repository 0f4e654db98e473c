#include "core/plan/configuration_evaluation.h"

#include <algorithm>
#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "core/check.h"
#include "core/models/band_calibration.h"
#include "core/models/step_time_model.h"
#include "core/money.h"
#include "core/plan/configuration_search.h"
#include "core/plan/job_cost.h"
#include "core/plan/ranking.h"

namespace placement::core {
namespace {

// --- EvaluateConfiguration's steps. ---

// The rules a configuration must pass before it is estimated: quota,
// collectives need fabric and inter-node fabric. Failed runs do not reject
// a configuration (one preemption must not ban a pool for good): they
// price it, through the pool's failure rate and the GPU-hours they used.
std::optional<RuleRejection> CheckLayoutRules(const Recipe& recipe,
                                              const Pool& pool,
                                              const GpuSku& sku, int max_gpus) {
  if (auto r = CheckQuota(recipe, pool, max_gpus)) {
    return RuleRejection{kQuotaRule, r->reason};
  }
  if (auto r = CheckCollectivesNeedFabric(recipe, pool, sku)) {
    return RuleRejection{kCollectivesNeedFabricRule, r->reason};
  }
  if (auto r = CheckInterNodeFabric(recipe, pool)) {
    return RuleRejection{kInterNodeFabricRule, r->reason};
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
  // The factor on the predicted memory without observed memory: the
  // largest of the fleet's and a sibling layout's (`sibling`, when it is
  // the one in use).
  double memory_scale = 1;
  const LayoutMemoryScale* sibling = nullptr;
  // The method's floor on the card, when it is the factor in use.
  const MethodMemoryFloor* method_floor = nullptr;
  // The estimate (a nearby recipe's peak carried here, or a prediction) is
  // checked by this SKU's succeeded runs of the recipe: a nearby recipe's
  // (`transferred`) or a sibling layout's (`checked_by`), whose figure for
  // this configuration is `carried_over_estimate` times the estimate. Its
  // band is then CarriedMemoryBandFactors.
  bool carried = false;
  double carried_over_estimate = 1;
  const LayoutMemoryScale* checked_by = nullptr;
  // The model's measured start-up, for a layout whose own is not measured.
  const ModelStartup* model_startup = nullptr;

  // The observed memory the fit is checked against, if any.
  const EvidenceStats* observed() const {
    if (same_sku != nullptr) return same_sku;
    return cross != nullptr ? &cross_stats : nullptr;
  }
};

// `predicted_total_gb`: the memory model's figure for the configuration.
EvidenceInUse ResolveEvidence(const ConfigurationEvidence& ev,
                              double predicted_total_gb) {
  EvidenceInUse in_use;
  in_use.model_startup = ev.model_startup;
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
    // A failed run of the method on this card got further beyond the
    // model's figure than this recipe's own peak on another card: the card's
    // excess for the method (its allocator, its buffers), which a peak
    // carried between cards cannot see. Only raised; a proven ceiling still
    // holds (CheckFitWithoutOffload).
    const double floor_gb = ev.method_floor != nullptr
                                ? ev.method_floor->scale * predicted_total_gb
                                : 0;
    if (floor_gb > in_use.cross_stats.peak_memory_gb) {
      in_use.cross_stats.peak_memory_gb = floor_gb;
      in_use.cross_stats.max_peak_memory_gb =
          std::max(floor_gb, in_use.cross_stats.max_peak_memory_gb);
      in_use.method_floor = ev.method_floor;
    }
  }
  if (in_use.transferred != nullptr && in_use.measured == nullptr) {
    // Exact where a run succeeded and none got further.
    const EvidenceStats& source = in_use.transferred->source.stats;
    in_use.carried = source.successful_runs > 0 && source.offload_share == 0 &&
                     !(source.max_peak_memory_gb > source.peak_memory_gb);
  }
  if (in_use.observed() != nullptr) return in_use;
  in_use.memory_scale = ev.memory_scale;
  if (ev.sibling_memory != nullptr &&
      ev.sibling_memory->scale > ev.memory_scale) {
    in_use.memory_scale = ev.sibling_memory->scale;
    in_use.sibling = ev.sibling_memory;
  }
  if (ev.method_floor != nullptr && ev.sibling_memory == nullptr &&
      ev.succeeded_sibling == nullptr &&
      ev.method_floor->scale > in_use.memory_scale) {
    // A lower bound too: the band stays the estimate's.
    in_use.memory_scale = ev.method_floor->scale;
    in_use.method_floor = ev.method_floor;
  }
  // A raise to what a sibling that ran out of memory reached is a lower
  // bound: the band stays the estimate's.
  if (ev.succeeded_sibling != nullptr &&
      (in_use.sibling == nullptr || !in_use.sibling->lower_bound)) {
    in_use.carried = true;
    in_use.carried_over_estimate =
        in_use.memory_scale > 0
            ? ev.succeeded_sibling->scale / in_use.memory_scale
            : 0;
    in_use.checked_by = ev.succeeded_sibling;
  }
  return in_use;
}

// The fit verdict of the predicted memory (scaled) or the observed one.
FitVerdict CheckFit(const MemoryBreakdown& predicted, const EvidenceInUse& ev,
                    const GpuSku& sku, double headroom_fraction, bool explain,
                    BandFactors estimate_band) {
  const EvidenceStats* observed = ev.observed();
  std::optional<ProvenPeakCeiling> ceiling;
  if (ev.cross != nullptr) {
    ceiling = ProvenPeakCeiling{ev.cross->ceiling_gb, ev.cross->ceiling_sku_id};
  }
  return CheckFitWithoutOffload(
      predicted.total_gb * ev.memory_scale, predicted.optimizer_may_page_to_cpu,
      sku, observed, headroom_fraction,
      ev.measured == nullptr && observed != nullptr, explain, estimate_band,
      ceiling ? &*ceiling : nullptr);
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
  cand->oom_probability = fit.oom_probability;
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

// Whether this SKU's runs (measured, or transferred from a nearby recipe)
// give a step time: some step was attempted and timed.
bool HasMeasuredSteps(const EvidenceInUse& ev) {
  return ev.same_sku != nullptr && (ev.same_sku->busy_gpu_hours_per_step ||
                                    ev.same_sku->gpu_hours_per_successful_step);
}

// The start-up per attempt, wall hours per GPU, of a layout whose own is
// not measured on this SKU: its model's as measured in other layouts or on
// other cards (FleetModel::Startup), else the prior.
double PriorStartupHours(const EvidenceInUse& ev) {
  return ev.model_startup != nullptr ? ev.model_startup->hours_per_attempt
                                     : kPriorStartupSeconds / 3600;
}

// The model's start-up measured on other layouts, for runs whose own
// start-up every retry may have inflated (MeasuredJobInputs).
std::optional<double> ModelStartupHours(const EvidenceInUse& ev) {
  if (ev.model_startup == nullptr) return std::nullopt;
  return ev.model_startup->hours_per_attempt;
}

// Step time from this SKU's runs (measured, or transferred from a nearby
// recipe), and their start-up when measured: the one projection's inputs
// (MeasuredJobInputs), or, for rollups stored before busy time was kept,
// their GPU-hours per successful step (start-up and failures included, so
// dearer for short runs). Returns the GPU-hours per step and sets `inputs`
// when the projection's inputs come from the runs.
double StepTimeFromEvidence(const Recipe& recipe, const ModelArchitecture& arch,
                            const Pool& pool, const GpuSku& sku,
                            const EvidenceInUse& ev,
                            const PoolFailures& pool_failures, bool explain,
                            Candidate* cand,
                            std::optional<JobCostInputs>* inputs) {
  const EvidenceStats& stats = *ev.same_sku;
  *inputs = MeasuredJobInputs(stats, recipe.gpu_count, pool_failures,
                              ModelStartupHours(ev));
  if (inputs->has_value()) {
    const JobCostInputs& in = **inputs;
    cand->step_time_s = in.step_gpu_hours * 3600 / recipe.gpu_count;
    cand->step_time_s_band =
        ev.measured != nullptr
            ? Band{in.step_gpu_hours_band.low * 3600 / recipe.gpu_count,
                   in.step_gpu_hours_band.high * 3600 / recipe.gpu_count}
            : StepTimeBand(cand->step_time_s);
    cand->startup_gpu_hours = in.startup_gpu_hours;
    cand->startup_measured =
        stats.median_startup_hours_per_attempt.has_value() ||
        stats.startup_gpu_hours_per_run.has_value();
  } else {
    // Runs without busy time: their GPU-hours per successful step already
    // hold their start-up and failures.
    cand->step_time_s =
        stats.median_step_time_s > 0
            ? stats.median_step_time_s
            : *stats.gpu_hours_per_successful_step * 3600 / recipe.gpu_count;
    cand->step_time_s_band =
        ev.measured != nullptr
            ? Band{cand->step_time_s,
                   std::max(cand->step_time_s, stats.p95_step_time_s)}
            : StepTimeBand(cand->step_time_s);
    cand->startup_gpu_hours = 0;
    cand->startup_measured = true;
    cand->failures_in_step_figure = true;
  }
  if (explain) {
    cand->prior_step_time_s =
        EstimateStepTime(recipe, arch, sku, pool).step_time_s;
  }
  return inputs->has_value() ? (*inputs)->step_gpu_hours
                             : *stats.gpu_hours_per_successful_step;
}

std::string FleetStepTimeReason(const Candidate& cand,
                                const StepTimeEstimate& est,
                                const FleetStepTime& fleet, const GpuSku& sku,
                                FineTuneMethod method) {
  // The method's term says why two recipes of one model differ on a card
  // (a card that runs LoRA faster than its prior and full fine-tunes not).
  const std::string method_term =
      fleet.method_measured
          ? absl::StrFormat(
                "; of which x%.2f is %s recipes' own term on "
                "%s, learned from those measured there",
                fleet.method_factor, FineTuneMethodName(method), sku.id)
          : "";
  return absl::StrFormat(
      "%s: step time %.2f s (band %.2f-%.2f s) = the analytic %.2f s x "
      "%.2f from the fleet model (log step time over recipe x SKU, "
      "fitted to %d measured cells; %s; %s%s)",
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
          : absl::StrCat(sku.id, " never measured: its prior ratio"),
      method_term);
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
            ? FleetStepTimeReason(*cand, est, *fleet, sku, recipe.method)
            : AnalyticStepTimeReason(*cand, est, recipe, pool, sku));
  }
  return cand->step_time_s * recipe.gpu_count / 3600;
}

// The pool's failure sums (none when it has no runs).
PoolFailures PoolFailuresOf(const ConfigurationEvidence& ev) {
  PoolFailures pool;
  if (ev.pool_single_gpu != nullptr) pool.single_gpu = *ev.pool_single_gpu;
  if (ev.pool_multi_gpu != nullptr) pool.multi_gpu = *ev.pool_multi_gpu;
  return pool;
}

// GPU-hours, cost (saturated: never wrapping to a cheap-looking figure) and
// wall time of the whole job by the one projection (core/plan/job_cost.h):
// start-up, the steps, and the rework the layout's failures are expected to
// cost over the hours the job holds the pool. `measured_inputs` are the
// runs' own when this SKU measured the layout; else the inputs come from
// the estimate and the pool's failure rate.
void EstimateJob(int64_t total_steps, const Pool& pool, const Recipe& recipe,
                 double per_step_gpu_hours, const FailureRate& pool_rate,
                 const std::optional<JobCostInputs>& measured_inputs,
                 double prior_startup_hours, Candidate* cand) {
  const int gpus = recipe.gpu_count;
  if (!cand->startup_measured) {
    cand->startup_gpu_hours = gpus * prior_startup_hours;
  }
  JobCostInputs in;
  if (measured_inputs.has_value()) {
    in = *measured_inputs;
  } else {
    in.gpus = gpus;
    in.step_gpu_hours = per_step_gpu_hours;
    if (cand->step_time_s > 0) {
      in.step_gpu_hours_band = {
          per_step_gpu_hours * cand->step_time_s_band.low / cand->step_time_s,
          per_step_gpu_hours * cand->step_time_s_band.high / cand->step_time_s};
    }
    in.startup_gpu_hours = cand->startup_gpu_hours;
    in.failure = pool_rate;
  }
  cand->step_gpu_hours = in.step_gpu_hours;
  cand->failure_rate = in.failure;
  if (cand->failures_in_step_figure) {
    in.failure.per_hour = 0;
    in.failure.per_hour_band = {0, 0};
  }
  const JobCost cost = ProjectJobCost(in, total_steps);
  cand->job_lost_hours_per_failure = cost.lost_hours_per_failure;
  const double oom_gpu_hours =
      cand->oom_probability * (cand->startup_gpu_hours + in.step_gpu_hours);
  cand->rework_gpu_hours = cost.rework_gpu_hours + oom_gpu_hours;
  cand->expected_gpu_hours = cost.total_gpu_hours + oom_gpu_hours;
  cand->expected_gpu_hours_band = {
      cost.total_gpu_hours_band.low + oom_gpu_hours,
      cost.total_gpu_hours_band.high + oom_gpu_hours};
  cand->gpu_hours_per_1k_successful_steps =
      total_steps > 0 ? cand->expected_gpu_hours / total_steps * 1000 : 0;
  cand->expected_cost_micros = CostMicros(
      cand->expected_gpu_hours, pool.internal_rate_micros_per_gpu_hour);
  if (pool.list_price_micros_per_gpu_hour) {
    cand->list_price_cost_micros = CostMicros(
        cand->expected_gpu_hours, *pool.list_price_micros_per_gpu_hour);
  }
  cand->expected_wall_time = absl::Seconds(cost.wall_hours * 3600);
}

// What the measured layout's runs cost as they ran, and the projection of
// a job as long as they were (they agree within the observed band).
void CompareWithObserved(const EvidenceStats& measured,
                         const JobCostInputs& inputs,
                         std::optional<double> model_startup_hours,
                         Candidate* cand) {
  cand->observed =
      ObservedJobCost(measured, cand->gpu_count, model_startup_hours);
  if (!cand->observed.has_value() || cand->observed->job_steps <= 0) return;
  const int64_t steps = cand->observed->job_steps;
  cand->projected_gpu_hours_per_successful_step_at_observed =
      ProjectJobCost(inputs, steps).total_gpu_hours /
      static_cast<double>(steps);
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

// Why a prediction was raised by a sibling layout's runs.
std::string SiblingMemoryNote(const LayoutMemoryScale& sibling,
                              const GpuSku& sku) {
  return absl::StrFormat(
      "predicted memory x%.2f: on %s the same recipe as %s %s %.1f GB "
      "against the %.1f GB predicted for it, and its other layouts carry the "
      "same excess",
      sibling.scale, sku.id, DescribeConfiguration(sibling.recipe),
      sibling.lower_bound ? "failed (out of memory) having reached"
                          : "peaked at",
      sibling.peak_gb, sibling.predicted_gb);
}

// Why a prediction was raised by another recipe of its method.
std::string MethodFloorNote(const MethodMemoryFloor& floor,
                            FineTuneMethod method, const GpuSku& sku) {
  const std::string held =
      floor.succeeded_ratio > 0
          ? absl::StrFormat(
                ", held to x%.2f of the x%.2f the method's recipes that "
                "succeeded there peaked at",
                kMemoryBandMethodCarried.high, floor.succeeded_ratio)
          : "";
  return absl::StrFormat(
      "predicted memory x%.2f: on %s a run of another %s recipe (%s, %s) "
      "failed having reached %.1f GB against the %.1f GB predicted for it, "
      "and the recipes of a method share most of the memory model's error on "
      "a card (within x%.2f-%.2f of each other in the published runs)%s",
      floor.scale, sku.id, FineTuneMethodName(method), floor.model,
      floor.recipe_key, floor.peak_gb, floor.predicted_gb,
      kMemoryBandMethodCarried.low, kMemoryBandMethodCarried.high, held);
}

// The note of whichever raise is in use, or "".
std::string RaiseNote(const EvidenceInUse& ev, const Recipe& recipe,
                      const GpuSku& sku) {
  if (ev.sibling != nullptr) return SiblingMemoryNote(*ev.sibling, sku);
  if (ev.method_floor == nullptr) return "";
  const std::string floor =
      MethodFloorNote(*ev.method_floor, recipe.method, sku);
  if (ev.cross == nullptr) return floor;
  return absl::StrFormat(
      "peak memory raised to %.1f GB, above the %.1f GB carried from %s (%s)",
      ev.cross_stats.peak_memory_gb, ev.cross->peak_gb, ev.cross->from_sku_id,
      floor);
}

// Why a checked estimate's memory band is narrower than an estimate's
// (EvidenceInUse::carried).
std::string CarriedBandNote(const EvidenceInUse& ev, const GpuSku& sku,
                            BandFactors carried, BandFactors estimate_band) {
  const std::string from =
      ev.checked_by != nullptr
          ? absl::StrFormat(
                "the same recipe as %s peaked at %.1f GB against the %.1f GB "
                "predicted for it",
                DescribeConfiguration(ev.checked_by->recipe),
                ev.checked_by->peak_gb, ev.checked_by->predicted_gb)
          : absl::StrFormat("the nearby recipe %s ran",
                            ev.transferred->source.stats.recipe_key);
  return absl::StrFormat(
      "%s: peak-memory band x%.2f-%.2f of the estimate, not an estimate's "
      "x%.2f-%.2f: on %s %s, which holds this configuration's peak within "
      "x%.2f-%.2f of its figure for it (how the memory model's error differs "
      "between two configurations of one recipe)",
      kEvidenceBeatsEstimatesRule, carried.low, carried.high, estimate_band.low,
      estimate_band.high, sku.id, from, kMemoryBandCarried.low,
      kMemoryBandCarried.high);
}

// When a failure loses less in this job than in the attempts it was
// measured over (LostHoursForJob), by how much; else "".
std::string ShorterJobLoss(const Candidate& cand) {
  const FailureRate& f = cand.failure_rate;
  if (!(cand.job_lost_hours_per_failure < f.lost_hours_per_failure - 0.005)) {
    return "";
  }
  return absl::StrFormat(
      " in attempts of %.2f h, %.2f h in this shorter job (less "
      "progress to lose)",
      f.lost_over_attempt_hours, cand.job_lost_hours_per_failure);
}

// What the measured reason's start-up rests on (MeasuredJobInputs).
const char* StartupSource(const EvidenceStats& measured,
                          const EvidenceInUse& ev, const Candidate& cand) {
  if (!cand.startup_measured) return "prior";
  if (measured.startup_of_unretried_runs) {
    return "measured, of the runs that did not retry";
  }
  if (!measured.startup_holds_retries) return "measured";
  if (ev.model_startup != nullptr &&
      cand.startup_gpu_hours ==
          ev.model_startup->hours_per_attempt * cand.gpu_count) {
    return "the model's on its other layouts: every succeeded run here "
           "retried, and its start-up holds the failures' detection";
  }
  return "measured, at most: every succeeded run retried";
}

// Why the memory figure is above the model's: a sibling layout's runs, the
// method's floor on the card, or the fleet's re-fit.
void ExplainMemoryRaise(const Recipe& recipe, const GpuSku& sku,
                        const EvidenceInUse& ev, Candidate* cand) {
  if (const std::string raise = RaiseNote(ev, recipe, sku); !raise.empty()) {
    cand->reasons.push_back(
        absl::StrCat(kEvidenceBeatsEstimatesRule, ": ", raise));
  } else if (ev.observed() == nullptr && ev.memory_scale != 1) {
    cand->reasons.push_back(absl::StrFormat(
        "%s: predicted memory x%.3f, the fleet's re-fit of the memory model "
        "for %s recipes (median of measured / predicted over the uploaded "
        "runs, shrunk toward the published fit)",
        kEvidenceBeatsEstimatesRule, ev.memory_scale,
        TrainingFrameworkName(recipe.framework)));
  }
}

// The reason or warning that says what the candidate's figures rest on:
// measured runs, memory transferred from another SKU, a nearby recipe, or
// estimates alone.
void ExplainEvidence(const Recipe& recipe, const GpuSku& sku,
                     const EvidenceInUse& ev, double per_step_gpu_hours,
                     Candidate* cand) {
  if (!cand->startup_measured && ev.model_startup != nullptr) {
    const ModelStartup& startup = *ev.model_startup;
    cand->reasons.push_back(absl::StrFormat(
        "%s: start-up %.0f s an attempt, as %s's measured layouts started "
        "(median of %d on %s), not the %.0f s prior: loading a model takes "
        "as long as its size, whatever the layout",
        kEvidenceBeatsEstimatesRule, startup.hours_per_attempt * 3600,
        recipe.model, startup.cells, absl::StrJoin(startup.skus, ", "),
        kPriorStartupSeconds));
  }
  ExplainMemoryRaise(recipe, sku, ev, cand);
  if (cand->basis == EvidenceBasis::kMeasured) {
    const EvidenceStats& measured = *ev.measured;
    cand->reasons.push_back(absl::StrFormat(
        "%s: %d measured run(s), %d succeeded, %d attempt(s) of which %d "
        "failed; %.4f GPU-hours a step, start-up %.3f GPU-hours an attempt "
        "(%s); failures at %.3g an hour (p10-p90 %.3g-%.3g, %s) losing "
        "%.2f h each%s",
        kRetriesCostMoneyRule, measured.runs, measured.successful_runs,
        measured.attempts, measured.failed_attempts, per_step_gpu_hours,
        cand->startup_gpu_hours, StartupSource(measured, ev, *cand),
        cand->failure_rate.per_hour, cand->failure_rate.per_hour_band.low,
        cand->failure_rate.per_hour_band.high,
        cand->failure_rate.recipe_measured
            ? "its own attempts, the pool's rate as prior"
            : "the pool's runs",
        cand->failure_rate.lost_hours_per_failure, ShorterJobLoss(*cand)));
    if (cand->observed.has_value()) {
      cand->reasons.push_back(absl::StrFormat(
          "%s: its runs cost %.4g GPU-hours per successful step (band "
          "%.4g-%.4g); this projection gives %.4g for a job as long as "
          "theirs (%d steps)",
          kRetriesCostMoneyRule, cand->observed->gpu_hours_per_successful_step,
          cand->observed->band.low, cand->observed->band.high,
          cand->projected_gpu_hours_per_successful_step_at_observed,
          cand->observed->job_steps));
    }
    if (measured.failed_attempts > 0) {
      cand->warnings.push_back(absl::StrFormat(
          "%s: %d of %d attempts failed (%.0f%% of runs, %.2f retries per "
          "run)",
          kRetriesCostMoneyRule, measured.failed_attempts, measured.attempts,
          100 * measured.failure_share, measured.retry_rate));
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
  if (auto r = CheckLayoutRules(recipe, pool, sku, c.max_gpus)) {
    return reject(*std::move(r));
  }
  const EvidenceInUse ev =
      ResolveEvidence(evidence, out.predicted_memory.total_gb);
  const BandFactors estimate_band =
      MemoryBandFactors(recipe, MemoryExtrapolationOf(recipe, arch));
  const std::optional<BandFactors> carried_band =
      ev.carried
          ? CarriedMemoryBandFactors(estimate_band, ev.carried_over_estimate)
          : std::nullopt;
  out.fit = CheckFit(out.predicted_memory, ev, sku, c.headroom_fraction,
                     explain, carried_band.value_or(estimate_band));
  if (!out.fit.fits) {
    if (!explain) return reject({kFitWithoutOffloadRule, ""});
    const std::string raise = RaiseNote(ev, recipe, sku);
    return reject({kFitWithoutOffloadRule,
                   absl::StrCat(out.fit.reason, " (",
                                DescribeBreakdown(out.predicted_memory), ")",
                                raise.empty() ? "" : "; ", raise)});
  }
  Candidate& cand = out.candidate;
  FillFitAndBasis(pool, sku, recipe, out.fit, ev, &cand);
  cand.prior_peak_memory_gb = out.predicted_memory.total_gb;
  // The pool's rate for a recipe with no record of its own there; its
  // prior loss per failure includes the prior start-up.
  const PoolFailures pool_failures = PoolFailuresOf(evidence);
  const double prior_startup_hours = PriorStartupHours(ev);
  const FailureRate pool_rate =
      EstimateFailureRate(pool_failures.single_gpu, pool_failures.multi_gpu,
                          recipe.gpu_count > 1, prior_startup_hours);
  std::optional<JobCostInputs> measured_inputs;
  const double per_step_gpu_hours =
      HasMeasuredSteps(ev)
          ? StepTimeFromEvidence(recipe, arch, pool, sku, ev, pool_failures,
                                 explain, &cand, &measured_inputs)
          : StepTimeFromModel(recipe, arch, pool, sku, ev,
                              evidence.fleet_step_time, explain, &cand);
  EstimateJob(request.total_steps, pool, recipe, per_step_gpu_hours, pool_rate,
              measured_inputs, prior_startup_hours, &cand);
  if (ev.measured != nullptr && measured_inputs.has_value()) {
    CompareWithObserved(*ev.measured, *measured_inputs, ModelStartupHours(ev),
                        &cand);
  }
  if (auto r = CheckDeadline(c, cand, explain)) return reject(*std::move(r));
  if (!explain) return out;
  ExplainCandidate(request, recipe, pool, sku, out.fit, ev, per_step_gpu_hours,
                   &cand);
  if (carried_band.has_value() && !out.fit.measured &&
      !(*carried_band == estimate_band)) {
    cand.reasons.push_back(
        CarriedBandNote(ev, sku, *carried_band, estimate_band));
  }
  return out;
}

size_t ChooseConfiguration(const std::vector<ConfigurationOutcome>& outcomes,
                           Objective objective,
                           std::optional<double> fallback_value) {
  size_t best = outcomes.size();
  // For cost, a BORDERLINE configuration is chosen where its risk of running
  // out of memory, priced against where the job would go then
  // (`fallback_value`, else the pool's RiskFallback: its best FITS
  // configuration, else the likeliest to fit), is worth taking. For time FITS
  // comes first, since that risk is paid in time; with none, the BORDERLINE one
  // most likely to fit (least peak memory per GPU) is the one to measure.
  std::vector<const Candidate*> viable;
  viable.reserve(outcomes.size());
  for (const ConfigurationOutcome& o : outcomes) {
    if (!o.rejection) viable.push_back(&o.candidate);
  }
  const bool risk_priced = PricesOutOfMemoryRisk(objective);
  const Candidate* own_fallback = RiskFallback(viable, objective);
  const bool any_fits =
      own_fallback != nullptr && own_fallback->fit == Fit::kFits;
  if (!fallback_value.has_value() && own_fallback != nullptr) {
    fallback_value = RankingValue(*own_fallback, objective);
  }
  auto key = [&](const ConfigurationOutcome& o) {
    const bool fits = o.candidate.fit == Fit::kFits;
    const double value = RankingValue(o.candidate, objective);
    if (risk_priced) {
      return std::make_tuple(
          0.0, RiskPricedValue(o.candidate, value, fallback_value),
          fits ? 0.0 : o.fit.peak_gb, o.recipe.gpu_count);
    }
    if (!any_fits) {
      return std::make_tuple(0.0, o.fit.peak_gb, value, o.recipe.gpu_count);
    }
    return std::make_tuple(fits ? 0.0 : 1.0, value, 0.0, o.recipe.gpu_count);
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
  PLACEMENT_DCHECK(outcomes.empty() || best < outcomes.size(),
                   "a pool with configurations chose none of them");
  return best;
}

}  // namespace placement::core
