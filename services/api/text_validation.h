#ifndef PLACEMENT_SERVICES_API_TEXT_VALIDATION_H_
#define PLACEMENT_SERVICES_API_TEXT_VALIDATION_H_

#include <string>

#include "core/field_violation.h"
#include "google/protobuf/message.h"

namespace placement::services {

// One violation per string field of `message` (at any depth, map keys and
// values included; never `bytes`) holding a character no text of this API
// needs:
//  - a C0 control (U+0000 to U+001F) other than tab, line feed and carriage
//    return, and U+007F. PostgreSQL refuses NUL in text, so one such value
//    would fail the batch its record is written in, and C strings would
//    read it cut short at the NUL (another caller's request_id);
//  - a C1 control (U+0080 to U+009F: some terminals act on them as on
//    escape sequences);
//  - a bidirectional override or isolate (U+202A to U+202E, U+2066 to
//    U+2069) and the line and paragraph separators (U+2028, U+2029): they
//    make a name or reason read, on a screen or in a log, otherwise than it
//    is stored (a team "a<RLO>b" that shows as another team's);
//  - in a field named `team`, `teams` or `request_id` (keys that are
//    compared, logged and shown one a line), a line feed or carriage
//    return too.
// Paths as UndeclaredEnumValues gives them, prefixed with `field_prefix`.
core::FieldViolations RefusedCharacterFields(
    const google::protobuf::Message& message,
    const std::string& field_prefix = "");

// The same check of one value, for text that does not arrive in a message
// walked whole (a stream's fields): a description of the first refused
// character, or "" when there is none. `one_line`: newlines refused too.
std::string RefusedCharacter(const std::string& value, bool one_line);

}  // namespace placement::services

#endif  // PLACEMENT_SERVICES_API_TEXT_VALIDATION_H_
