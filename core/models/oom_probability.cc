#include "core/models/oom_probability.h"

#include <cmath>

#include "core/check.h"

namespace placement::core {

double OomProbability(const Band& peak_gb_band, double usable_gb) {
  PLACEMENT_DCHECK(peak_gb_band.low <= peak_gb_band.high,
                   "a memory band's low edge is above its high edge");
  if (peak_gb_band.high <= 0) return 0;
  if (usable_gb <= 0) return 1;
  if (peak_gb_band.low <= 0 || peak_gb_band.low == peak_gb_band.high) {
    // No spread to speak of in log space: the step at the upper edge.
    return peak_gb_band.high > usable_gb ? 1 : 0;
  }
  const double log_low = std::log(peak_gb_band.low);
  const double log_high = std::log(peak_gb_band.high);
  const double median = (log_low + log_high) / 2;
  const double sigma = (log_high - log_low) / (2 * kP90StandardScore);
  const double z = (std::log(usable_gb) - median) / sigma;
  // 1 - Phi(z).
  return 0.5 * std::erfc(z / std::sqrt(2.0));
}

}  // namespace placement::core
