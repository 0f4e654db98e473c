#include "services/uuid.h"

#include "absl/random/random.h"
#include "absl/strings/str_format.h"

namespace placement::services {

std::string NewUuid() {
  static thread_local absl::BitGen bits;
  const uint64_t high = absl::Uniform<uint64_t>(bits);
  const uint64_t low = absl::Uniform<uint64_t>(bits);
  // Version 4 in the third group, variant 10xx in the fourth.
  return absl::StrFormat("%08x-%04x-4%03x-%04x-%012x", high >> 32,
                         (high >> 16) & 0xffff, high & 0xfff,
                         0x8000 | ((low >> 48) & 0x3fff),
                         low & 0xffffffffffff);
}

}  // namespace placement::services
