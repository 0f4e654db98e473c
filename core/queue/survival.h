#ifndef PLACEMENT_CORE_QUEUE_SURVIVAL_H_
#define PLACEMENT_CORE_QUEUE_SURVIVAL_H_

// A run-time distribution from jobs that finished and jobs still running
// (Kaplan-Meier): a running job has run at least as long as it has, and
// leaving it out would make the distribution short, since the longest jobs
// are the ones still running when a report is made (most of all while a
// pool's history is young).

#include <optional>
#include <vector>

#include "core/queue/rng.h"

namespace placement::core {

class SurvivalSample {
 public:
  // `ended`: finished jobs' values; `running`: values jobs have exceeded
  // so far (right-censored).
  SurvivalSample(std::vector<double> ended, const std::vector<double>& running);

  size_t ended() const { return ended_count_; }
  // The largest value observed, ended or still running (0 with none).
  double largest() const { return largest_; }

  // A draw above `floor` from the estimated distribution, smoothed: the
  // value drawn times exp(h z - h^2 / 2), z standard normal, h Silverman's
  // bandwidth of the logarithms of the ended values (1.06 sd n^-1/5), so
  // that a history of a few dozen jobs does not make the tails as thin as
  // its extremes; the - h^2 / 2 keeps the value's mean (kept unsmoothed
  // when smoothing would take it below `floor`). nullopt when it falls
  // beyond every value observed (the mass the estimate leaves beyond its
  // last end: jobs still running past it, and the upper half of the last
  // end's own share) or nothing is known above `floor`: the caller's tail.
  std::optional<double> DrawAbove(double floor, Rng& rng) const;

 private:
  // Values where jobs ended, and the probability mass at each.
  std::vector<double> times_;
  // The mass up to and at times_[i]; what is left beyond the last is the
  // tail (the estimate's mass beyond its last observed end).
  std::vector<double> cumulative_;
  size_t ended_count_ = 0;
  double largest_ = 0;
  double bandwidth_ = 0;  // of the logarithms
};

}  // namespace placement::core

#endif  // PLACEMENT_CORE_QUEUE_SURVIVAL_H_
