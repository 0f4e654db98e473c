#ifndef PLACEMENT_CLIENTS_PLACECTL_RECIPE_FILE_H_
#define PLACEMENT_CLIENTS_PLACECTL_RECIPE_FILE_H_

#include <google/protobuf/descriptor.h>

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "placement/v1/placement.pb.h"

namespace placement::placectl {

// Reads a PlacePlanRequest from a YAML or JSON file (JSON is YAML) written
// with the proto field names, snake_case or lowerCamel:
//
//   recipe:
//     model: Llama-3.1-8B
//     method: lora              # or FINE_TUNE_METHOD_LORA
//     lora_rank: 16
//     target_modules: [q, v]    # or "q,v"
//   total_steps: 10000
//   constraints: {objective: cost, deadline: 12h, max_gpus: 8}
//   serving: {sku: L40S-PCIE-48GB, precision: fp8}
//
// Enum values may be given by their short lower-case names, durations as
// "12h" or proto's "43200s". An unknown field, a value of the wrong type or
// an unknown enum value is an InvalidArgument naming the field's path and
// line.
// `path` "-" reads standard input. The file is read under the limits of
// RecipeFileLimitsFromEnvironment().
absl::StatusOr<v1::PlacePlanRequest> ReadPlanRequestFile(
    const std::string& path);

// What a recipe file may be. Recipes are a few hundred bytes of YAML; a
// caller that reads paths on others' behalf (the Slurm plugin, inside
// slurmctld) must not be made to buffer a device or a huge file, nor to read
// files outside the folders recipes live in.
struct RecipeFileLimits {
  // Folders the file must lie under once symlinks and ".." are resolved;
  // empty: anywhere.
  std::vector<std::string> roots;
  int64_t max_bytes = 1 << 20;
};

// $PLACEMENT_RECIPE_ROOTS (folders separated by ':') and
// $PLACEMENT_RECIPE_MAX_BYTES; the defaults above where unset.
RecipeFileLimits RecipeFileLimitsFromEnvironment();

// The text of the recipe file at `path` ("-": standard input, under the size
// cap only). Only a regular file: InvalidArgument for a device, FIFO or
// folder and for a file over `max_bytes`; PermissionDenied for a file that
// resolves outside `roots`; NotFound when it cannot be opened.
absl::StatusOr<std::string> ReadRecipeFile(const std::string& path,
                                           const RecipeFileLimits& limits);

// The same from text (`source` names it in errors).
absl::StatusOr<v1::PlacePlanRequest> ParsePlanRequestText(
    absl::string_view text, absl::string_view source);

// Converts YAML (or JSON) text holding a `descriptor` message into proto
// JSON that google::protobuf::util::JsonStringToMessage accepts.
absl::StatusOr<std::string> YamlToProtoJson(
    absl::string_view yaml, const google::protobuf::Descriptor& descriptor);

// An enum value from its full name ("FINE_TUNE_METHOD_HEAD_ONLY"), its short
// name ("head-only", "head_only", any case), or a unique suffix ("cost" for
// OBJECTIVE_LOWEST_COST).
absl::StatusOr<int> ParseEnumText(const google::protobuf::EnumDescriptor& type,
                                  absl::string_view text);

// The short lower-case name of an enum value ("head-only"), as accepted by
// ParseEnumText; "-" for the unspecified value.
std::string EnumShortName(const google::protobuf::EnumDescriptor& type,
                          int value);

}  // namespace placement::placectl

#endif  // PLACEMENT_CLIENTS_PLACECTL_RECIPE_FILE_H_
