#include "storage/schema_requirement.h"

#include "absl/strings/str_cat.h"

namespace placement::storage {

absl::Status SchemaLacks(absl::string_view what, int version) {
  return absl::FailedPreconditionError(absl::StrCat(
      what, " need schema version ", version,
      "; this database's schema is older: run `placementd migrate up`"));
}

}  // namespace placement::storage
