#include "storage/wire/binary_copy.h"

#include <bit>

#include "storage/wire/pg_binary.h"

namespace placement::storage {
namespace {

// "PGCOPY\n\377\r\n\0", then the flags and the header extension length.
constexpr char kHeader[] = "PGCOPY\n\377\r\n";  // the terminating \0 is kept

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
  std::optional<std::array<char, 16>> bytes = UuidBytes(uuid);
  if (!bytes) return false;
  AppendInt32(static_cast<int32_t>(bytes->size()), &data_);
  data_.append(bytes->data(), bytes->size());
  return true;
}

std::string BinaryCopy::Finish() && {
  AppendBigEndian(static_cast<uint16_t>(0xffff), &data_);  // -1: the end
  return std::move(data_);
}

}  // namespace placement::storage
