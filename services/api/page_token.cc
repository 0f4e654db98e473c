#include "services/api/page_token.h"

#include <algorithm>
#include <cstdint>
#include <utility>

#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "core/field_violation.h"
#include "services/api/run_validation.h"

namespace placement::services {
namespace {

constexpr char kTokenPrefix[] = "v1:";

}  // namespace

std::string EncodePageToken(absl::string_view last_key) {
  return absl::WebSafeBase64Escape(absl::StrCat(kTokenPrefix, last_key));
}

absl::StatusOr<std::string> DecodePageToken(absl::string_view token,
                                            absl::string_view field) {
  if (token.empty()) return std::string();
  std::string decoded;
  if (!absl::WebSafeBase64Unescape(token, &decoded) ||
      !absl::StartsWith(decoded, kTokenPrefix)) {
    return core::InvalidArgumentWithViolations(
        {{std::string(field), "is not a page token returned by this service"}});
  }
  return decoded.substr(sizeof(kTokenPrefix) - 1);
}

absl::StatusOr<int> EffectivePageSize(int page_size, absl::string_view field) {
  if (page_size < 0) {
    return core::InvalidArgumentWithViolations(
        {{std::string(field), "must not be negative"}});
  }
  if (page_size == 0) return kDefaultPageSize;
  return std::min(page_size, kMaxPageSize);
}

absl::StatusOr<PageRequest> ParsePageRequest(int page_size,
                                             absl::string_view page_token) {
  absl::StatusOr<int> size = EffectivePageSize(page_size, "page_size");
  if (!size.ok()) return size.status();
  absl::StatusOr<std::string> after = DecodePageToken(page_token, "page_token");
  if (!after.ok()) return after.status();
  return PageRequest{*size, *std::move(after)};
}

std::string TimeIdKeyText(absl::Time time, absl::string_view id) {
  return absl::StrCat(absl::ToUnixMicros(time), "/", id);
}

absl::StatusOr<TimeIdKey> ParseTimeIdKey(absl::string_view key) {
  std::pair<absl::string_view, absl::string_view> parts =
      absl::StrSplit(key, absl::MaxSplits('/', 1));
  int64_t micros = 0;
  if (!absl::SimpleAtoi(parts.first, &micros) || !IsUuid(parts.second)) {
    return core::InvalidArgumentWithViolations(
        {{"page_token", "is not a page token returned by this service"}});
  }
  return TimeIdKey{absl::FromUnixMicros(micros), std::string(parts.second)};
}

}  // namespace placement::services
