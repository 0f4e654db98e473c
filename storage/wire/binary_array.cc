#include "storage/wire/binary_array.h"

#include "storage/wire/pg_binary.h"

namespace placement::storage {

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
  std::optional<std::array<char, 16>> bytes = UuidBytes(uuid);
  if (!bytes) return false;
  AddBytes(absl::string_view(bytes->data(), bytes->size()));
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
