#ifndef PLACEMENT_CORE_PLAN_STANDARD_H_
#define PLACEMENT_CORE_PLAN_STANDARD_H_

// Standards: decision records that a recipe class runs on a pool, written
// once a plan's bake-off proved it ("prove the exact recipe before you
// write the standard") and kept "until the graphs say otherwise". A plan
// under an active standard ranks the standard's pool first while every rule
// still passes for it, and says when later evidence contradicts it.

#include <optional>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "core/models/fit.h"
#include "core/plan/plan_types.h"
#include "core/recipe.h"

namespace placement::core {

struct Standard {
  std::string standard_id;
  std::string request_id;
  // Only the class's fields (RecipeClassOf) are set.
  Recipe recipe_class;
  std::string pool_name;
  std::string sku_id;
  std::string plan_id;
  std::string written_by;
  std::string team;
  std::string reason;
  absl::Time created = absl::InfinitePast();
  // The evidence when written: the pool's cost per successful step band in
  // the bake-off's verdict (micro-units), and its failure-rate band
  // (failures per hour, p10-p90).
  Band cost_micros_per_successful_step_band;
  Band failure_rate_per_hour_band;
  std::optional<absl::Time> retired;
  std::string retired_by;
  std::string retire_reason;

  bool active() const { return !retired.has_value(); }
};

// The fields that define a recipe class, each matching anything when unset
// (empty, 0 or kUnspecified): model, method, adapter, lora_rank,
// sequence_length, micro_batch_size, precision, gpu_count, parallelism.
// `recipe` with every other field cleared.
Recipe RecipeClassOf(const Recipe& recipe);

// The class a bake-off of `recipe` proves by default: its model, method,
// adapter, LoRA rank, sequence length and precision (the settings the
// bake-off held equal), the layout left open.
Recipe DefaultRecipeClass(const Recipe& recipe);

// Whether `recipe` is in `recipe_class`: every set class field is equal.
bool InRecipeClass(const Recipe& recipe, const Recipe& recipe_class);

// How many class fields are set: the more, the more specific.
int Specificity(const Recipe& recipe_class);

// The standard that governs `recipe` among `standards` (active ones only
// count): the most specific class it is in, then the newest, then the
// smallest id. Null when none matches.
const Standard* ChooseStandard(const std::vector<Standard>& standards,
                               const Recipe& recipe);

// Applies the standard that governs `result->recipe` (ChooseStandard), if
// any: when its pool is a candidate (every rule passes for it) it is ranked
// first, the others keep their order after it, and ranks are renumbered;
// otherwise nothing moves and the reason names the rejection. The plan's
// eval requirement and status follow its new first candidate. Contradicted
// when, among the candidates now, another MEASURED candidate's expected
// cost band (the projection's: step-time band and failure-rate p10-p90)
// lies wholly below the standard pool's (its high < the standard pool's
// low), or the
// standard pool's failure-rate p10 exceeds the p90 recorded when the
// standard was written. Sets result->standard.
void ApplyStandard(const std::vector<Standard>& standards, PlanResult* result);

}  // namespace placement::core

#endif  // PLACEMENT_CORE_PLAN_STANDARD_H_
