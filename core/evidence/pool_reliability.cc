#include "core/evidence/pool_reliability.h"

#include <algorithm>
#include <cmath>

#include "core/evidence/evidence.h"

namespace placement::core {
namespace {

// The regularized lower incomplete gamma function P(a, x): a series below
// a + 1, Lentz's continued fraction for the upper part above it.
double RegularizedGammaP(double a, double x) {
  if (x <= 0) return 0;
  const double log_front = a * std::log(x) - x - std::lgamma(a);
  if (x < a + 1) {
    double term = 1 / a;
    double sum = term;
    for (int n = 1; n < 500; ++n) {
      term *= x / (a + n);
      sum += term;
      if (std::fabs(term) < std::fabs(sum) * 1e-14) break;
    }
    return std::min(1.0, sum * std::exp(log_front));
  }
  constexpr double kTiny = 1e-300;
  double b = x + 1 - a;
  double c = 1 / kTiny;
  double d = 1 / b;
  double h = d;
  for (int i = 1; i < 500; ++i) {
    const double an = -i * (i - a);
    b += 2;
    d = an * d + b;
    if (std::fabs(d) < kTiny) d = kTiny;
    c = b + an / c;
    if (std::fabs(c) < kTiny) c = kTiny;
    d = 1 / d;
    const double delta = d * c;
    h *= delta;
    if (std::fabs(delta - 1) < 1e-14) break;
  }
  return std::max(0.0, 1 - std::exp(log_front) * h);
}

}  // namespace

bool PoolReliabilityRollup::IsPoolFailure(RunOutcome outcome) {
  return outcome == RunOutcome::kPreempted ||
         outcome == RunOutcome::kHardwareError ||
         outcome == RunOutcome::kCollectiveTimeout;
}

void PoolReliabilityRollup::Add(const MeasuredRun& run) {
  if (pool_name.empty()) pool_name = run.pool_name;
  multi_gpu = run.gpu_count > 1;
  ++runs;
  const double wall_hours =
      run.gpu_count > 0 ? run.GpuHours() / run.gpu_count : 0;
  run_hours += wall_hours;
  if (!IsPoolFailure(run.outcome)) return;
  if (run.outcome == RunOutcome::kPreempted) ++preempted_runs;
  if (run.outcome == RunOutcome::kHardwareError) ++hardware_error_runs;
  if (run.outcome == RunOutcome::kCollectiveTimeout) {
    ++collective_timeout_runs;
  }
  const double kept_hours =
      std::max<int64_t>(0, run.steps_succeeded) * run.step_time_mean_s / 3600;
  failure_lost_hours += std::max(0.0, wall_hours - kept_hours);
}

void PoolReliabilityRollup::Merge(const PoolReliabilityRollup& o) {
  if (pool_name.empty()) pool_name = o.pool_name;
  runs += o.runs;
  run_hours += o.run_hours;
  preempted_runs += o.preempted_runs;
  hardware_error_runs += o.hardware_error_runs;
  collective_timeout_runs += o.collective_timeout_runs;
  failure_lost_hours += o.failure_lost_hours;
}

double GammaQuantile(double shape, double rate, double q) {
  if (!(shape > 0) || !(rate > 0)) return 0;
  q = std::clamp(q, 1e-12, 1 - 1e-12);
  // P(shape, x) is increasing in x: bisect on a bracket that holds q.
  double low = 0;
  double high = std::max(1.0, shape);
  while (RegularizedGammaP(shape, high) < q && high < 1e12) high *= 2;
  for (int i = 0; i < 200 && high - low > 1e-12 * high; ++i) {
    const double mid = (low + high) / 2;
    (RegularizedGammaP(shape, mid) < q ? low : high) = mid;
  }
  return (low + high) / 2 / rate;
}

FailureRate EstimateFailureRate(const PoolReliabilityRollup& single_gpu,
                                const PoolReliabilityRollup& multi_gpu,
                                bool layout_is_multi_gpu,
                                double startup_hours) {
  FailureRate rate;
  // Node failures count over every run of the pool; fabric failures over
  // the multi-GPU runs, and only for a layout that opens collectives.
  const int64_t node_failures =
      single_gpu.preempted_runs + single_gpu.hardware_error_runs +
      multi_gpu.preempted_runs + multi_gpu.hardware_error_runs;
  const int64_t fabric_failures =
      single_gpu.collective_timeout_runs + multi_gpu.collective_timeout_runs;
  const double hours = single_gpu.run_hours + multi_gpu.run_hours;
  const double node_shape = kFailurePriorShape + node_failures;
  const double node_hours = kFailurePriorHours + hours;
  rate.failures = node_failures;
  rate.hours = hours;
  rate.per_hour = node_shape / node_hours;
  rate.per_hour_band = {GammaQuantile(node_shape, node_hours, 0.1),
                        GammaQuantile(node_shape, node_hours, 0.9)};
  if (layout_is_multi_gpu) {
    const double fabric_shape = kFailurePriorShape + fabric_failures;
    const double fabric_hours = kFailurePriorHours + multi_gpu.run_hours;
    rate.failures += fabric_failures;
    rate.per_hour += fabric_shape / fabric_hours;
    // The sum of the two rates' quantiles: wider than the sum's own band.
    rate.per_hour_band.low += GammaQuantile(fabric_shape, fabric_hours, 0.1);
    rate.per_hour_band.high += GammaQuantile(fabric_shape, fabric_hours, 0.9);
  }
  const double lost =
      single_gpu.failure_lost_hours + multi_gpu.failure_lost_hours;
  const int64_t all_failures = node_failures + fabric_failures;
  if (all_failures > 0) {
    rate.lost_hours_per_failure = lost / static_cast<double>(all_failures);
    rate.lost_hours_measured = true;
  } else {
    rate.lost_hours_per_failure = kPriorLostHoursPerFailure + startup_hours;
  }
  return rate;
}

std::vector<CauseFailureRate> FailureRatesByCause(
    const PoolReliabilityRollup& single_gpu,
    const PoolReliabilityRollup& multi_gpu) {
  const double all_hours = single_gpu.run_hours + multi_gpu.run_hours;
  auto rate = [](RunOutcome cause, int64_t failures, double hours,
                 double prior_shape) {
    const double shape = prior_shape + static_cast<double>(failures);
    const double rate_hours = kFailurePriorHours + hours;
    return CauseFailureRate{cause,
                            failures,
                            hours,
                            shape / rate_hours,
                            {GammaQuantile(shape, rate_hours, 0.1),
                             GammaQuantile(shape, rate_hours, 0.9)}};
  };
  return {
      rate(RunOutcome::kPreempted,
           single_gpu.preempted_runs + multi_gpu.preempted_runs, all_hours,
           kFailurePriorShape / 2),
      rate(RunOutcome::kHardwareError,
           single_gpu.hardware_error_runs + multi_gpu.hardware_error_runs,
           all_hours, kFailurePriorShape / 2),
      rate(RunOutcome::kCollectiveTimeout,
           single_gpu.collective_timeout_runs +
               multi_gpu.collective_timeout_runs,
           multi_gpu.run_hours, kFailurePriorShape),
  };
}

}  // namespace placement::core
