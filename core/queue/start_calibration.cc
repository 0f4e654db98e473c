#include "core/queue/start_calibration.h"

#include <algorithm>
#include <limits>
#include <utility>

namespace placement::core {
namespace {

// The integrated autocorrelation time of `series` (1 + 2 x the sum of its
// autocorrelations at every lag), summed as Geyer's initial positive
// sequence does: consecutive lags in pairs, while a pair's sum is positive,
// each pair at most the one before, so that the noise of long lags does not
// add up. 1 for a series that looks independent, too short or constant;
// never below 1 (checks that alternate count as independent ones, not more).
double AutocorrelationTime(const std::vector<double>& series) {
  const size_t n = series.size();
  if (n < 4) return 1;
  double mean = 0;
  for (double x : series) mean += x;
  mean /= static_cast<double>(n);
  double variance = 0;
  for (double x : series) variance += (x - mean) * (x - mean);
  if (!(variance > 0)) return 1;
  auto autocorrelation = [&](size_t lag) {
    double sum = 0;
    for (size_t i = 0; i + lag < n; ++i) {
      sum += (series[i] - mean) * (series[i + lag] - mean);
    }
    return sum / variance;
  };
  double time = -1;  // the first pair holds lag 0's 1, counted once
  double previous = std::numeric_limits<double>::infinity();
  for (size_t lag = 0; lag + 1 < n; lag += 2) {
    const double pair = autocorrelation(lag) + autocorrelation(lag + 1);
    if (!(pair > 0)) break;
    previous = std::min(pair, previous);
    time += 2 * previous;
  }
  return std::max(1.0, time);
}

}  // namespace

StartCalibration::StartCalibration(std::vector<double> pits,
                                   std::vector<double> floors)
    : started_(pits.size()), waiting_(floors.size()) {
  effective_ =
      static_cast<double>(started_ + waiting_) / AutocorrelationTime(pits);
  // Ascending; at a tie a started check comes first (a job waiting at a
  // value is known to start above it).
  std::vector<std::pair<double, bool>> checks;  // (value, waiting)
  checks.reserve(pits.size() + floors.size());
  for (double p : pits) checks.emplace_back(std::clamp(p, 0.0, 1.0), false);
  for (double f : floors) checks.emplace_back(std::clamp(f, 0.0, 1.0), true);
  std::sort(checks.begin(), checks.end());
  // Every check not yet passed holds the same share: a waiting one's share
  // goes equally to those above it (none above: beyond the last).
  double share = checks.empty() ? 0 : 1.0 / static_cast<double>(checks.size());
  double below = 0;
  for (size_t i = 0; i < checks.size(); ++i) {
    const size_t above = checks.size() - i - 1;
    if (checks[i].second) {
      if (above > 0) share += share / static_cast<double>(above);
      continue;
    }
    values_.push_back(checks[i].first);
    middles_.push_back(below + share / 2);
    below += share;
  }
  // (Rounding leaves a trace of share when nobody waits: none.)
  beyond_ = values_.empty() || 1 - below < 1e-9 ? 0 : 1 - below;
}

double StartCalibration::Level(double q) const {
  if (!calibrated()) return q;
  double observed;
  if (q <= middles_.front()) {
    observed = values_.front();
  } else if (q > 1 - beyond_) {
    // In the share of jobs still waiting past the last started check:
    // spread evenly between it and 1.
    observed =
        values_.back() + (1 - values_.back()) * (q - (1 - beyond_)) / beyond_;
  } else if (q >= middles_.back()) {
    observed = values_.back();
  } else {
    const size_t i = static_cast<size_t>(
        std::upper_bound(middles_.begin(), middles_.end(), q) -
        middles_.begin());  // 1..n-1
    observed = values_[i - 1] + (values_[i] - values_[i - 1]) *
                                    (q - middles_[i - 1]) /
                                    (middles_[i] - middles_[i - 1]);
  }
  const double n = effective_;
  const double prior = static_cast<double>(kMinCalibrationPits);
  return std::clamp((n * observed + prior * q) / (n + prior), 0.0, 1.0);
}

}  // namespace placement::core
