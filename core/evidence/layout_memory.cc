#include "core/evidence/layout_memory.h"

#include <tuple>

namespace placement::core {
namespace {

bool SameLayout(const Recipe& a, const Recipe& b) {
  return a.gpu_count == b.gpu_count && a.parallelism == b.parallelism &&
         a.tensor_parallel_degree == b.tensor_parallel_degree &&
         a.pipeline_parallel_degree == b.pipeline_parallel_degree &&
         a.data_parallel_degree == b.data_parallel_degree;
}

}  // namespace

bool IsSameRecipeInAnyLayout(const Recipe& other, const Recipe& target) {
  Recipe relaid = other;
  relaid.gpu_count = target.gpu_count;
  relaid.parallelism = target.parallelism;
  relaid.tensor_parallel_degree = target.tensor_parallel_degree;
  relaid.pipeline_parallel_degree = target.pipeline_parallel_degree;
  relaid.data_parallel_degree = target.data_parallel_degree;
  return IsTransferable(relaid, target);
}

bool IsSiblingLayout(const Recipe& sibling, const Recipe& target) {
  return !SameLayout(sibling, target) &&
         IsSameRecipeInAnyLayout(sibling, target);
}

std::optional<LayoutMemoryScale> SiblingLayoutMemory(
    const std::vector<KeyedEvidence>& measured, const Recipe& target,
    const ModelArchitecture& arch, const MemoryModelConstants& constants) {
  std::optional<LayoutMemoryScale> best;
  for (const KeyedEvidence& e : measured) {
    const EvidenceStats& s = e.stats;
    // An offloaded run's peak is not the recipe's on-GPU need.
    if (s.runs <= 0 || s.offload_share > 0 || !(s.max_peak_memory_gb > 0) ||
        !IsSiblingLayout(e.recipe, target)) {
      continue;
    }
    const double predicted =
        PredictPeakMemory(e.recipe, arch, constants).total_gb;
    if (!(predicted > 0)) continue;
    const double scale = s.max_peak_memory_gb / predicted;
    if (!(scale > 1)) continue;
    if (best && std::make_tuple(-scale, s.recipe_key) >=
                    std::make_tuple(-best->scale, best->recipe_key)) {
      continue;
    }
    best = LayoutMemoryScale{
        scale,
        e.recipe,
        s.recipe_key,
        s.max_peak_memory_gb,
        predicted,
        s.successful_runs == 0 || s.max_peak_memory_gb > s.peak_memory_gb};
  }
  return best;
}

std::optional<LayoutMemoryScale> SucceededSiblingLayout(
    const std::vector<KeyedEvidence>& measured, const Recipe& target,
    const ModelArchitecture& arch, const MemoryModelConstants& constants) {
  std::optional<LayoutMemoryScale> best;
  for (const KeyedEvidence& e : measured) {
    const EvidenceStats& s = e.stats;
    if (s.successful_runs <= 0 || s.offload_share > 0 ||
        !(s.peak_memory_gb > 0) || !IsSiblingLayout(e.recipe, target)) {
      continue;
    }
    const double predicted =
        PredictPeakMemory(e.recipe, arch, constants).total_gb;
    if (!(predicted > 0)) continue;
    const double scale = s.peak_memory_gb / predicted;
    if (best && std::make_tuple(-scale, s.recipe_key) >=
                    std::make_tuple(-best->scale, best->recipe_key)) {
      continue;
    }
    best = LayoutMemoryScale{
        scale, e.recipe, s.recipe_key, s.peak_memory_gb, predicted, false};
  }
  return best;
}

}  // namespace placement::core
