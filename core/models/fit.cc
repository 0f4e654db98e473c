#include "core/models/fit.h"

#include "core/check.h"

namespace placement::core {

Band MemoryBand(double predicted_peak_gb) {
  return {predicted_peak_gb * kMemoryBandLowFactor,
          predicted_peak_gb * kMemoryBandHighFactor};
}

Band MeasuredMemoryBand(double measured_peak_gb) {
  return {measured_peak_gb * (1 - kMeasuredMemoryBandFraction),
          measured_peak_gb * (1 + kMeasuredMemoryBandFraction)};
}

Band StepTimeBand(double estimated_step_time_s) {
  return {estimated_step_time_s * kStepTimeBandLowFactor,
          estimated_step_time_s * kStepTimeBandHighFactor};
}

Fit ClassifyFit(const Band& peak_gb, double card_memory_gb, double reserve_gb) {
  PLACEMENT_DCHECK(peak_gb.low <= peak_gb.high,
                   "a memory band's low edge is above its high edge");
  const double usable = card_memory_gb - reserve_gb;
  if (peak_gb.high <= usable) return Fit::kFits;
  if (peak_gb.low > usable) return Fit::kDoesNotFit;
  return Fit::kBorderline;
}

const char* FitName(Fit fit) {
  switch (fit) {
    case Fit::kFits:
      return "FITS";
    case Fit::kBorderline:
      return "BORDERLINE";
    case Fit::kDoesNotFit:
      return "DOES_NOT_FIT";
    case Fit::kUnspecified:
      break;
  }
  return "UNSPECIFIED";
}

}  // namespace placement::core
