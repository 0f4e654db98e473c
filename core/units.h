#ifndef PLACEMENT_CORE_UNITS_H_
#define PLACEMENT_CORE_UNITS_H_

#include <cstdint>

namespace placement::core {

// GPU time is kept as exact integer GPU-microseconds (sums never drift) and
// shown as GPU-hours.
inline constexpr double kMicrosecondsPerHour = 3.6e9;

inline double HoursFromMicroseconds(int64_t microseconds) {
  return static_cast<double>(microseconds) / kMicrosecondsPerHour;
}

}  // namespace placement::core

#endif  // PLACEMENT_CORE_UNITS_H_
