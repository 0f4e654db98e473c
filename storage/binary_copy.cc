#include "storage/binary_copy.h"

#include <endian.h>

namespace placement::storage {
namespace {

constexpr char kSignature[] = "PGCOPY\n\377\r\n";  // and a zero byte
constexpr int32_t kTextOid = 25;
// 2000-01-01T00:00:00Z, PostgreSQL's epoch, in Unix microseconds.
constexpr int64_t kPostgresEpochUnixMicros = 946'684'800'000'000;

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

BinaryCopyRows::BinaryCopyRows() {
  data_.append(kSignature, sizeof(kSignature));  // with its zero byte
  AddInt32(0);  // flags
  AddInt32(0);  // header extension length
}

void BinaryCopyRows::StartRow(int16_t fields) { AddInt16(fields); }

void BinaryCopyRows::AddNull() { AddInt32(-1); }

void BinaryCopyRows::AddBytes(absl::string_view bytes) {
  AddInt32(static_cast<int32_t>(bytes.size()));
  data_.append(bytes.data(), bytes.size());
}

bool BinaryCopyRows::AddUuid(absl::string_view uuid) {
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

void BinaryCopyRows::AddTimestamp(absl::Time time) {
  AddInt32(8);
  AddInt64(absl::ToUnixMicros(time) - kPostgresEpochUnixMicros);
}

void BinaryCopyRows::AddTextArray(const std::vector<std::string>& items) {
  size_t size = 12;  // dimensions, has-nulls flag, element type
  if (!items.empty()) size += 8;  // length and lower bound of the dimension
  for (const std::string& item : items) size += 4 + item.size();
  AddInt32(static_cast<int32_t>(size));
  AddInt32(items.empty() ? 0 : 1);
  AddInt32(0);  // no nulls
  AddInt32(kTextOid);
  if (items.empty()) return;
  AddInt32(static_cast<int32_t>(items.size()));
  AddInt32(1);  // lower bound
  for (const std::string& item : items) AddBytes(item);
}

std::string BinaryCopyRows::Finish() && {
  AddInt16(-1);
  return std::move(data_);
}

void BinaryCopyRows::AddInt16(int16_t value) {
  const uint16_t big = htobe16(static_cast<uint16_t>(value));
  data_.append(reinterpret_cast<const char*>(&big), sizeof(big));
}

void BinaryCopyRows::AddInt32(int32_t value) {
  const uint32_t big = htobe32(static_cast<uint32_t>(value));
  data_.append(reinterpret_cast<const char*>(&big), sizeof(big));
}

void BinaryCopyRows::AddInt64(int64_t value) {
  const uint64_t big = htobe64(static_cast<uint64_t>(value));
  data_.append(reinterpret_cast<const char*>(&big), sizeof(big));
}

}  // namespace placement::storage
