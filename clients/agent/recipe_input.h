#ifndef PLACEMENT_CLIENTS_AGENT_RECIPE_INPUT_H_
#define PLACEMENT_CLIENTS_AGENT_RECIPE_INPUT_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "placement/v1/recipe.pb.h"

namespace placement::agent {

// The recipe of a `run --recipe FILE`: a YAML or JSON file holding either a
// bare Recipe (`model: ...`) or a whole PlacePlanRequest (`recipe: {...}`,
// the file `placectl plan --recipe` takes), in the notation of
// clients/placectl/recipe_file.h. InvalidArgument naming the field and line
// when it is neither; NotFound when the file cannot be read.
absl::StatusOr<v1::Recipe> ReadRecipeFile(const std::string& path);
absl::StatusOr<v1::Recipe> ParseRecipeText(absl::string_view text,
                                           absl::string_view source);

// The recipe as JSON with proto field names, which ReadRecipeFile reads.
std::string RecipeToJson(const v1::Recipe& recipe);

}  // namespace placement::agent

#endif  // PLACEMENT_CLIENTS_AGENT_RECIPE_INPUT_H_
