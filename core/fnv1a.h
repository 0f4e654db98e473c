#ifndef PLACEMENT_CORE_FNV1A_H_
#define PLACEMENT_CORE_FNV1A_H_

#include <cstdint>

#include "absl/strings/string_view.h"

namespace placement::core {

// The 64-bit FNV-1a hash of `bytes` (offset basis and prime from the FNV
// reference, http://www.isthe.com/chongo/tech/comp/fnv/). Unlike absl::Hash it
// is not salted: the same bytes hash alike in every process, so it can name
// stored things (recipe keys) and be checked by another replica (page tokens).
// Not for security: collisions can be made on purpose.
inline uint64_t Fnv1a64(absl::string_view bytes) {
  uint64_t hash = 14695981039346656037ULL;
  for (unsigned char c : bytes) {
    hash ^= c;
    hash *= 1099511628211ULL;
  }
  return hash;
}

}  // namespace placement::core

#endif  // PLACEMENT_CORE_FNV1A_H_
