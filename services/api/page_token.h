#ifndef PLACEMENT_SERVICES_API_PAGE_TOKEN_H_
#define PLACEMENT_SERVICES_API_PAGE_TOKEN_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace placement::services {

inline constexpr int kDefaultPageSize = 100;
inline constexpr int kMaxPageSize = 1000;

// Page tokens are opaque to clients: the web-safe base64 of the last key of
// the previous page, with a version prefix so the format can change.
std::string EncodePageToken(absl::string_view last_key);

// The last key inside `token` ("" for an empty token); INVALID_ARGUMENT
// naming `field` when the token was not made by EncodePageToken.
absl::StatusOr<std::string> DecodePageToken(absl::string_view token,
                                            absl::string_view field);

// The page size to use for a requested `page_size` (0 = default), or
// INVALID_ARGUMENT naming `field` when it is negative.
absl::StatusOr<int> EffectivePageSize(int page_size, absl::string_view field);

// A list request's page: its effective size and the last key of the previous
// page ("" for the first).
struct PageRequest {
  int size = kDefaultPageSize;
  std::string after;
};

// Both checks above for the usual `page_size` and `page_token` fields.
absl::StatusOr<PageRequest> ParsePageRequest(int page_size,
                                             absl::string_view page_token);

// The key of a newest-first listing's last row, its (time, UUID), as
// "<unix micros>/<uuid>": the runs' and the tokens' page tokens.
struct TimeIdKey {
  absl::Time time;
  std::string id;
};
std::string TimeIdKeyText(absl::Time time, absl::string_view id);
// The inverse of TimeIdKeyText; INVALID_ARGUMENT naming page_token for any
// other text (an empty key is the first page: the caller's to handle).
absl::StatusOr<TimeIdKey> ParseTimeIdKey(absl::string_view key);

}  // namespace placement::services

#endif  // PLACEMENT_SERVICES_API_PAGE_TOKEN_H_
