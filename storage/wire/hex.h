#ifndef PLACEMENT_STORAGE_HEX_H_
#define PLACEMENT_STORAGE_HEX_H_

#include <string>

#include "absl/strings/string_view.h"

namespace placement::storage {

// Lower-case hex of `bytes`: bytea values travel as text parameters
// (decode($n, 'hex')) and come back as encode(column, 'hex').
std::string HexEncode(absl::string_view bytes);

// The bytes of lower-case hex `hex` (as made by HexEncode or encode()).
std::string HexDecode(absl::string_view hex);

}  // namespace placement::storage

#endif  // PLACEMENT_STORAGE_HEX_H_
