#ifndef PLACEMENT_COMMON_READ_FILE_H_
#define PLACEMENT_COMMON_READ_FILE_H_

#include <string>

#include "absl/status/statusor.h"

namespace placement::common {

// The whole content of the file at `path` (certificates, keys, tokens).
// NOT_FOUND, naming the path, when it cannot be opened.
absl::StatusOr<std::string> ReadFile(const std::string& path);

}  // namespace placement::common

#endif  // PLACEMENT_COMMON_READ_FILE_H_
