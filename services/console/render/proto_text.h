#ifndef PLACEMENT_SERVICES_CONSOLE_RENDER_PROTO_TEXT_H_
#define PLACEMENT_SERVICES_CONSOLE_RENDER_PROTO_TEXT_H_

// API messages as text, field by field through protobuf reflection: a field
// the API gains (a candidate's expected start, a pool's queue state) shows
// on the pages that render the message whole without a change here.

#include <string>

#include "absl/strings/string_view.h"
#include "google/protobuf/descriptor.h"
#include "google/protobuf/message.h"

namespace placement::services::console {

// An enum value without its type's prefix ("SUCCEEDED" for
// RUN_OUTCOME_SUCCEEDED); "" for the *_UNSPECIFIED value.
std::string EnumText(const google::protobuf::EnumDescriptor* type, int value);

// Every set field of `message` as a <dl class="fields">: scalars as text,
// enums by EnumText, Timestamps in UTC, Durations in seconds, nested
// messages as nested lists, repeated fields up to 64 items each (the count
// said beyond). Unset fields are left out.
std::string RenderFields(const google::protobuf::Message& message);

}  // namespace placement::services::console

#endif  // PLACEMENT_SERVICES_CONSOLE_RENDER_PROTO_TEXT_H_
