#ifndef PLACEMENT_SERVICES_API_ENUM_VALIDATION_H_
#define PLACEMENT_SERVICES_API_ENUM_VALIDATION_H_

#include <string>

#include "core/field_violation.h"
#include "google/protobuf/message.h"

namespace placement::services {

// One violation per enum field of `message` (at any depth: nested messages,
// repeated fields, map values) whose number is not declared by its enum.
// proto3 keeps such numbers as they came, and the conversion to core would
// otherwise read them as UNSPECIFIED or, worse, as a neighbouring value.
// Paths are the request's field paths: "recipe.precision",
// "run.evals[2].serving_precision", "labels[\"k\"]" (each prefixed with
// `field_prefix`). Walks by reflection, so a field added later is covered
// without anyone listing it.
core::FieldViolations UndeclaredEnumValues(
    const google::protobuf::Message& message,
    const std::string& field_prefix = "");

}  // namespace placement::services

#endif  // PLACEMENT_SERVICES_API_ENUM_VALIDATION_H_
