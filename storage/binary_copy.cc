#include "storage/binary_copy.h"

#include <bit>

namespace placement::storage {
namespace {

// 2000-01-01T00:00:00Z, PostgreSQL's epoch, in Unix microseconds.
constexpr int64_t kPostgresEpochUnixMicros = 946'684'800'000'000;

// "PGCOPY\n\377\r\n\0", then the flags and the header extension length.
constexpr char kHeader[] = "PGCOPY\n\377\r\n";  // the terminating \0 is kept

template <typename Unsigned>
void AppendBigEndian(Unsigned value, std::string* out) {
  char bytes[sizeof(Unsigned)];
  for (size_t i = 0; i < sizeof(Unsigned); ++i) {
    bytes[i] = static_cast<char>(value >> (8 * (sizeof(Unsigned) - 1 - i)));
  }
  out->append(bytes, sizeof(bytes));
}

void AppendInt32(int32_t value, std::string* out) {
  AppendBigEndian(static_cast<uint32_t>(value), out);
}

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

BinaryCopy::BinaryCopy() {
  data_.append(kHeader, sizeof(kHeader));  // 11 bytes with its \0
  AppendInt32(0, &data_);                  // flags: no OIDs
  AppendInt32(0, &data_);                  // no header extension
}

void BinaryCopy::StartRow(int16_t fields) {
  AppendBigEndian(static_cast<uint16_t>(fields), &data_);
}

void BinaryCopy::AddNull() { AppendInt32(-1, &data_); }

void BinaryCopy::AddInt64(int64_t value) {
  AppendInt32(8, &data_);
  AppendBigEndian(static_cast<uint64_t>(value), &data_);
}

void BinaryCopy::AddDouble(double value) {
  AppendInt32(8, &data_);
  AppendBigEndian(std::bit_cast<uint64_t>(value), &data_);
}

void BinaryCopy::AddTimestamp(absl::Time time) {
  AddInt64(absl::ToUnixMicros(time) - kPostgresEpochUnixMicros);
}

bool BinaryCopy::AddUuid(absl::string_view uuid) {
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
  AppendInt32(sizeof(bytes), &data_);
  data_.append(bytes, sizeof(bytes));
  return true;
}

std::string BinaryCopy::Finish() && {
  AppendBigEndian(static_cast<uint16_t>(0xffff), &data_);  // -1: the end
  return std::move(data_);
}

}  // namespace placement::storage
