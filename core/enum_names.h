#ifndef PLACEMENT_CORE_ENUM_NAMES_H_
#define PLACEMENT_CORE_ENUM_NAMES_H_

#include <optional>

#include "absl/strings/string_view.h"

namespace placement::core {

// Every core enum has one textual form, its XName() (upper case, the proto
// value's name without the enum prefix: "LORA", "OUT_OF_MEMORY"), stored in
// PostgreSQL and shown by the clients. ParseX() beside each XName() inverts
// it through this helper, so the two cannot drift apart.
//
// The value 1..kLast whose name(value) is `text`; nullopt for anything else,
// "UNSPECIFIED" included.
template <typename Enum, Enum kLast>
std::optional<Enum> ParseEnumName(absl::string_view text,
                                  const char* (*name)(Enum)) {
  for (int i = 1; i <= static_cast<int>(kLast); ++i) {
    if (text == name(static_cast<Enum>(i))) return static_cast<Enum>(i);
  }
  return std::nullopt;
}

}  // namespace placement::core

#endif  // PLACEMENT_CORE_ENUM_NAMES_H_
