#include "core/models/band_calibration.h"

#include <algorithm>
#include <string>

namespace placement::core {
namespace {

BandFactors Union(BandFactors a, BandFactors b) {
  return {std::min(a.low, b.low), std::max(a.high, b.high)};
}

BandFactors Widened(BandFactors factors, const Extrapolation& e,
                    BandFactors model_size, BandFactors sku, BandFactors layout,
                    BandFactors framework) {
  if (e.model_size) factors = Union(factors, model_size);
  if (e.sku) factors = Union(factors, sku);
  if (e.layout) factors = Union(factors, layout);
  if (e.framework) factors = Union(factors, framework);
  return factors;
}

// A model counts as measured when a calibrated one is within this factor
// of its parameter count (7B and 8B are one size, 7B and 13B are not).
constexpr double kSameModelSizeFactor = 1.3;

}  // namespace

BandFactors CellBandFactors(std::span<const BandCell> cells,
                            BandMethodGroup group, TrainingFramework framework,
                            BandFactors pooled) {
  std::optional<BandFactors> group_wide;
  for (const BandCell& cell : cells) {
    if (cell.method != group) continue;
    if (cell.framework == framework) return cell.factors;
    if (!cell.framework.has_value()) group_wide = cell.factors;
  }
  return group_wide.value_or(pooled);
}

BandMethodGroup MemoryBandMethodGroup(FineTuneMethod method) {
  switch (method) {
    case FineTuneMethod::kFull:
      return BandMethodGroup::kFull;
    case FineTuneMethod::kLora:
      return BandMethodGroup::kLora;
    case FineTuneMethod::kQlora:
      return BandMethodGroup::kQlora;
    default:
      return BandMethodGroup::kOther;
  }
}

BandMethodGroup StepTimeBandMethodGroup(FineTuneMethod method) {
  switch (method) {
    case FineTuneMethod::kFull:
      return BandMethodGroup::kFull;
    case FineTuneMethod::kLora:
    case FineTuneMethod::kQlora:
      return BandMethodGroup::kAdapter;
    default:
      return BandMethodGroup::kOther;
  }
}

const char* BandMethodGroupName(BandMethodGroup group) {
  switch (group) {
    case BandMethodGroup::kFull:
      return "full";
    case BandMethodGroup::kLora:
      return "lora";
    case BandMethodGroup::kQlora:
      return "qlora";
    case BandMethodGroup::kAdapter:
      return "adapter";
    case BandMethodGroup::kOther:
      break;
  }
  return "other";
}

BandFactors MemoryBandFactors(const Recipe& recipe,
                              const Extrapolation& extrapolation) {
  const BandFactors cell =
      CellBandFactors(kMemoryBandCells, MemoryBandMethodGroup(recipe.method),
                      recipe.framework, kMemoryBandCalibrated);
  return Widened(cell, extrapolation, kMemoryBandModelSizeExtrapolation,
                 kMemoryBandSkuExtrapolation, kMemoryBandLayoutExtrapolation,
                 kMemoryBandFrameworkExtrapolation);
}

BandFactors StepTimeBandFactors(const Recipe& recipe,
                                const Extrapolation& extrapolation) {
  const BandFactors cell = CellBandFactors(
      kStepTimeBandCells, StepTimeBandMethodGroup(recipe.method),
      recipe.framework, kStepTimeBandCalibrated);
  return Widened(cell, extrapolation, kStepTimeBandModelSizeExtrapolation,
                 kStepTimeBandSkuExtrapolation,
                 kStepTimeBandLayoutExtrapolation,
                 kStepTimeBandFrameworkExtrapolation);
}

const char* LayoutClassOf(const Recipe& recipe) {
  if (recipe.gpu_count <= 1) return "single";
  switch (recipe.parallelism) {
    case Parallelism::kFsdp:
    case Parallelism::kZero3:
      return "sharded";
    default:
      return ParallelismName(recipe.parallelism);
  }
}

Extrapolation MemoryExtrapolationOf(const Recipe& recipe,
                                    const ModelArchitecture& arch) {
  Extrapolation e{.model_size = true, .layout = true, .framework = true};
  const double params_b = static_cast<double>(arch.Params()) / 1e9;
  for (double measured : kMemoryCalibratedModelParamsB) {
    const double ratio = measured / std::max(params_b, 1e-9);
    if (ratio <= kSameModelSizeFactor && ratio >= 1 / kSameModelSizeFactor) {
      e.model_size = false;
    }
  }
  const std::string layout = LayoutClassOf(recipe);
  for (const char* measured : kMemoryCalibratedLayouts) {
    if (layout == measured) e.layout = false;
  }
  const TrainingFramework framework =
      recipe.framework == TrainingFramework::kUnspecified
          ? TrainingFramework::kOther
          : recipe.framework;
  for (TrainingFramework measured : kMemoryCalibratedFrameworks) {
    if (framework == measured) e.framework = false;
  }
  return e;
}

std::optional<BandFactors> CarriedMemoryBandFactors(
    BandFactors estimate_band, double carried_over_estimate) {
  if (!(carried_over_estimate > 0)) return std::nullopt;
  const double low = std::max(estimate_band.low,
                              kMemoryBandCarried.low * carried_over_estimate);
  const double high = std::min(estimate_band.high,
                               kMemoryBandCarried.high * carried_over_estimate);
  if (low > high) return std::nullopt;
  return BandFactors{std::min(low, 1.0), std::max(high, 1.0)};
}

Band MemoryBandFor(const Recipe& recipe, double predicted_gb,
                   const Extrapolation& extrapolation) {
  const BandFactors f = MemoryBandFactors(recipe, extrapolation);
  return {predicted_gb * f.low, predicted_gb * f.high};
}

Band StepTimeBandFor(const Recipe& recipe, double predicted_step_time_s,
                     const Extrapolation& extrapolation) {
  const BandFactors f = StepTimeBandFactors(recipe, extrapolation);
  return {predicted_step_time_s * f.low, predicted_step_time_s * f.high};
}

}  // namespace placement::core
