#include "core/plan/measurement_value.h"

#include <algorithm>
#include <cmath>

#include "core/queue/run_time_model.h"

namespace placement::core {
namespace {

constexpr double kZ90 = 1.2815515655446004;  // the standard normal's p90

}  // namespace

double LognormalSigmaOfBand(const Band& band) {
  if (!(band.low > 0) || !(band.high > band.low)) return 0;
  return std::log(band.high / band.low) / (2 * kZ90);
}

double ExpectedShortfall(double threshold, double median, double sigma) {
  if (!(threshold > 0) || !(median > 0)) return 0;
  if (!(sigma > 0)) return std::max(0.0, threshold - median);
  // The value of a put struck at `threshold` on a lognormal (Black's
  // formula without discounting).
  const double z = std::log(threshold / median) / sigma;
  return threshold * NormalCdf(z) -
         median * std::exp(sigma * sigma / 2) * NormalCdf(z - sigma);
}

double ProbabilityBelow(double threshold, double median, double sigma) {
  if (!(threshold > 0) || !(median > 0)) return 0;
  if (!(sigma > 0)) return median < threshold ? 1 : 0;
  return NormalCdf(std::log(threshold / median) / sigma);
}

int64_t MeasurementSteps(double estimate, double threshold,
                         double step_time_cv) {
  if (!(estimate > 0) || !(threshold > 0)) return kMinMeasurementSteps;
  // The standard error of a mean over n steps is cv / sqrt(n); it must be
  // below half the gap (never planned for a gap under 2%).
  const double gap = std::max(0.02, std::fabs(std::log(threshold / estimate)));
  const double needed =
      std::ceil(std::pow(2 * kZ90 * std::max(0.0, step_time_cv) / gap, 2));
  return std::clamp(static_cast<int64_t>(needed), kMinMeasurementSteps,
                    kMaxMeasurementSteps);
}

CostBelief CostBeliefOf(const Candidate& candidate) {
  CostBelief belief;
  const double cost = static_cast<double>(candidate.expected_cost_micros);
  const Band& band = candidate.step_time_s_band;
  if (!(candidate.step_time_s > 0) || !(band.low > 0)) {
    belief.median = belief.optimistic = cost;
    return belief;
  }
  belief.median =
      cost * std::sqrt(band.low * band.high) / candidate.step_time_s;
  belief.optimistic = cost * band.low / candidate.step_time_s;
  belief.sigma = LognormalSigmaOfBand(band);
  return belief;
}

double ChanceToFit(const Candidate& candidate) {
  return candidate.fit == Fit::kBorderline
             ? 1 - std::clamp(candidate.oom_probability, 0.0, 1.0)
             : 1;
}

}  // namespace placement::core
