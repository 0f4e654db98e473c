#include "storage/schema/schema_requirement.h"

#include "absl/strings/str_cat.h"

namespace placement::storage {

absl::Status SchemaLacks(absl::string_view what, int version) {
  return absl::FailedPreconditionError(absl::StrCat(
      what, " need schema version ", version,
      "; this database's schema is older: run `placementd migrate up`"));
}

bool HasColumn(pqxx::transaction_base& txn, const std::string& table,
               const std::string& column) {
  static constexpr char kHasColumn[] =
      "SELECT EXISTS (SELECT 1 FROM pg_attribute "
      "WHERE attrelid = to_regclass($1) AND attname = $2 "
      "AND attnum > 0 AND NOT attisdropped)";
  return txn.exec_params(kHasColumn, table, column)[0][0].as<bool>();
}

}  // namespace placement::storage
