#include "core/money.h"

#include <cmath>
#include <limits>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace placement::core {

absl::StatusOr<int64_t> ParseMicros(absl::string_view text) {
  const auto invalid = [&] {
    return absl::InvalidArgumentError(absl::StrCat(
        "'", text, "' is not an amount like 2.10 (at most 6 decimals)"));
  };
  if (text.empty()) return invalid();
  int64_t units = 0;
  int64_t fraction = 0;
  int fraction_digits = 0;
  bool seen_point = false;
  bool seen_digit = false;
  for (char c : text) {
    if (c == '.') {
      if (seen_point) return invalid();
      seen_point = true;
      continue;
    }
    if (!absl::ascii_isdigit(c)) return invalid();
    seen_digit = true;
    const int digit = c - '0';
    if (seen_point) {
      if (++fraction_digits > 6) return invalid();
      fraction = fraction * 10 + digit;
    } else {
      if (units >
          (std::numeric_limits<int64_t>::max() / kMicrosPerUnit - 9) / 10) {
        return invalid();
      }
      units = units * 10 + digit;
    }
  }
  if (!seen_digit) return invalid();
  for (int i = fraction_digits; i < 6; ++i) fraction *= 10;
  return units * kMicrosPerUnit + fraction;
}

std::string FormatMicros(int64_t micros) {
  const bool negative = micros < 0;
  // Work in unsigned to format INT64_MIN too.
  const uint64_t magnitude = negative
                                 ? uint64_t{0} - static_cast<uint64_t>(micros)
                                 : static_cast<uint64_t>(micros);
  const uint64_t units = magnitude / kMicrosPerUnit;
  std::string fraction = absl::StrFormat("%06d", magnitude % kMicrosPerUnit);
  while (fraction.size() > 2 && fraction.back() == '0') fraction.pop_back();
  return absl::StrCat(negative ? "-" : "", units, ".", fraction);
}

std::string FormatMicrosAsCents(int64_t micros) {
  const bool negative = micros < 0;
  const uint64_t magnitude = negative
                                 ? uint64_t{0} - static_cast<uint64_t>(micros)
                                 : static_cast<uint64_t>(micros);
  constexpr uint64_t kMicrosPerCent = kMicrosPerUnit / 100;
  const uint64_t cents = magnitude / kMicrosPerCent +
                         (magnitude % kMicrosPerCent >= kMicrosPerCent / 2);
  return absl::StrCat(negative && cents > 0 ? "-" : "", cents / 100, ".",
                      absl::StrFormat("%02d", cents % 100));
}

int64_t SaturatingMicros(double micros) {
  // 2^63, exactly representable; every double at or above it is out of range
  // (the largest int64 itself is not a double).
  constexpr double kLimit = 9223372036854775808.0;
  if (std::isnan(micros) || micros >= kLimit) {
    return std::numeric_limits<int64_t>::max();
  }
  if (micros <= -kLimit) return std::numeric_limits<int64_t>::min();
  return static_cast<int64_t>(std::llround(micros));
}

int64_t CostMicros(double gpu_hours, int64_t rate_micros_per_gpu_hour) {
  return SaturatingMicros(gpu_hours *
                          static_cast<double>(rate_micros_per_gpu_hour));
}

}  // namespace placement::core
