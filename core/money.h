#ifndef PLACEMENT_CORE_MONEY_H_
#define PLACEMENT_CORE_MONEY_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace placement::core {

// Money is held in integer micro-units (1e-6 of the currency), so that sums
// and comparisons are exact.
inline constexpr int64_t kMicrosPerUnit = 1'000'000;

// Parses a decimal amount such as "2.10", "1", "0.000001" exactly (no binary
// floating point). INVALID_ARGUMENT for anything else, more than six decimal
// places, a sign, or an amount that does not fit.
absl::StatusOr<int64_t> ParseMicros(absl::string_view text);

// "2.10" style: at least two decimals, more only when needed ("0.000001").
std::string FormatMicros(int64_t micros);

// "13.67": rounded to two decimals (half away from zero), for tables whose
// columns must read alike.
std::string FormatMicrosAsCents(int64_t micros);

// `micros` rounded to whole micros (half away from zero), saturated to the
// int64 range: an amount too large to hold reads as the largest one (never
// wrapping to a negative, cheapest-looking cost). NaN reads as the largest
// amount too, so that it never ranks as cheap.
int64_t SaturatingMicros(double micros);

// The cost of `gpu_hours` at `rate_micros_per_gpu_hour`, saturated
// (SaturatingMicros).
int64_t CostMicros(double gpu_hours, int64_t rate_micros_per_gpu_hour);

}  // namespace placement::core

#endif  // PLACEMENT_CORE_MONEY_H_
