#include "core/queue/run_time_model.h"

#include <algorithm>
#include <cmath>

#include "core/check.h"

namespace placement::core {

double NormalCdf(double z) { return 0.5 * std::erfc(-z / std::sqrt(2.0)); }

double InverseNormalCdf(double p) {
  // Acklam's rational approximation (relative error below 1.2e-9).
  static constexpr double a[] = {-3.969683028665376e+01, 2.209460984245205e+02,
                                 -2.759285104469687e+02, 1.383577518672690e+02,
                                 -3.066479806614716e+01, 2.506628277459239e+00};
  static constexpr double b[] = {-5.447609879822406e+01, 1.615858368580409e+02,
                                 -1.556989798598866e+02, 6.680131188771972e+01,
                                 -1.328068155288572e+01};
  static constexpr double c[] = {-7.784894002430293e-03, -3.223964580411365e-01,
                                 -2.400758277161838e+00, -2.549732539343734e+00,
                                 4.374664141464968e+00,  2.938163982698783e+00};
  static constexpr double d[] = {7.784695709041462e-03, 3.224671290700398e-01,
                                 2.445134137142996e+00, 3.754408661907416e+00};
  p = std::clamp(p, 1e-12, 1 - 1e-12);
  if (p < 0.02425) {
    const double q = std::sqrt(-2 * std::log(p));
    return (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q +
            c[5]) /
           ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
  }
  if (p > 1 - 0.02425) return -InverseNormalCdf(1 - p);
  const double q = p - 0.5;
  const double r = q * q;
  return (((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) *
         q / (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1);
}

namespace {

std::vector<double> RatiosOf(const QueueHistory& history) {
  std::vector<double> ratios;
  for (size_t i = 0;
       i < history.durations_s.size() && i < history.limits_s.size(); ++i) {
    if (history.limits_s[i] > 0) {
      ratios.push_back(history.durations_s[i] / history.limits_s[i]);
    }
  }
  return ratios;
}

std::vector<double> ElapsedOf(const std::vector<StillRunning>& running,
                              bool as_share_of_limit) {
  std::vector<double> out;
  for (const StillRunning& r : running) {
    if (!as_share_of_limit) {
      out.push_back(r.elapsed_s);
    } else if (r.limit_s > 0) {
      out.push_back(r.elapsed_s / r.limit_s);
    }
  }
  return out;
}

}  // namespace

RunTimeModel::RunTimeModel(const QueueHistory& history,
                           const std::vector<StillRunning>& running)
    : durations_(history.durations_s),
      run_times_(history.durations_s, ElapsedOf(running, false)),
      ratios_(RatiosOf(history), ElapsedOf(running, true)) {
  std::sort(durations_.begin(), durations_.end());
  double sum = 0;
  for (double d : durations_) cumulative_.push_back(sum += d);
}

RunTimeSource RunTimeModel::SourceFor(const QueuedJob& job,
                                      const PlannedRunTime* planned) const {
  if (planned != nullptr && planned->median_s > 0) return RunTimeSource::kPlan;
  if (job.time_limit.has_value() && ratios_.ended() >= kMinHistoryRunTimes) {
    return RunTimeSource::kHistoryOfLimit;
  }
  if (durations_.size() >= kMinHistoryRunTimes) return RunTimeSource::kHistory;
  if (job.time_limit.has_value()) return RunTimeSource::kTimeLimit;
  return RunTimeSource::kUnknown;
}

double RunTimeModel::Draw(const QueuedJob& job, const PlannedRunTime* planned,
                          double elapsed_s, Rng& rng) const {
  const double limit_s =
      job.time_limit.has_value() ? absl::ToDoubleSeconds(*job.time_limit) : 0;
  // The slurmctld ends a job at its limit: no draw runs past it.
  auto capped = [&](double d) {
    return limit_s > 0 ? std::clamp(d, elapsed_s, std::max(limit_s, elapsed_s))
                       : std::max(d, elapsed_s);
  };
  // Beyond every run measured (the estimate's tail): as long again as it
  // has run, give or take (an exponential share of it).
  auto tail = [&](const SurvivalSample& sample, double scale) {
    return std::max(elapsed_s, sample.largest() * scale) *
           (1 + rng.Exponential());
  };
  switch (SourceFor(job, planned)) {
    case RunTimeSource::kPlan: {
      const double sigma =
          std::max(0.05, std::log(std::max(planned->p90_s, planned->median_s) /
                                  planned->median_s) /
                             1.2815515655446004);
      // Above what it has run: a uniform draw of the upper part.
      const double floor =
          elapsed_s > 0
              ? NormalCdf(std::log(elapsed_s / planned->median_s) / sigma)
              : 0;
      const double u = floor + (1 - floor) * rng.Uniform();
      if (u >= 1 - 1e-9) return capped(elapsed_s * (1 + rng.Exponential()));
      return capped(planned->median_s * std::exp(sigma * InverseNormalCdf(u)));
    }
    case RunTimeSource::kHistoryOfLimit: {
      std::optional<double> ratio = ratios_.DrawAbove(elapsed_s / limit_s, rng);
      return capped(ratio ? *ratio * limit_s : tail(ratios_, limit_s));
    }
    case RunTimeSource::kHistory: {
      std::optional<double> d = run_times_.DrawAbove(elapsed_s, rng);
      return capped(d ? *d : tail(run_times_, 1));
    }
    case RunTimeSource::kTimeLimit:
      if (elapsed_s >= limit_s) return elapsed_s;
      return elapsed_s + (limit_s - elapsed_s) * rng.Uniform();
    case RunTimeSource::kUnknown:
      break;
  }
  PLACEMENT_DCHECK(false, "a run time drawn for a job of unknown run time");
  return elapsed_s;
}

bool RunTimeModel::CanDrawResidual() const {
  return durations_.size() >= kMinHistoryRunTimes && cumulative_.back() > 0;
}

double RunTimeModel::DrawResidual(Rng& rng) const {
  const double pick = rng.Uniform() * cumulative_.back();
  const size_t i = static_cast<size_t>(
      std::upper_bound(cumulative_.begin(), cumulative_.end(), pick) -
      cumulative_.begin());
  return durations_[std::min(i, durations_.size() - 1)] * rng.Uniform();
}

}  // namespace placement::core
