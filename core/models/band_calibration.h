#ifndef PLACEMENT_CORE_MODELS_BAND_CALIBRATION_H_
#define PLACEMENT_CORE_MODELS_BAND_CALIBRATION_H_

// Bands calibrated for coverage, by the kind of recipe and by what the
// estimate extrapolates from. Each factor pair is the p10..p90 of
// measured / predicted over the published runs, every run predicted by
// constants fitted WITHOUT its own publication (leave-one-source-out), so
// that a band holds ~80% of runs nobody calibrated on:
//
//  - by method group (memory: full, LoRA, QLoRA; step time: full vs the
//    adapter methods, the split the step-time model itself makes), and
//    within one by framework, where the cell has at least
//    kMinBandCellRows residuals from at least kMinBandCellPublications
//    publications and its band differs from the one it would otherwise get
//    by at least kMinBandCellDifference at an edge; every other recipe
//    gets the band of the rows no cell took (kMemoryBandOtherRecipes,
//    kStepTimeBandOtherRecipes: without cells, fit.h's pooled bands, the
//    p10..p90 over all rows, which MemoryBand() and StepTimeBand() keep
//    for a caller that does not know the recipe). The residuals cluster by
//    publication (one author's setup, not the method, moves them most): a cell
//    drawn from one or two publications is that publication's offset, and
//    holding each publication out of the calibration as well showed such cells
//    covering fewer of its runs than the pooled band;
//  - wider where the estimate extrapolates: a model size, SKU family or
//    layout that no measured run had. Those factors are the p10..p90 of
//    the residuals when every run of one size class (SKU family, layout)
//    is held out at once; a band takes the union of its recipe's band and
//    each extrapolation's.
//
// Edges are rounded outwards to the next 0.05 and always contain 1 (a band
// holds its own estimate). tests/core/fitting/band_coverage_test.cc
// derives every factor below from
// tests/core/testdata/published_finetune_measurements.csv, fails when one
// drifts from its derivation, and prints each band's coverage:
//   ctest --test-dir build/release -R ModelCrossValidation -V

#include <optional>
#include <span>

#include "core/models/fit.h"
#include "core/recipe.h"

namespace placement::core {

// What an estimate extrapolates from: true where nothing measured had it
// (in the published runs the constants were fitted to, or in the fleet's
// evidence when the caller knows better).
struct Extrapolation {
  bool model_size = false;  // no measured model within x1.3 of its params
  bool sku = false;         // no measured run on the SKU's family
  bool layout = false;      // no measured run with its parallelism
                            // (single GPU; DDP; FSDP/ZeRO-3 sharded; ...)

  bool any() const { return model_size || sku || layout; }
};

// A band's edges as factors on the point estimate.
struct BandFactors {
  double low = 1;
  double high = 1;

  friend bool operator==(const BandFactors&, const BandFactors&) = default;
};

// The residuals are grouped by method, as the models differ by method.
enum class BandMethodGroup {
  kOther = 0,    // head-only and unspecified: pooled
  kFull = 1,     // every weight trains
  kLora = 2,     // memory: 16-bit base + adapters
  kQlora = 3,    // memory: NF4 base + adapters
  kAdapter = 4,  // step time: LoRA and QLoRA together
};
BandMethodGroup MemoryBandMethodGroup(FineTuneMethod method);
BandMethodGroup StepTimeBandMethodGroup(FineTuneMethod method);
const char* BandMethodGroupName(BandMethodGroup group);

// A calibrated cell: a method group, all its frameworks or one.
struct BandCell {
  BandMethodGroup method = BandMethodGroup::kOther;
  std::optional<TrainingFramework> framework;  // nullopt: every framework
  BandFactors factors;
};

// The rule that keeps a cell (see the file comment).
inline constexpr int kMinBandCellRows = 8;
inline constexpr int kMinBandCellPublications = 3;
inline constexpr double kMinBandCellDifference = 0.1;

// The calibrated cells (the rest is pooled). Step time has none: its
// full-weight rows are one benchmark's pre-training runs, its adapter rows
// two publications'.
inline constexpr BandCell kMemoryBandCells[] = {
    {BandMethodGroup::kLora, std::nullopt, {0.95, 1.15}},
};
inline constexpr std::span<const BandCell> kStepTimeBandCells = {};
// The rows no cell took: full and QLoRA memory; every step time.
inline constexpr BandFactors kMemoryBandOtherRecipes = {0.90, 1.30};
inline constexpr BandFactors kStepTimeBandOtherRecipes = {
    kStepTimeBandLowFactor, kStepTimeBandHighFactor};

// Where the estimate extrapolates (each of model size, SKU family, layout).
inline constexpr BandFactors kMemoryBandModelSizeExtrapolation = {0.95, 1.25};
inline constexpr BandFactors kMemoryBandSkuExtrapolation = {0.95, 1.20};
inline constexpr BandFactors kMemoryBandLayoutExtrapolation = {0.95, 1.30};
inline constexpr BandFactors kStepTimeBandModelSizeExtrapolation = {0.80, 1.35};
inline constexpr BandFactors kStepTimeBandSkuExtrapolation = {0.75, 1.35};
inline constexpr BandFactors kStepTimeBandLayoutExtrapolation = {0.75, 1.55};

// The factors of the most specific cell of (group, framework) in `cells`:
// the framework's own, else the whole group's, else `pooled`.
BandFactors CellBandFactors(std::span<const BandCell> cells,
                            BandMethodGroup group, TrainingFramework framework,
                            BandFactors pooled);

// The factors for a recipe (its cell, else the other recipes' band), widened by
// each extrapolation.
BandFactors MemoryBandFactors(const Recipe& recipe,
                              const Extrapolation& extrapolation = {});
BandFactors StepTimeBandFactors(const Recipe& recipe,
                                const Extrapolation& extrapolation = {});

// The band of a point estimate under those factors.
Band MemoryBandFor(const Recipe& recipe, double predicted_gb,
                   const Extrapolation& extrapolation = {});
Band StepTimeBandFor(const Recipe& recipe, double predicted_step_time_s,
                     const Extrapolation& extrapolation = {});

}  // namespace placement::core

#endif  // PLACEMENT_CORE_MODELS_BAND_CALIBRATION_H_
