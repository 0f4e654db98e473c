#ifndef PLACEMENT_CORE_PLAN_CONFIGURATION_EVALUATION_H_
#define PLACEMENT_CORE_PLAN_CONFIGURATION_EVALUATION_H_

// One configuration of a recipe on one pool: the guide's rules checked, the
// memory fit and the step time estimated from the evidence at hand, and the
// best configuration of a pool chosen. The planner (core/plan/planner.h)
// calls these for every configuration EnumerateConfigurations proposes.

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "core/evidence/evidence.h"
#include "core/evidence/fleet_model.h"
#include "core/evidence/layout_memory.h"
#include "core/models/memory_model.h"
#include "core/plan/plan_types.h"
#include "core/plan/rules.h"
#include "core/pool.h"
#include "core/recipe.h"
#include "core/sku.h"

namespace placement::core {

// One configuration of the recipe on one pool, checked and estimated.
struct ConfigurationOutcome {
  Recipe recipe;  // normalized, valid
  std::string recipe_key;
  std::optional<RuleRejection> rejection;  // set: not viable
  MemoryBreakdown predicted_memory;
  FitVerdict fit;
  Candidate candidate;  // filled when viable (rank 0)
};

// Evidence a configuration is estimated from, looked up by the caller.
struct ConfigurationEvidence {
  const EvidenceStats* measured = nullptr;
  const TransferredEvidence* transferred = nullptr;
  // Used only without `measured` and `transferred`.
  const CrossSkuMemory* cross_sku = nullptr;
  const FleetStepTime* fleet_step_time = nullptr;
  // The fleet's factor on the predicted memory (without measured evidence).
  double memory_scale = 1;
  // A sibling layout's runs on this SKU that exceeded their prediction
  // (SiblingLayoutMemory): used, like `memory_scale`, without observed
  // memory, the larger of the two.
  const LayoutMemoryScale* sibling_memory = nullptr;
  // A sibling layout whose runs succeeded on this SKU
  // (SucceededSiblingLayout): a prediction it checks gets a band carried
  // from it (CarriedMemoryBandFactors). Used only with `sibling_memory`'s
  // conditions.
  const LayoutMemoryScale* succeeded_sibling = nullptr;
  // The floor a failed run of the recipe's method set on this SKU
  // (FleetModel::MethodMemory): raises, like `sibling_memory`, a prediction
  // without observed memory, and a peak carried from another SKU
  // (`cross_sku`); only where no run of the recipe on this SKU (its own,
  // a nearby recipe's or a sibling layout's) speaks first.
  const MethodMemoryFloor* method_floor = nullptr;
  // The start-up the model's measured layouts ran with (FleetModel::
  // Startup): used where this SKU's runs give none, in place of the prior.
  const ModelStartup* model_startup = nullptr;
  // The pool's failure sums for single- and multi-GPU runs (null: none).
  const PoolReliabilityRollup* pool_single_gpu = nullptr;
  const PoolReliabilityRollup* pool_multi_gpu = nullptr;
};

// Checks one configuration on `pool` (quota, fabric, inter-node fabric,
// retries, fit, deadline) and estimates it; `predicted` is the memory
// model's prediction for it. Never fails. With `explain` false only the
// figures, verdicts and rule names are filled, no reason or warning text
// (the search explains only what it keeps).
ConfigurationOutcome EvaluateConfiguration(
    const PlanRequest& request, const Recipe& configuration,
    const ModelArchitecture& arch, const MemoryBreakdown& predicted,
    const Pool& pool, const GpuSku& sku, const ConfigurationEvidence& evidence,
    bool explain = true);

// The index of the best viable outcome (by RankingValue; for kLowestCost a
// BORDERLINE one at its RiskPricedValue against `fallback_value`, the value
// of where the job would go should it run out of memory (the plan's
// RiskFallback over every pool's configurations; when not given, the
// pool's own: its best FITS configuration or, with none, the one likeliest
// to fit), and at equal value FITS first, then the least peak memory per
// GPU; for the other objectives FITS first and, with no FITS one, the
// BORDERLINE one with the least peak memory per GPU, the likeliest to run
// when measured; then fewer GPUs, then enumeration order), or, when none
// is viable, of the rejection to report: the configuration with the least
// predicted memory per GPU (the most relieved one), ties to more GPUs.
size_t ChooseConfiguration(const std::vector<ConfigurationOutcome>& outcomes,
                           Objective objective,
                           std::optional<double> fallback_value = std::nullopt);

}  // namespace placement::core

#endif  // PLACEMENT_CORE_PLAN_CONFIGURATION_EVALUATION_H_
