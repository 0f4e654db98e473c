#include "storage/wire/pg_binary.h"

namespace placement::storage {
namespace {

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

std::optional<std::array<char, 16>> UuidBytes(absl::string_view uuid) {
  if (uuid.size() != 36) return std::nullopt;
  std::array<char, 16> bytes;
  int n = 0;
  for (size_t i = 0; i < uuid.size();) {
    if (i == 8 || i == 13 || i == 18 || i == 23) {
      if (uuid[i] != '-') return std::nullopt;
      ++i;
      continue;
    }
    const int high = HexValue(uuid[i]);
    const int low = HexValue(uuid[i + 1]);
    if (high < 0 || low < 0) return std::nullopt;
    bytes[n++] = static_cast<char>(high << 4 | low);
    i += 2;
  }
  return bytes;
}

}  // namespace placement::storage
