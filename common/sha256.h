#ifndef PLACEMENT_COMMON_SHA256_H_
#define PLACEMENT_COMMON_SHA256_H_

#include <string>

#include "absl/strings/string_view.h"

namespace placement::common {

// The 32-byte SHA-256 digest of `bytes` (OpenSSL).
std::string Sha256(absl::string_view bytes);

}  // namespace placement::common

#endif  // PLACEMENT_COMMON_SHA256_H_
