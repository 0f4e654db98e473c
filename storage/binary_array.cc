#include "storage/binary_array.h"

#include <endian.h>

namespace placement::storage {
namespace {

// 2000-01-01T00:00:00Z, PostgreSQL's epoch, in Unix microseconds.
constexpr int64_t kPostgresEpochUnixMicros = 946'684'800'000'000;

void AppendInt32(int32_t value, std::string* out) {
  const uint32_t big = htobe32(static_cast<uint32_t>(value));
  out->append(reinterpret_cast<const char*>(&big), sizeof(big));
}

void AppendInt64(int64_t value, std::string* out) {
  const uint64_t big = htobe64(static_cast<uint64_t>(value));
  out->append(reinterpret_cast<const char*>(&big), sizeof(big));
}

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

void BinaryArray::AddNull() {
  AppendInt32(-1, &elements_);
  has_nulls_ = true;
  ++size_;
}

void BinaryArray::AddBytes(absl::string_view bytes) {
  AppendInt32(static_cast<int32_t>(bytes.size()), &elements_);
  elements_.append(bytes.data(), bytes.size());
  ++size_;
}

bool BinaryArray::AddUuid(absl::string_view uuid) {
  // 8-4-4-4-12 hex digits.
  if (uuid.size() != 36) return false;
  char bytes[16];
  int n = 0;
  for (size_t i = 0; i < uuid.size();) {
    if (i == 8 || i == 13 || i == 18 || i == 23) {
      if (uuid[i] != '-') return false;
      ++i;
      continue;
    }
    const int high = HexValue(uuid[i]);
    const int low = HexValue(uuid[i + 1]);
    if (high < 0 || low < 0) return false;
    bytes[n++] = static_cast<char>(high << 4 | low);
    i += 2;
  }
  AddBytes(absl::string_view(bytes, sizeof(bytes)));
  return true;
}

void BinaryArray::AddTimestamp(absl::Time time) {
  AppendInt32(8, &elements_);
  AppendInt64(absl::ToUnixMicros(time) - kPostgresEpochUnixMicros, &elements_);
  ++size_;
}

std::string BinaryArray::Finish() && {
  std::string array;
  array.reserve(20 + elements_.size());
  AppendInt32(size_ == 0 ? 0 : 1, &array);  // dimensions
  AppendInt32(has_nulls_ ? 1 : 0, &array);
  AppendInt32(element_type_, &array);
  if (size_ > 0) {
    AppendInt32(size_, &array);
    AppendInt32(1, &array);  // lower bound
  }
  array.append(elements_);
  return array;
}

}  // namespace placement::storage
