#include "common/uuid.h"

#include "absl/random/random.h"
#include "absl/strings/str_format.h"

namespace placement::common {
namespace {

absl::BitGen& Bits() {
  static thread_local absl::BitGen bits;
  return bits;
}

// `high` and `low` as a UUID of `version`, variant 10xx.
std::string FormatUuid(uint64_t high, uint64_t low, int version) {
  return absl::StrFormat("%08x-%04x-%x%03x-%04x-%012x", high >> 32,
                         (high >> 16) & 0xffff, version, high & 0xfff,
                         0x8000 | ((low >> 48) & 0x3fff), low & 0xffffffffffff);
}

}  // namespace

std::string NewUuid() {
  return FormatUuid(absl::Uniform<uint64_t>(Bits()),
                    absl::Uniform<uint64_t>(Bits()), 4);
}

std::string NewTimeOrderedUuid(absl::Time now) {
  const uint64_t millis = static_cast<uint64_t>(absl::ToUnixMillis(now));
  const uint64_t high = (millis & 0xffffffffffff) << 16 |
                        (absl::Uniform<uint64_t>(Bits()) & 0xfff);
  return FormatUuid(high, absl::Uniform<uint64_t>(Bits()), 7);
}

}  // namespace placement::common
