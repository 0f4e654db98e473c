#ifndef PLACEMENT_CORE_ADAPTER_MODULES_H_
#define PLACEMENT_CORE_ADAPTER_MODULES_H_

// Adapter methods and the module names they target, shared by recipe
// normalization and validation.

#include <string>

#include "absl/strings/string_view.h"
#include "core/recipe.h"

namespace placement::core {

// Maps "q_proj", "Q", "gate_proj" ... to canonical names; "" if unknown.
std::string CanonicalModule(absl::string_view name);

// "all-linear", "all_linear" or "all", in any case.
bool IsAllLinear(absl::string_view name);

// LoRA or QLoRA: the methods that train an adapter.
bool IsAdapter(FineTuneMethod method);

// Whether an adapter type has a rank (lora_rank) / adapts target modules.
// Unspecified reads as LORA.
bool AdapterHasRank(AdapterType adapter);
bool AdapterHasTargets(AdapterType adapter);

}  // namespace placement::core

#endif  // PLACEMENT_CORE_ADAPTER_MODULES_H_
