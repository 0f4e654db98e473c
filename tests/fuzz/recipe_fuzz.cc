// The recipe normalizer and validator on any input: never a crash or
// undefined behaviour, normalization is idempotent, and the recipe key is a
// function of the normalized recipe.
#include <cmath>
#include <cstdlib>

#include "core/model_catalog.h"
#include "core/models/memory_model.h"
#include "core/recipe.h"
#include "services/api/recipe_convert.h"
#include "tests/fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  placement::v1::Recipe proto;
  if (!placement::fuzz::ParseInput(data, size, &proto)) return 0;
  using namespace placement::core;
  const Recipe once =
      NormalizeRecipe(placement::services::RecipeFromProto(proto));
  const Recipe twice = NormalizeRecipe(once);
  if (!(once == twice)) std::abort();  // normalization must be idempotent
  if (RecipeKey(once) != RecipeKey(twice)) std::abort();
  // Round trip through the API type keeps the normalized recipe.
  const Recipe back = NormalizeRecipe(placement::services::RecipeFromProto(
      placement::services::RecipeToProto(once)));
  if (RecipeKey(back) != RecipeKey(once)) std::abort();
  if (!ValidateRecipe(once).empty()) return 0;
  absl::StatusOr<ModelArchitecture> arch = ResolveArchitecture(once);
  if (!arch.ok()) return 0;
  const MemoryBreakdown memory =
      PredictPeakMemory(once, *arch, DefaultMemoryModelConstants());
  if (!std::isfinite(memory.total_gb) || memory.total_gb <= 0) std::abort();
  return 0;
}
