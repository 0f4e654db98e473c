#ifndef PLACEMENT_STORAGE_PG_BINARY_H_
#define PLACEMENT_STORAGE_PG_BINARY_H_

// What PostgreSQL's binary formats share (binary arrays, binary COPY):
// network byte order, its timestamp epoch, uuid as 16 bytes.

#include <array>
#include <cstdint>
#include <optional>
#include <string>

#include "absl/strings/string_view.h"

namespace placement::storage {

// 2000-01-01T00:00:00Z, PostgreSQL's epoch, in Unix microseconds.
inline constexpr int64_t kPostgresEpochUnixMicros = 946'684'800'000'000;

// Appends `value` in network (big-endian) byte order.
template <typename Unsigned>
void AppendBigEndian(Unsigned value, std::string* out) {
  char bytes[sizeof(Unsigned)];
  for (size_t i = 0; i < sizeof(Unsigned); ++i) {
    bytes[i] = static_cast<char>(value >> (8 * (sizeof(Unsigned) - 1 - i)));
  }
  out->append(bytes, sizeof(bytes));
}

inline void AppendInt32(int32_t value, std::string* out) {
  AppendBigEndian(static_cast<uint32_t>(value), out);
}

inline void AppendInt64(int64_t value, std::string* out) {
  AppendBigEndian(static_cast<uint64_t>(value), out);
}

// The 16 bytes of a uuid in its 8-4-4-4-12 hex text form (either case);
// nullopt for any other text.
std::optional<std::array<char, 16>> UuidBytes(absl::string_view uuid);

}  // namespace placement::storage

#endif  // PLACEMENT_STORAGE_PG_BINARY_H_
