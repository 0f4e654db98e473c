#ifndef PLACEMENT_STORAGE_SCHEMA_WINDOW_H_
#define PLACEMENT_STORAGE_SCHEMA_WINDOW_H_

#include <optional>
#include <string>

namespace placement::storage {

// The schema versions a binary can read and write correctly: `oldest` is
// the first schema with everything its statements use; `newest`, the last
// migration it embeds. A newer schema is served too when that schema says
// binaries at `newest` still read and write it correctly (its
// schema_compatibility.oldest_binary_version, set by the migrations that
// keep older binaries correct, e.g. with triggers: docs/RELIABILITY.md).
struct SchemaWindow {
  int oldest = 0;
  int newest = 0;
};

struct SchemaVerdict {
  bool served = false;
  std::string reason;  // why not, naming the versions; empty when served
};

// Whether a binary with `window` serves a schema at `version` whose
// schema_compatibility says binaries from `oldest_binary` on are correct
// with it (nullopt: the schema does not say, so only binaries that know
// `version` are).
SchemaVerdict JudgeSchema(const SchemaWindow& window, int version,
                          std::optional<int> oldest_binary);

}  // namespace placement::storage

#endif  // PLACEMENT_STORAGE_SCHEMA_WINDOW_H_
