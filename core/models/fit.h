#ifndef PLACEMENT_CORE_MODELS_FIT_H_
#define PLACEMENT_CORE_MODELS_FIT_H_

// Error bars on the planner's estimates and the three fit verdicts they
// lead to. An estimate that may be wrong by 40% must not veto a pool that
// nobody has measured: a band that straddles the card is BORDERLINE
// (measure first), not a rejection.

#include <string>

namespace placement::core {

// The three fit verdicts of a peak memory per GPU (estimated or measured)
// against what a card offers.
enum class Fit {
  kUnspecified = 0,
  kFits = 1,        // the band's upper edge stays within the card
  kBorderline = 2,  // the band straddles the card: measure first
  kDoesNotFit = 3,  // the band's lower edge is beyond the card
};

// An interval an estimate is expected to fall in (low <= high).
struct Band {
  double low = 0;
  double high = 0;

  friend bool operator==(const Band&, const Band&) = default;
};

// Band widths, as factors on the point estimate: the p10 and p90 of
// measured / predicted over the published runs, each predicted by the
// model fitted without the run's own publication (leave-one-source-out),
// widened outwards to the next 0.05 (memory: 57 published peaks, p10 0.956,
// p90 1.238; step time: 55 rows with published tokens/s, p10 0.650, p90
// 1.306). Measured by tests/core/fitting/model_cross_validation_test.cc over
// the calibration rows of tests/core/testdata/; the test fails
// when a constant drifts from its figure, so a better model re-derives
// them. Run: ctest -R 'ModelCrossValidation' --output-on-failure -V.
// They hold about 80% of those residuals but fewer of a publication the
// band was not derived from: band_calibration.h has the bands calibrated
// for that, by recipe and extrapolation.
//
// The step-time band's lower edge is the one decision here: it stays at
// 0.75, above the p10 (0.650, NeMo's FP8 runs predicted 1.5x slow when
// NeMo is held out). The lower edge is the optimistic one the bake-off
// weighs: at 0.60 the fleet replay measured twice as much (exploration
// 1.5-1.9% of spending instead of 0.6-0.8%) for a cost 1 point further
// from hindsight in four of five worlds (docs/DECISIONS.md).
inline constexpr double kMemoryBandLowFactor = 0.95;
inline constexpr double kMemoryBandHighFactor = 1.25;
inline constexpr double kStepTimeBandLowFactor = 0.75;
inline constexpr double kStepTimeBandHighFactor = 1.35;
// The band around a measured peak (EvidenceStats::peak_memory_gb). The
// figure itself is exact now (the largest peak of a succeeded run); the
// band was sized as half a 12% histogram bucket when the figure was read
// from one, and stays so for old rollups that still fall back to the
// histogram and as room for the next run peaking a little higher.
inline constexpr double kMeasuredMemoryBandFraction = 0.06;
// Kept free on every card besides the band: the CUDA context is in the
// model, but the allocator may grow a little past the measured peak.
inline constexpr double kFitReserveGb = 1.0;

// The band of a point estimate under the factors above.
Band MemoryBand(double predicted_peak_gb);
Band MeasuredMemoryBand(double measured_peak_gb);
Band StepTimeBand(double estimated_step_time_s);

// FITS when band.high <= card - reserve, DOES_NOT_FIT when
// band.low > card - reserve, BORDERLINE otherwise. `reserve_gb` is the
// larger of kFitReserveGb and the request's headroom.
Fit ClassifyFit(const Band& peak_gb, double card_memory_gb, double reserve_gb);

const char* FitName(Fit fit);

}  // namespace placement::core

#endif  // PLACEMENT_CORE_MODELS_FIT_H_
