#include "core/evidence/layout_memory.h"

#include <tuple>
#include <utility>

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

namespace {

// `candidate` replaces `best` when it is further above its figure (then
// by recipe key).
void KeepMostAbove(std::optional<LayoutMemoryScale>& best,
                   LayoutMemoryScale candidate) {
  if (best && std::make_tuple(-candidate.scale, candidate.recipe_key) >=
                  std::make_tuple(-best->scale, best->recipe_key)) {
    return;
  }
  best = std::move(candidate);
}

}  // namespace

SiblingLayouts ReadSiblingLayouts(const std::vector<KeyedEvidence>& measured,
                                  const Recipe& target,
                                  const ModelArchitecture& arch,
                                  const MemoryModelConstants& constants) {
  SiblingLayouts found;
  for (const KeyedEvidence& e : measured) {
    const EvidenceStats& s = e.stats;
    // An offloaded run's peak is not the recipe's on-GPU need.
    if (s.runs <= 0 || s.offload_share > 0 ||
        !(s.max_peak_memory_gb > 0 || s.peak_memory_gb > 0) ||
        !IsSiblingLayout(e.recipe, target)) {
      continue;
    }
    const double predicted =
        PredictPeakMemory(e.recipe, arch, constants).total_gb;
    if (!(predicted > 0)) continue;
    if (const double scale = s.max_peak_memory_gb / predicted; scale > 1) {
      KeepMostAbove(
          found.raise,
          LayoutMemoryScale{scale, e.recipe, s.recipe_key, s.max_peak_memory_gb,
                            predicted,
                            s.successful_runs == 0 ||
                                s.max_peak_memory_gb > s.peak_memory_gb});
    }
    if (s.successful_runs > 0 && s.peak_memory_gb > 0) {
      KeepMostAbove(
          found.succeeded,
          LayoutMemoryScale{s.peak_memory_gb / predicted, e.recipe,
                            s.recipe_key, s.peak_memory_gb, predicted, false});
    }
  }
  return found;
}

std::optional<LayoutMemoryScale> SiblingLayoutMemory(
    const std::vector<KeyedEvidence>& measured, const Recipe& target,
    const ModelArchitecture& arch, const MemoryModelConstants& constants) {
  return ReadSiblingLayouts(measured, target, arch, constants).raise;
}

std::optional<LayoutMemoryScale> SucceededSiblingLayout(
    const std::vector<KeyedEvidence>& measured, const Recipe& target,
    const ModelArchitecture& arch, const MemoryModelConstants& constants) {
  return ReadSiblingLayouts(measured, target, arch, constants).succeeded;
}

}  // namespace placement::core
