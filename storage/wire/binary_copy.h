#ifndef PLACEMENT_STORAGE_BINARY_COPY_H_
#define PLACEMENT_STORAGE_BINARY_COPY_H_

#include <cstdint>
#include <string>

#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace placement::storage {

// Rows in PostgreSQL's binary COPY format, for `COPY ... FROM STDIN WITH
// (FORMAT binary)` (PqConnection::CopyIn). The server takes each value as
// it is stored instead of parsing its text (timestamps and doubles are the
// dear ones), and nothing needs escaping. The caller adds, for each row,
// StartRow(n) and then exactly n values of the columns' types in the COPY's
// column order: the server checks the sizes, not the types.
//
//   BinaryCopy copy;
//   copy.StartRow(2);
//   copy.AddInt64(step);
//   copy.AddDouble(loss);
//   c.CopyIn("COPY t (step, loss) FROM STDIN WITH (FORMAT binary)",
//            std::move(copy).Finish());
class BinaryCopy {
 public:
  BinaryCopy();

  void Reserve(size_t bytes) { data_.reserve(bytes); }
  void StartRow(int16_t fields);
  void AddNull();
  void AddInt64(int64_t value);  // bigint
  void AddDouble(double value);  // double precision
  // timestamptz, to the microsecond.
  void AddTimestamp(absl::Time time);
  // uuid, from its canonical text form (8-4-4-4-12 hex digits); false, and
  // nothing added, if `uuid` is not one.
  bool AddUuid(absl::string_view uuid);

  // The COPY data: header, rows, trailer.
  std::string Finish() &&;

 private:
  std::string data_;
};

}  // namespace placement::storage

#endif  // PLACEMENT_STORAGE_BINARY_COPY_H_
