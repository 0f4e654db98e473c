#ifndef PLACEMENT_CORE_PLAN_MEASUREMENT_VALUE_H_
#define PLACEMENT_CORE_PLAN_MEASUREMENT_VALUE_H_

// The value of information of one measurement run: what measuring an
// unmeasured candidate is expected to save over the demand still to come,
// against what the run costs. A candidate's true cost is uncertain within
// its band (read as the p10-p90 of a lognormal around the estimate); once
// measured, the fleet switches to it where it turns out cheaper than the
// plan's first choice, so the saving per job is E[max(0, first - true)].

#include <cstdint>

#include "core/models/fit.h"
#include "core/plan/plan_types.h"

namespace placement::core {

// Bounds on a measurement run's length: enough steps for the warm-up to
// leave the median and for the mean to settle (50), and no more than a
// short job (500).
inline constexpr int64_t kMinMeasurementSteps = 50;
inline constexpr int64_t kMaxMeasurementSteps = 500;
// The spread of one run's step times (their coefficient of variation) a
// measurement plans for when the candidate has no run to say it.
inline constexpr double kAssumedStepTimeCv = 0.1;

// The sigma of a lognormal whose p10 and p90 are `band` (0 for an empty or
// inverted band).
double LognormalSigmaOfBand(const Band& band);

// E[max(0, threshold - X)] and P(X < threshold) for X lognormal with the
// given median and sigma (sigma 0: X is the median).
double ExpectedShortfall(double threshold, double median, double sigma);
double ProbabilityBelow(double threshold, double median, double sigma);

// The steps a measurement needs to tell a candidate whose cost is
// `estimate` from `threshold`: the run's mean step time known to within
// half their log-distance at 90% (z = 1.2816) given a step-time spread of
// `step_time_cv`, within [kMinMeasurementSteps, kMaxMeasurementSteps].
int64_t MeasurementSteps(double estimate, double threshold,
                         double step_time_cv);

// An unmeasured candidate's cost for the whole job as a lognormal: the
// median (its estimate moved to its step-time band's geometric middle), the
// cost at the band's lower edge, and the band's sigma. A candidate with no
// band is its estimate, sigma 0.
struct CostBelief {
  double median = 0;
  double optimistic = 0;  // at the band's lower edge
  double sigma = 0;
};
CostBelief CostBeliefOf(const Candidate& candidate);

// The chance that a run of `candidate` fits: 1 - its oom_probability when
// BORDERLINE, else 1. A run that does not fit shows no more than that.
double ChanceToFit(const Candidate& candidate);

}  // namespace placement::core

#endif  // PLACEMENT_CORE_PLAN_MEASUREMENT_VALUE_H_
