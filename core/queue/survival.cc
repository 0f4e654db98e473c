#include "core/queue/survival.h"

#include <algorithm>
#include <cmath>

namespace placement::core {

SurvivalSample::SurvivalSample(std::vector<double> ended,
                               const std::vector<double>& running)
    : ended_count_(ended.size()) {
  std::sort(ended.begin(), ended.end());
  // Silverman's rule on the logarithms of the ended values.
  if (ended.size() >= 2) {
    double sum = 0;
    double squares = 0;
    for (double v : ended) {
      const double x = std::log(std::max(v, 1e-3));
      sum += x;
      squares += x * x;
    }
    const double n = static_cast<double>(ended.size());
    const double variance = std::max(0.0, (squares - sum * sum / n) / (n - 1));
    bandwidth_ = 1.06 * std::sqrt(variance) * std::pow(n, -0.2);
  }
  std::vector<double> censored = running;
  std::sort(censored.begin(), censored.end());
  if (!ended.empty()) largest_ = ended.back();
  if (!censored.empty()) largest_ = std::max(largest_, censored.back());
  // At risk at t: every value >= t (an end at t counts before a job
  // still running at t).
  size_t e = 0;
  size_t c = 0;
  double survival = 1;
  const double total = static_cast<double>(ended.size() + censored.size());
  double at_risk = total;
  while (e < ended.size()) {
    const double t = ended[e];
    while (c < censored.size() && censored[c] < t) {
      --at_risk;
      ++c;
    }
    size_t ties = 0;
    while (e < ended.size() && ended[e] == t) {
      ++ties;
      ++e;
    }
    const double next = survival * (1 - static_cast<double>(ties) / at_risk);
    times_.push_back(t);
    cumulative_.push_back(1 - next);
    survival = next;
    at_risk -= static_cast<double>(ties);
  }
  // The longest run measured stands at the middle of its share, as
  // QuantileOfSorted reads draws: the upper half of that share is beyond
  // every run measured (the tail). Without it a history of n ends says no
  // job runs longer than the longest of them, which the next one does with
  // probability 1 / (n + 1), and a young history's forecasts start early.
  if (!times_.empty()) {
    const double last_share =
        cumulative_.back() -
        (times_.size() > 1 ? cumulative_[cumulative_.size() - 2] : 0);
    cumulative_.back() -= last_share / 2;
  }
}

std::optional<double> SurvivalSample::DrawAbove(double floor, Rng& rng) const {
  const size_t first = static_cast<size_t>(
      std::upper_bound(times_.begin(), times_.end(), floor) - times_.begin());
  const double below = first > 0 ? cumulative_[first - 1] : 0;
  const double above = 1 - below;  // the values above, and the tail
  if (!(above > 1e-12) || first == times_.size()) return std::nullopt;
  const double target = below + rng.Uniform() * above;
  const size_t i = static_cast<size_t>(
      std::upper_bound(cumulative_.begin(), cumulative_.end(), target) -
      cumulative_.begin());
  if (i >= times_.size()) return std::nullopt;  // the tail
  // E[exp(h z)] = exp(h^2 / 2): without the correction every smoothed draw
  // would be that much longer in the mean, and every wait forecast late.
  const double smoothed = times_[i] * std::exp(bandwidth_ * rng.Normal() -
                                               bandwidth_ * bandwidth_ / 2);
  return smoothed > floor ? smoothed : times_[i];
}

}  // namespace placement::core
