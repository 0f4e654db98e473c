#ifndef PLACEMENT_STORAGE_BINARY_ARRAY_H_
#define PLACEMENT_STORAGE_BINARY_ARRAY_H_

#include <cstdint>
#include <string>

#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace placement::storage {

// A one-dimensional array in PostgreSQL's binary format, bound as one
// parameter of a statement that takes binary parameters. A batch of rows
// travels as one array per column, and a prepared
// `INSERT ... SELECT ... FROM unnest($1::uuid[], ...)` stores it in one round
// trip: the server parses no SQL (after the first time) and no values, and
// nothing needs escaping.
//
//   BinaryArray ids(BinaryArray::kUuid);
//   for (const Plan& plan : plans) ids.AddUuid(plan.id);
//   params.push_back(std::move(ids).Finish());
class BinaryArray {
 public:
  // The element's type, as its pg_type OID: the server checks it.
  enum ElementType : int32_t {
    kBytea = 17,
    kText = 25,
    kTimestamptz = 1184,
    kUuid = 2950,
  };

  explicit BinaryArray(ElementType element_type)
      : element_type_(element_type) {}

  void AddNull();
  // text (valid UTF-8) or bytea: the bytes as they are.
  void AddBytes(absl::string_view bytes);
  // uuid, from its canonical text form; false (nothing added) if `uuid` is
  // not one.
  bool AddUuid(absl::string_view uuid);
  // timestamptz, to the microsecond.
  void AddTimestamp(absl::Time time);

  // The array's bytes: what the parameter carries.
  std::string Finish() &&;

 private:
  const ElementType element_type_;
  int32_t size_ = 0;
  bool has_nulls_ = false;
  std::string elements_;
};

}  // namespace placement::storage

#endif  // PLACEMENT_STORAGE_BINARY_ARRAY_H_
