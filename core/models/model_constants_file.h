#ifndef PLACEMENT_CORE_MODELS_MODEL_CONSTANTS_FILE_H_
#define PLACEMENT_CORE_MODELS_MODEL_CONSTANTS_FILE_H_

// The analytic models' constants as a text file, so that a server can start
// from constants re-fitted to measurements other than the published rows
// they ship fitted to (an operator's own fleet; the learning-curve benchmark
// fits them on the publications it does not replay):
//
//   placement-model-constants 1
//   # comments and blank lines are ignored
//   memory.logits_bytes_standard 14.13
//   memory.framework.LITGPT.activation_scale 1.08
//   step_time.full_factor 1.134
//   step_time.sku_family_factor.A100 1.03
//
// One "name value" a line after the header. A constant the file does not
// name keeps the value it is parsed over (the shipped one, for placementd).
// Pure: text in, constants out; reading the file is the caller's.

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "core/models/memory_model.h"
#include "core/models/step_time_model.h"

namespace placement::core {

struct ModelConstants {
  MemoryModelConstants memory;
  StepTimeModelConstants step_time;
};

// The constants the models use now (DefaultMemoryModelConstants(),
// DefaultStepTimeModelConstants()).
ModelConstants CurrentModelConstants();

// Every numeric constant of `constants`, with the header, exact to the bit
// (ParseModelConstants reads back the same doubles). `comment` (may be
// empty) is written as "# " lines after the header.
std::string FormatModelConstants(const ModelConstants& constants,
                                 absl::string_view comment = "");

// Reads `text` over `base`. INVALID_ARGUMENT naming the line for a missing
// header, an unknown or repeated name, a value that is not a finite number,
// or one outside what the constant can mean (negative; a fraction above 1;
// a scale, factor or efficiency of 0; base_mfu above 1).
absl::StatusOr<ModelConstants> ParseModelConstants(absl::string_view text,
                                                   const ModelConstants& base);

// Makes `constants` what DefaultMemoryModelConstants() and
// DefaultStepTimeModelConstants() return, for the rest of the process. Call
// once at start, before any thread reads them (the planner and the fleet
// model read them on every plan).
void InstallModelConstants(const ModelConstants& constants);

}  // namespace placement::core

#endif  // PLACEMENT_CORE_MODELS_MODEL_CONSTANTS_FILE_H_
