#ifndef PLACEMENT_SERVICES_SHA256_H_
#define PLACEMENT_SERVICES_SHA256_H_

#include <string>

#include "absl/strings/string_view.h"

namespace placement::services {

// The 32-byte SHA-256 digest of `bytes` (OpenSSL).
std::string Sha256(absl::string_view bytes);

}  // namespace placement::services

#endif  // PLACEMENT_SERVICES_SHA256_H_
