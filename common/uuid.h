#ifndef PLACEMENT_COMMON_UUID_H_
#define PLACEMENT_COMMON_UUID_H_

#include <string>

#include "absl/time/time.h"

namespace placement::common {

// A random (version 4) UUID in canonical form.
std::string NewUuid();

// A time-ordered (version 7, RFC 9562) UUID in canonical form: the Unix
// milliseconds of `now`, then 74 random bits. Keys made this way arrive in
// increasing order, so a b-tree over them grows at its right edge instead of
// touching a random page per insert.
std::string NewTimeOrderedUuid(absl::Time now);

}  // namespace placement::common

#endif  // PLACEMENT_COMMON_UUID_H_
