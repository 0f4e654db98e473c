#ifndef PLACEMENT_STORAGE_STANDARD_RECORDS_H_
#define PLACEMENT_STORAGE_STANDARD_RECORDS_H_

// What storage/stores/standard_store.h reads and writes, without its database
// headers, for the code that converts it.

#include <string>
#include <vector>

#include "absl/time/time.h"
#include "core/plan/standard.h"

namespace placement::storage {

// A standard as stored: `standard.recipe_class` is not filled in; its
// serialized placement.v1.Recipe is `recipe_class_proto`.
struct StandardRecord {
  core::Standard standard;
  std::string recipe_class_proto;
  std::string model;  // of the class, for readers of the table
  // SHA-256 of what the write asked (the idempotency check).
  std::string fingerprint;
};

// Position in the newest-first listing: the last row of the previous page.
struct StandardCursor {
  absl::Time created = absl::InfiniteFuture();
  std::string standard_id;  // empty: from the start
};

struct StandardPage {
  std::vector<StandardRecord> standards;
  bool more = false;
};

}  // namespace placement::storage

#endif  // PLACEMENT_STORAGE_STANDARD_RECORDS_H_
