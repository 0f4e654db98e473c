#include "core/queue/start_calibration.h"

#include <algorithm>
#include <utility>

namespace placement::core {

StartCalibration::StartCalibration(std::vector<double> pits,
                                   std::vector<double> floors)
    : started_(pits.size()), waiting_(floors.size()) {
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
  const double n = static_cast<double>(started_ + waiting_);
  const double prior = static_cast<double>(kMinCalibrationPits);
  return std::clamp((n * observed + prior * q) / (n + prior), 0.0, 1.0);
}

}  // namespace placement::core
