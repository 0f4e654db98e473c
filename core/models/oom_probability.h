#ifndef PLACEMENT_CORE_MODELS_OOM_PROBABILITY_H_
#define PLACEMENT_CORE_MODELS_OOM_PROBABILITY_H_

// The probability that an attempt runs out of memory, from a peak-memory
// band. A verdict says FITS / BORDERLINE / DOES_NOT_FIT; this says how
// likely the miss is, so that a BORDERLINE that straddles the card by a
// hair and one that is mostly beyond it can be told apart (and an
// attempt's expected cost can count its retries).

#include "core/models/fit.h"

namespace placement::core {

// z of the normal distribution's 90th percentile: a p10..p90 band spans
// 2 x 1.2816 standard deviations.
inline constexpr double kP90StandardScore = 1.2815515655446004;

// P(peak > usable_gb) when `peak_gb_band` is the p10..p90 of the peak.
//
// Assumption: the peak is lognormal (the models' residuals are ratios,
// measured / predicted, and roughly symmetric in log space), with its
// median at the band's geometric middle sqrt(low x high) and
// sigma = ln(high / low) / (2 x 1.2816): an assumption, not a physical
// law, and the published runs are too few to check the tails, so read a
// figure below ~5% or above ~95% as "almost never" / "almost surely". The
// calibrated memory band (band_calibration.h) is a p5..p95 of the
// cross-validated residuals, but 12.7% of a held-out publication's peaks
// were above it, close to the 10% this reading gives: pass it as is.
// `usable_gb` is what the job may use: the card's usable memory less the
// reserve ClassifyFit keeps (kFitReserveGb or the headroom). A band of zero
// width is a step at its edge; a band at or below zero never runs out;
// usable_gb <= 0 always does.
double OomProbability(const Band& peak_gb_band, double usable_gb);

}  // namespace placement::core

#endif  // PLACEMENT_CORE_MODELS_OOM_PROBABILITY_H_
