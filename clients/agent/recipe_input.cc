#include "clients/agent/recipe_input.h"

#include <google/protobuf/util/json_util.h>

#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "clients/placectl/recipe_file.h"

namespace placement::agent {

absl::StatusOr<v1::Recipe> ParseRecipeText(absl::string_view text,
                                           absl::string_view source) {
  absl::StatusOr<v1::PlacePlanRequest> request =
      placectl::ParsePlanRequestText(text, source);
  if (request.ok() && request->has_recipe()) return request->recipe();
  absl::StatusOr<std::string> json =
      placectl::YamlToProtoJson(text, *v1::Recipe::descriptor());
  if (!json.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat(source, ": ", json.status().message()));
  }
  v1::Recipe recipe;
  google::protobuf::util::JsonParseOptions options;
  options.ignore_unknown_fields = false;
  auto parsed =
      google::protobuf::util::JsonStringToMessage(*json, &recipe, options);
  if (!parsed.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat(source, ": ", std::string(parsed.message())));
  }
  return recipe;
}

absl::StatusOr<v1::Recipe> ReadRecipeFile(const std::string& path) {
  std::ifstream file(path);
  if (!file) return absl::NotFoundError(absl::StrCat("cannot read ", path));
  std::stringstream text;
  text << file.rdbuf();
  return ParseRecipeText(text.str(), path);
}

std::string RecipeToJson(const v1::Recipe& recipe) {
  google::protobuf::util::JsonPrintOptions options;
  options.preserve_proto_field_names = true;
  options.add_whitespace = true;
  std::string json;
  (void)google::protobuf::util::MessageToJsonString(recipe, &json, options);
  return json;
}

}  // namespace placement::agent
