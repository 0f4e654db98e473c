#ifndef PLACEMENT_STORAGE_SCHEMA_REQUIREMENT_H_
#define PLACEMENT_STORAGE_SCHEMA_REQUIREMENT_H_

#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace placement::storage {

// The answer of a call whose table or column the schema does not have yet
// (a binary serves a window of schema versions, docs/RELIABILITY.md):
// FAILED_PRECONDITION naming `what` and the schema `version` that adds it.
// Not UNAVAILABLE: a client retries that for ever, and no retry helps until
// someone runs `placementd migrate up`. A list of such things answers this
// too, rather than an empty page that would read as "there are none".
absl::Status SchemaLacks(absl::string_view what, int version);

}  // namespace placement::storage

#endif  // PLACEMENT_STORAGE_SCHEMA_REQUIREMENT_H_
