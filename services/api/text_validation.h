#ifndef PLACEMENT_SERVICES_API_TEXT_VALIDATION_H_
#define PLACEMENT_SERVICES_API_TEXT_VALIDATION_H_

#include <string>

#include "core/field_violation.h"
#include "google/protobuf/message.h"

namespace placement::services {

// One violation per string field of `message` (at any depth, map keys and
// values included; never `bytes`) holding a control character: U+0000 to
// U+001F other than tab, line feed and carriage return, and U+007F.
// PostgreSQL refuses NUL in text, so one such value would fail the batch its
// record is written in, and C strings would read it cut short at the NUL
// (another caller's request_id); the other controls are refused with it,
// since no identifier or label of this API needs them. Paths as
// UndeclaredEnumValues gives them, prefixed with `field_prefix`.
core::FieldViolations ControlCharacterFields(
    const google::protobuf::Message& message,
    const std::string& field_prefix = "");

}  // namespace placement::services

#endif  // PLACEMENT_SERVICES_API_TEXT_VALIDATION_H_
