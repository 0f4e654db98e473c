#include "storage/schema/schema_window.h"

#include "absl/strings/str_cat.h"

namespace placement::storage {

SchemaVerdict JudgeSchema(const SchemaWindow& window, int version,
                          std::optional<int> oldest_binary) {
  const std::string serves = absl::StrCat("this binary serves schema versions ",
                                          window.oldest, " to ", window.newest);
  if (version < window.oldest) {
    return {false, absl::StrCat("schema is at version ", version, ", ", serves,
                                " (run `placementd migrate up`)")};
  }
  if (version <= window.newest) return {true, ""};
  if (oldest_binary.has_value() && *oldest_binary <= window.newest) {
    return {true, ""};
  }
  return {false, absl::StrCat("schema is at version ", version, ", ", serves,
                              "; that schema needs a binary built for version ",
                              oldest_binary.value_or(version),
                              " or later (upgrade this replica)")};
}

}  // namespace placement::storage
