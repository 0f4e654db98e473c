#ifndef PLACEMENT_CORE_EVIDENCE_LAYOUT_MEMORY_H_
#define PLACEMENT_CORE_EVIDENCE_LAYOUT_MEMORY_H_

// What the runs of a recipe in its other layouts on one card say about the
// peak memory of a layout not measured there. The memory model's error on a
// card is mostly the recipe's (its allocator's fragmentation, activations at
// its length and micro-batch, the framework's buffers), which every layout
// of the recipe carries: a 3B full fine-tune that ran out of memory on one
// A100-40GB needs more than predicted on two of them too. So a layout with
// no evidence of its own (measured, from a nearby recipe of its layout, or
// from another card) has its prediction raised by the largest factor by
// which a sibling layout's runs exceeded theirs: a succeeded run's peak
// exactly, a run that ran out of memory at least as far as it got.
//
// Only raised, never lowered: a fit is a conservative decision (the planner
// fits with a layout's LARGEST measured peak), a sibling that needed less
// than predicted shows only that its own terms were over-estimated, and a
// layout that then runs out of memory costs a start-up and a move, where
// one kept BORDERLINE costs a measurement. Pure: no I/O.

#include <optional>
#include <string>
#include <vector>

#include "core/evidence/evidence.h"
#include "core/models/memory_model.h"
#include "core/recipe.h"

namespace placement::core {

// The sibling layout a raised prediction rests on.
struct LayoutMemoryScale {
  double scale = 1;  // > 1: multiply the prediction by this
  Recipe recipe;     // the sibling, normalized
  std::string recipe_key;
  double peak_gb = 0;       // the largest peak its runs reached
  double predicted_gb = 0;  // the memory model's figure for it
  // The largest peak is of a run that did not succeed: as far as it got
  // before it failed (out of memory, most often), a lower bound of what the
  // sibling needs.
  bool lower_bound = false;
};

// Whether `other` is `target`'s recipe in any layout: the same model,
// method, adapter, precision, optimizer and master weights, as
// IsTransferable asks it but for the layout and GPU count (another
// length, micro-batch or checkpointing is the same recipe too).
bool IsSameRecipeInAnyLayout(const Recipe& other, const Recipe& target);

// Whether `sibling`'s memory may inform `target`'s: the same model,
// method, adapter, precision, optimizer and master weights, another
// parallel layout or GPU count (the same layout is a nearby recipe:
// TransferEvidence).
bool IsSiblingLayout(const Recipe& sibling, const Recipe& target);

// Among `measured` (recipes measured on one SKU, normalized), the sibling
// layouts of `target` that ran without offload, the one whose largest peak
// exceeds the memory model's figure by the largest factor (then recipe
// key); nullopt when none exceeds it. `arch` is the model's.
std::optional<LayoutMemoryScale> SiblingLayoutMemory(
    const std::vector<KeyedEvidence>& measured, const Recipe& target,
    const ModelArchitecture& arch,
    const MemoryModelConstants& constants = DefaultMemoryModelConstants());

// Among `measured` (as above), the sibling layout of `target` whose runs
// succeeded without offload and whose largest succeeded peak (exact) is
// the most above the memory model's figure for it, or the least below
// (then recipe key); nullopt when none succeeded. Such a run measured the
// model's error for the recipe on this card, its setup included: a
// prediction it checks (raised to its excess, never lowered) is held by
// how that error differs between two configurations of one recipe
// (CarriedMemoryBandFactors), not by an estimate's band alone.
std::optional<LayoutMemoryScale> SucceededSiblingLayout(
    const std::vector<KeyedEvidence>& measured, const Recipe& target,
    const ModelArchitecture& arch,
    const MemoryModelConstants& constants = DefaultMemoryModelConstants());

// Both of the above in one pass over `measured` (the memory model run once
// per sibling): what the planner reads for each configuration.
struct SiblingLayouts {
  std::optional<LayoutMemoryScale> raise;      // SiblingLayoutMemory
  std::optional<LayoutMemoryScale> succeeded;  // SucceededSiblingLayout
};
SiblingLayouts ReadSiblingLayouts(
    const std::vector<KeyedEvidence>& measured, const Recipe& target,
    const ModelArchitecture& arch,
    const MemoryModelConstants& constants = DefaultMemoryModelConstants());

}  // namespace placement::core

#endif  // PLACEMENT_CORE_EVIDENCE_LAYOUT_MEMORY_H_
