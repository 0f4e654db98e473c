#ifndef PLACEMENT_STORAGE_BINARY_COPY_H_
#define PLACEMENT_STORAGE_BINARY_COPY_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace placement::storage {

// Rows in PostgreSQL's binary COPY format (COPY ... FROM STDIN WITH (FORMAT
// binary)): each value goes as the server's own representation, so the
// server parses no text and nothing needs escaping.
//
//   BinaryCopyRows rows;
//   rows.StartRow(2);
//   rows.AddText(name);
//   rows.AddTimestamp(now);
//   c.CopyIn(sql, std::move(rows).Finish());
class BinaryCopyRows {
 public:
  BinaryCopyRows();

  // Starts a row of `fields` values, to be added in column order.
  void StartRow(int16_t fields);

  void AddNull();
  // text (valid UTF-8) or bytea: the bytes as they are.
  void AddBytes(absl::string_view bytes);
  // uuid, from its canonical text form; false if `uuid` is not one.
  bool AddUuid(absl::string_view uuid);
  // timestamptz: microseconds since 2000-01-01 UTC.
  void AddTimestamp(absl::Time time);
  // text[], one dimension (empty when `items` is).
  void AddTextArray(const std::vector<std::string>& items);

  // The rows and the trailer: what CopyIn sends.
  std::string Finish() &&;

 private:
  void AddInt16(int16_t value);
  void AddInt32(int32_t value);
  void AddInt64(int64_t value);

  std::string data_;
};

}  // namespace placement::storage

#endif  // PLACEMENT_STORAGE_BINARY_COPY_H_
