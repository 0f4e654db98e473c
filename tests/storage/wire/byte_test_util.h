#ifndef PLACEMENT_TESTS_STORAGE_BYTE_TEST_UTIL_H_
#define PLACEMENT_TESTS_STORAGE_BYTE_TEST_UTIL_H_

#include <string>

#include "absl/strings/escaping.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/string_view.h"

namespace placement::storage {

// Bytes from hex written in groups for the reader ("0000 0001"): spaces
// are ignored. Hand-computed expectations read as the format's fields.
inline std::string Bytes(absl::string_view spaced_hex) {
  return absl::HexStringToBytes(absl::StrReplaceAll(spaced_hex, {{" ", ""}}));
}

// Hex of `bytes`, so that a mismatch prints readably.
inline std::string Hex(absl::string_view bytes) {
  return absl::BytesToHexString(bytes);
}

}  // namespace placement::storage

#endif  // PLACEMENT_TESTS_STORAGE_BYTE_TEST_UTIL_H_
