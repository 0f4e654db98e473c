#include "core/evidence/pool_reliability.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "core/evidence/evidence.h"
#include "core/evidence/run_attempts.h"

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

void PoolReliabilityRollup::Add(const MeasuredRun& run) {
  if (pool_name.empty()) pool_name = run.pool_name;
  multi_gpu = run.gpu_count > 1;
  const RunAttempts a = AttemptsOf(run);
  ++runs;
  attempts += a.attempts;
  run_hours += a.counted_hours;
  // A run of no time counts in the first bucket.
  const int bucket =
      LogHistogram::BucketOf(kRunHoursHistogram, a.counted_hours);
  ++run_hours_hist.counts[bucket];
  run_microseconds_by_bucket.counts[bucket] +=
      std::llround(a.counted_hours * 3.6e9);
  preempted_attempts +=
      a.failures_by_cause[static_cast<int>(AttemptFailureCause::kPreempted)];
  hardware_error_attempts += a.failures_by_cause[static_cast<int>(
      AttemptFailureCause::kHardwareError)];
  collective_timeout_attempts += a.failures_by_cause[static_cast<int>(
      AttemptFailureCause::kCollectiveTimeout)];
  double pool_lost_hours = 0;
  if (a.failed_attempts > 0) {
    pool_lost_hours = a.lost_hours * static_cast<double>(a.PoolFailures()) /
                      static_cast<double>(a.failed_attempts);
  }
  failure_lost_hours += pool_lost_hours;
  MostFailedRun failures_of_run;
  failures_of_run.failed_attempts = a.PoolFailures();
  failures_of_run.fabric_failed_attempts = a.failures_by_cause[static_cast<int>(
      AttemptFailureCause::kCollectiveTimeout)];
  failures_of_run.node_failed_attempts =
      failures_of_run.failed_attempts - failures_of_run.fabric_failed_attempts;
  failures_of_run.attempts = a.attempts;
  failures_of_run.counted_hours = a.counted_hours;
  failures_of_run.lost_hours = pool_lost_hours;
  most_failed_run.Merge(failures_of_run);
}

void PoolReliabilityRollup::Merge(const PoolReliabilityRollup& o) {
  if (pool_name.empty()) pool_name = o.pool_name;
  runs += o.runs;
  attempts += o.attempts;
  run_hours += o.run_hours;
  run_hours_hist.Merge(o.run_hours_hist);
  run_microseconds_by_bucket.Merge(o.run_microseconds_by_bucket);
  preempted_attempts += o.preempted_attempts;
  hardware_error_attempts += o.hardware_error_attempts;
  collective_timeout_attempts += o.collective_timeout_attempts;
  failure_lost_hours += o.failure_lost_hours;
  most_failed_run.Merge(o.most_failed_run);
}

namespace {

// The most hours one run counts for in ExposureHours.
double RunHoursCap(const PoolReliabilityRollup& r) {
  return kMaxRunInTypicalRuns *
         r.run_hours_hist.Quantile(kRunHoursHistogram, 0.75);
}

}  // namespace

double PoolReliabilityRollup::CountedExposureHours() const {
  const double exposure = ExposureHours();
  const MostFailedRun& top = most_failed_run;
  if (top.ExcessFailedAttempts(runs) <= 0 || run_hours_hist.Total() == 0) {
    return exposure;
  }
  const double cap = RunHoursCap(*this);
  const double before = std::min(top.counted_hours, cap);
  const double after = std::min(
      std::max(0.0, top.counted_hours - top.ExcessCountedHours(runs)), cap);
  return std::max(0.0, exposure - (before - after));
}

double PoolReliabilityRollup::ExposureHours() const {
  if (run_hours_hist.Total() == 0) return run_hours;
  const double cap = RunHoursCap(*this);
  // What the runs of each bucket held beyond the cap (their exact hours).
  double excess = 0;
  for (int i = 0; i < kHistogramBuckets; ++i) {
    const double held =
        static_cast<double>(run_microseconds_by_bucket.counts[i]) / 3.6e9;
    excess += std::max(
        0.0, held - static_cast<double>(run_hours_hist.counts[i]) * cap);
  }
  return std::max(0.0, run_hours - excess);
}

namespace {

// A rate's belief: Gamma(shape, rate) over failures per hour.
struct Belief {
  double shape = 0;
  double hours = 0;

  double Mean() const { return hours > 0 ? shape / hours : 0; }
  Band P10P90() const {
    return {GammaQuantile(shape, hours, 0.1), GammaQuantile(shape, hours, 0.9)};
  }
};

// Observed failures of one cause group over attempts and hours held.
struct Observed {
  double failures = 0;
  double hours = 0;
  int64_t attempts = 0;
};

// A rollup's failures as counted: the most-failed run's failed attempts
// beyond twice the next run's (and two) left out (MostFailedRun), with their
// share of its hours and of its own node and fabric failures.
struct Counted {
  double node_failures = 0;
  double fabric_failures = 0;
  int64_t attempts = 0;
  double exposure_hours = 0;
  double lost_hours = 0;
};

Counted CountedOf(const PoolReliabilityRollup& r) {
  const MostFailedRun& top = r.most_failed_run;
  const double share = top.ExcessShare(r.runs);
  Counted c;
  c.node_failures = std::max(
      0.0,
      static_cast<double>(r.preempted_attempts + r.hardware_error_attempts) -
          static_cast<double>(top.node_failed_attempts) * share);
  c.fabric_failures = std::max(
      0.0, static_cast<double>(r.collective_timeout_attempts) -
               static_cast<double>(top.fabric_failed_attempts) * share);
  c.attempts =
      std::max<int64_t>(0, r.attempts - top.ExcessFailedAttempts(r.runs));
  c.exposure_hours = r.CountedExposureHours();
  c.lost_hours =
      std::max(0.0, r.failure_lost_hours - top.ExcessLostHours(r.runs));
  return c;
}

constexpr double kPriorPerHour = kFailurePriorShape / kFailurePriorHours;

// The pool's rate from `seen`: the prior weighs one attempt of the runs'
// mean length, or kFailurePriorHours before any run.
Belief PoolBelief(const Observed& seen) {
  if (seen.attempts > 0 && seen.hours > 0) {
    const double w = seen.hours / static_cast<double>(seen.attempts);
    return {kPriorPerHour * w + static_cast<double>(seen.failures),
            w + seen.hours};
  }
  return {kFailurePriorShape + static_cast<double>(seen.failures),
          kFailurePriorHours + seen.hours};
}

Observed NodeFailures(const PoolFailures& pool) {
  const Counted s = CountedOf(pool.single_gpu);
  const Counted m = CountedOf(pool.multi_gpu);
  return {s.node_failures + m.node_failures,
          s.exposure_hours + m.exposure_hours, s.attempts + m.attempts};
}

Observed FabricFailures(const PoolFailures& pool) {
  const Counted s = CountedOf(pool.single_gpu);
  const Counted m = CountedOf(pool.multi_gpu);
  return {s.fabric_failures + m.fabric_failures, m.exposure_hours, m.attempts};
}

// What one failure loses on the pool: measured over its failed attempts
// (at most kMaxLossInAttempts of its mean attempt), else the prior.
// Sets the rate's loss and the mean attempt it was measured over.
void SetPoolLossPerFailure(const PoolFailures& pool, double failures,
                           double startup_hours, FailureRate* rate) {
  const Counted s = CountedOf(pool.single_gpu);
  const Counted m = CountedOf(pool.multi_gpu);
  rate->lost_hours_measured = failures > 0;
  if (!(failures > 0)) {
    rate->lost_hours_per_failure = kPriorLostHoursPerFailure + startup_hours;
    return;
  }
  const double hours = s.exposure_hours + m.exposure_hours;
  const int64_t attempts = s.attempts + m.attempts;
  double loss = (s.lost_hours + m.lost_hours) / failures;
  if (attempts > 0 && hours > 0) {
    const double mean_attempt = hours / static_cast<double>(attempts);
    loss = std::min(loss, kMaxLossInAttempts * mean_attempt);
    rate->lost_over_attempt_hours = mean_attempt;
  }
  rate->lost_hours_per_failure = loss;
}

void AddBelief(const Belief& b, FailureRate* rate) {
  rate->per_hour += b.Mean();
  const Band band = b.P10P90();
  // The sum of the groups' quantiles: wider than the sum's own band.
  rate->per_hour_band.low += band.low;
  rate->per_hour_band.high += band.high;
}

}  // namespace

FailureRate EstimateFailureRate(const PoolReliabilityRollup& single_gpu,
                                const PoolReliabilityRollup& multi_gpu,
                                bool layout_is_multi_gpu,
                                double startup_hours) {
  const PoolFailures pool{single_gpu, multi_gpu};
  FailureRate rate;
  // Node failures count over every run of the pool; fabric failures over
  // the multi-GPU runs, and only for a layout that opens collectives.
  const Observed node = NodeFailures(pool);
  AddBelief(PoolBelief(node), &rate);
  rate.hours = node.hours;
  double fabric_failures = 0;
  if (layout_is_multi_gpu) {
    const Observed fabric = FabricFailures(pool);
    AddBelief(PoolBelief(fabric), &rate);
    fabric_failures = fabric.failures;
  }
  rate.failures = std::llround(node.failures + fabric_failures);
  // The loss is measured over every failure of the pool's causes.
  const double all_failures =
      node.failures +
      (layout_is_multi_gpu ? fabric_failures : FabricFailures(pool).failures);
  SetPoolLossPerFailure(pool, all_failures, startup_hours, &rate);
  return rate;
}

FailureRate EstimateLayoutFailureRate(const PoolFailures& pool,
                                      bool layout_is_multi_gpu,
                                      double startup_hours,
                                      const RecipeFailures& own) {
  FailureRate rate = EstimateFailureRate(pool.single_gpu, pool.multi_gpu,
                                         layout_is_multi_gpu, startup_hours);
  if (own.attempts <= 0 || !(own.exposure_hours > 0)) return rate;
  rate.recipe_measured = true;
  // Its own causes (out of memory, unexplained): its record alone, over one
  // more attempt of it.
  const int64_t own_causes =
      std::max<int64_t>(0, own.failed_attempts - own.node_failed_attempts -
                               own.fabric_failed_attempts);
  const double w = own.exposure_hours / static_cast<double>(own.attempts);
  AddBelief({static_cast<double>(own_causes), w + own.exposure_hours}, &rate);
  rate.failures += own_causes;
  if (own.failed_attempts > 0) {
    rate.lost_hours_per_failure =
        std::min(std::max(0.0, own.lost_hours) /
                     static_cast<double>(own.failed_attempts),
                 kMaxLossInAttempts * w);
    rate.lost_hours_measured = true;
    rate.lost_over_attempt_hours = w;
  }
  return rate;
}

double LostHoursForJob(const FailureRate& rate, double job_hours,
                       double floor_hours) {
  const double measured = std::max(0.0, rate.lost_hours_per_failure);
  const double shorter_by = rate.lost_over_attempt_hours - job_hours;
  if (!(shorter_by > 0)) return measured;
  const double floor = std::min(measured, std::max(0.0, floor_hours));
  // A job with no checkpoint inside it loses at least its relaunch and half
  // of what it ran; where the attempts were checkpointed (they lost less
  // than half their length), that is more than the difference leaves.
  const double checkpointed = std::min(measured, floor + job_hours / 2);
  return std::clamp(std::max(measured - shorter_by / 2, checkpointed), floor,
                    measured);
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

}  // namespace placement::core
