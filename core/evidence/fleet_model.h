#ifndef PLACEMENT_CORE_EVIDENCE_FLEET_MODEL_H_
#define PLACEMENT_CORE_EVIDENCE_FLEET_MODEL_H_

// What the fleet's uploaded runs teach the planner beyond the evidence of
// the exact (recipe key, SKU) a candidate would run:
//  - peak memory of a recipe key measured on another SKU (memory barely
//    depends on the card: the same tensors are allocated), adjusted for
//    each card's context overhead: CrossSkuMemoryTransfer;
//  - step time through a low-rank model of log(measured / analytic prior)
//    over (recipe key x SKU), fitted to every measured cell with shrinkage
//    toward the analytic prior, so that one recipe measured on one SKU
//    informs its estimate on the others through the SKU ratios learned from
//    recipes measured on both (the matrix-completion idea of Gavel,
//    Narayanan et al., OSDI'20, which completes a job x accelerator
//    throughput matrix from a few measured cells), with an offset per
//    (fine-tune method, SKU): a card's ratio to the prior differs by method
//    (a full fine-tune's optimizer step and collectives, an adapter's small
//    matmuls), and recipes of one method share it: FleetModel;
//  - the analytic memory model's per-profile scale re-fitted from the
//    uploaded peaks (a robust median of log(measured / predicted), shrunk
//    toward the published prior): FleetModel::MemoryScale;
//  - the floor a failed run of a fine-tune method sets under the method's
//    other recipes on its card: FleetModel::MethodMemory.
// Pure: built from evidence, no I/O.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/string_view.h"
#include "core/evidence/evidence.h"
#include "core/models/fit.h"
#include "core/recipe.h"
#include "core/sku.h"

namespace placement::core {

// One measured (recipe key, SKU) the fleet model is fitted to.
struct FleetCell {
  std::string recipe_key;
  std::string sku_id;
  TrainingFramework framework = TrainingFramework::kUnspecified;
  // Its method (Recipe::method): cells of one method on one SKU share an
  // offset (UNSPECIFIED: none).
  FineTuneMethod method = FineTuneMethod::kUnspecified;
  // Median over its runs of the measured step time, and the analytic
  // prior's estimate for the same recipe on the same SKU; both > 0 for the
  // cell to inform step time.
  double measured_step_time_s = 0;
  double prior_step_time_s = 0;
  // The measured peak (EvidenceStats::peak_memory_gb: the largest peak of
  // a succeeded run, exact) and the memory model's prediction of the same
  // figure; both > 0 for the cell to inform memory.
  double measured_peak_gb = 0;
  double predicted_peak_gb = 0;
  // The largest peak of a run that did not succeed, without offload (as far
  // as it got before it failed, out of memory most often: a lower bound of
  // what the recipe needs), and the memory model's total for the recipe
  // (MemoryBreakdown::total_gb, what a fit is checked with); both > 0 for the
  // cell to set its method's floor on the card (MethodMemoryFloor).
  double failed_peak_gb = 0;
  double predicted_total_gb = 0;
  int64_t successful_runs = 0;
  // The model it runs (Recipe::model) and its succeeded runs' median
  // start-up per attempt in wall hours (EvidenceStats::
  // median_startup_hours_per_attempt; 0 when not kept): the cell informs
  // the start-up of the model's layouts not measured (ModelStartup).
  std::string model;
  double startup_hours_per_attempt = 0;
};

// How strongly each part of the model is pulled toward the analytic prior
// (log-space ridge penalties, in units of "cells' worth of evidence").
struct FleetModelOptions {
  // The common offset: every recipe on every SKU.
  double global_penalty = 1;
  // One recipe's offset across SKUs, one SKU's offset across recipes.
  double recipe_penalty = 0.5;
  double sku_penalty = 1;
  // One (method, SKU)'s offset across the recipes of that method: pulled
  // as a SKU's is, so that it moves only as far as several recipes of the
  // method on that card agree beyond what the card's offset explains.
  double method_sku_penalty = 1;
  // The rank-1 interaction (recipe factor x SKU factor): strongly pulled to
  // 0, so that it only bends the additive model where several recipes
  // measured on several SKUs agree.
  double interaction_penalty = 4;
  int iterations = 60;
  // The prior's own spread in log space (its cross-validated band,
  // kStepTimeBand*: 0.60x-1.40x is about +-1.28 x 0.3), and how many cells'
  // worth of weight it keeps in the fitted spread.
  double prior_log_sd = 0.3;
  double prior_sd_weight = 2;
  // Pseudo-cells of the published prior in the memory scale's shrinkage.
  double memory_prior_weight = 3;
  // Whether plans apply the memory scale. Off: on the out-of-sample
  // learning curve (bench/learning_curve.sh: each publication replayed
  // against constants fitted without it), applying it, shrunk with 3 or 8
  // cells' worth of prior, lowered the memory error of the rows not yet
  // uploaded at 5 and 10 runs but raised it above the prior's at 15
  // (docs/CORE.md), where the planner without it stays below: one scale
  // per framework does not follow the rows of a framework that the prior
  // misses in both directions. Fitted either way (MemoryScale).
  bool apply_memory_scale = false;
};

// The fleet model's step-time correction for one (recipe key, SKU).
struct FleetStepTime {
  double factor = 1;  // multiply the analytic prior by this
  // The band as factors on the corrected estimate (p10..p90 of a normal in
  // log space with the fit's spread).
  double band_low = kStepTimeBandLowFactor;
  double band_high = kStepTimeBandHighFactor;
  bool recipe_measured = false;  // the key itself was measured somewhere
  bool sku_measured = false;     // the SKU was measured on some recipe
  // The SKUs the recipe key was measured on (its offset came from them).
  std::vector<std::string> recipe_skus;
  // The method's own term on the SKU (m[method, sku], as a factor), in
  // `factor` already: 1 where no recipe of the method ran on the SKU.
  double method_factor = 1;
  bool method_measured = false;
  int cells = 0;  // cells the whole model was fitted to
};

// What a model's measured layouts say of the start-up (loading the
// weights, compiling, warm-up) of one of its layouts not yet measured on a
// card: the median over the model's cells of their median start-up per
// attempt. Loading a 70B model takes minutes where an 8B takes seconds, and
// the start-up barely depends on the layout; the card's node (its disks and
// links) moves it less than the model's size does.
struct ModelStartup {
  double hours_per_attempt = 0;   // wall hours, per GPU
  int cells = 0;                  // (recipe key, SKU) cells it rests on
  std::vector<std::string> skus;  // the SKUs they ran on, sorted, distinct
};

// What a run of one fine-tune method that failed on a card says of the
// method's other recipes there: it reached `scale` times the memory model's
// figure for its recipe before it failed, so that recipe needs at least that
// much more than predicted, and the model's error on a card is mostly
// shared by the recipes of a method (their ratios, measured / predicted,
// differ by x0.85-1.20 between two recipes of a method on one SKU:
// kMemoryBandMethodCarried). The largest such ratio of the method on the
// card, above 1, each held within that spread of the method's recipes that
// succeeded there (a run far beyond them is the odd recipe or the odd run,
// not the method's: one upload cannot push the method off the card).
struct MethodMemoryFloor {
  double scale = 1;        // > 1: multiply a prediction by at least this
  std::string recipe_key;  // the run's recipe
  std::string model;
  double peak_gb = 0;       // as far as it got
  double predicted_gb = 0;  // the memory model's total for its recipe
  // > 0: the largest ratio (measured / predicted) of the method's recipes
  // that succeeded on the card, and `scale` was held to
  // kMemoryBandMethodCarried.high times it, below peak_gb / predicted_gb.
  double succeeded_ratio = 0;
};

class FleetModel {
 public:
  // Fits by alternating least squares (each block in closed form, the
  // others held) the model
  //   log(measured / prior) = g + r[recipe] + s[sku] + m[method, sku]
  //                             + a[recipe] * b[sku]
  // with ridge penalties toward 0 (= the analytic prior), over every cell
  // with both step times, and the per-framework memory scales over every
  // cell with both peaks. Deterministic for a given set of cells
  // (whatever their order).
  static FleetModel Fit(std::vector<FleetCell> cells,
                        const FleetModelOptions& options = {});

  // nullopt when the model has no step-time cell at all. `method` is the
  // recipe's (UNSPECIFIED: no method offset).
  std::optional<FleetStepTime> StepTime(
      absl::string_view recipe_key, absl::string_view sku_id,
      FineTuneMethod method = FineTuneMethod::kUnspecified) const;

  // The start-up of `model`'s layouts as measured (ModelStartup); nullopt
  // when no cell of the model kept a start-up.
  std::optional<ModelStartup> Startup(absl::string_view model) const;

  // The factor on the memory model's prediction for recipes of
  // `framework` (1 without evidence).
  double MemoryScale(TrainingFramework framework) const;
  // MemoryScale when FleetModelOptions::apply_memory_scale, else 1: what
  // the planner multiplies an unmeasured prediction by.
  double PlanMemoryScale(TrainingFramework framework) const;
  int MemoryCells(TrainingFramework framework) const;

  // The floor a failed run of `method` on `sku_id` sets under the method's
  // recipes there (MethodMemoryFloor); nullopt where no such run reached
  // more than its recipe's figure.
  std::optional<MethodMemoryFloor> MethodMemory(FineTuneMethod method,
                                                absl::string_view sku_id) const;

  int step_time_cells() const { return step_time_cells_; }
  // The spread of log(measured / fitted) over the fitted cells.
  double residual_log_sd() const { return residual_log_sd_; }
  double global_log_offset() const { return global_; }
  // log offset of a SKU (0 for one never measured).
  double SkuLogOffset(absl::string_view sku_id) const;

 private:
  struct RecipeTerm {
    double offset = 0;
    double factor = 0;
    std::vector<std::string> skus;
  };
  struct SkuTerm {
    double offset = 0;
    double factor = 0;
  };
  struct MemoryTerm {
    double scale = 1;
    int cells = 0;
  };
  // One cell's log(measured / prior) step time, with its terms.
  struct StepTimeObservation {
    RecipeTerm* recipe;
    SkuTerm* sku;
    double* method_sku;  // nullptr for a cell of no method
    double log_ratio;
  };

  // Fit's steps: the step-time observations (creating their terms), the
  // ridge sweeps over the terms, the spreads, and the memory scales.
  std::vector<StepTimeObservation> CollectStepTimeObservations(
      const std::vector<FleetCell>& cells);
  double Fitted(const StepTimeObservation& o) const;
  void UpdateOffsets(const std::vector<StepTimeObservation>& obs,
                     const FleetModelOptions& options);
  void UpdateInteraction(const std::vector<StepTimeObservation>& obs,
                         const FleetModelOptions& options);
  void FitSpreads(const std::vector<StepTimeObservation>& obs,
                  const FleetModelOptions& options);
  void FitMemoryScales(const std::vector<FleetCell>& cells,
                       const FleetModelOptions& options);
  void FitStartups(const std::vector<FleetCell>& cells);
  void FitMethodMemoryFloors(const std::vector<FleetCell>& cells);

  double global_ = 0;
  std::map<std::string, RecipeTerm, std::less<>> recipes_;
  std::map<std::string, SkuTerm, std::less<>> skus_;
  // (method, SKU) -> its offset.
  std::map<std::pair<FineTuneMethod, std::string>, double> method_skus_;
  std::map<TrainingFramework, MemoryTerm> memory_;
  std::map<std::pair<FineTuneMethod, std::string>, MethodMemoryFloor>
      method_memory_floors_;
  std::map<std::string, ModelStartup, std::less<>> startups_;
  int step_time_cells_ = 0;
  double residual_log_sd_ = 0;
  // The spread of the recipe offsets (with the prior's weight), which a
  // recipe never measured adds to the residual: computed once by Fit, not
  // over every recipe on each StepTime.
  double recipe_offset_sd_ = 0;
  double prior_log_sd_ = 0.3;
  double prior_sd_weight_ = 2;
  bool apply_memory_scale_ = false;
};

// The cells of `evidence` (normalized recipes with their statistics on
// one SKU each; SKUs resolved in `skus`, others skipped): step time from the
// runs with successful steps, against the analytic prior on a pool of the
// card like the published runs' (8 GPUs a node, NVLink when the card has
// it, InfiniBand between nodes); peak memory only where every run
// succeeded without offload, against the memory model's figure of the kind
// the recipe reports.
std::vector<FleetCell> FleetCellsFromEvidence(
    const std::vector<KeyedEvidence>& evidence,
    const std::vector<GpuSku>& skus);

// The analytic step time of `recipe` on such a pool of `sku` (0 when the
// recipe's model does not resolve).
double PriorStepTimeS(const Recipe& recipe, const GpuSku& sku);

// Peak memory of a recipe key carried over from another SKU.
struct CrossSkuMemory {
  std::string from_sku_id;
  std::string recipe_key;
  double source_peak_gb = 0;         // measured peak on from_sku_id
  double peak_gb = 0;                // carried to the target card
  double context_adjustment_gb = 0;  // target context - source context
  // The smallest usable memory, context difference added, of a card where
  // every run of the key succeeded (ceiling_sku_id): no run peaked above it
  // (ProvenPeakCeiling).
  double ceiling_gb = 0;
  std::string ceiling_sku_id;
  EvidenceStats source;  // what was measured there
};

// The CUDA context (and runtime) a card holds besides the training's own
// tensors. The memory model keeps one figure for every card
// (MemoryModelConstants::cuda_context_gb; stas00's ML engineering notes
// measure 0.47-0.92 GiB depending on card and CUDA version, not tabulated
// per card), so the adjustment is 0 between catalog cards today; kept
// explicit so a per-card figure changes one function.
double CardContextGb(const GpuSku& sku);

// Among `measured` (statistics of ONE recipe key on other SKUs), the one to
// carry to `target`: runs that all succeeded without offload (an OOM's or
// an offloaded run's peak is not the recipe's), most successful runs, then
// SKU id. The peak is shifted by the difference of the cards' context
// overhead; the ceiling is the smallest such card's. nullopt when none
// qualifies.
std::optional<CrossSkuMemory> CrossSkuMemoryTransfer(
    const std::vector<std::pair<const GpuSku*, EvidenceStats>>& measured,
    const GpuSku& target);

}  // namespace placement::core

#endif  // PLACEMENT_CORE_EVIDENCE_FLEET_MODEL_H_
