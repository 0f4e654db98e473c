#include "core/plan/job_cost.h"

#include <algorithm>
#include <cmath>

namespace placement::core {
namespace {

// A pool that loses more per hour than it runs is priced at a 100-fold
// overrun, not infinity.
constexpr double kMaxLostShare = 0.99;

struct StepsAndRework {
  double run_gpu_hours = 0;  // start-up and steps, once
  double expected_failures = 0;
  double rework_gpu_hours = 0;
};

// Each failure holds every GPU for `lost_hours` more, during which failures
// arrive too: rate x run hours x (1 + r + r^2 ...), r = rate x lost.
StepsAndRework Project(int gpus, double startup_gpu_hours,
                       double step_gpu_hours, int64_t steps, double per_hour,
                       double lost_hours) {
  StepsAndRework p;
  p.run_gpu_hours = std::max(0.0, startup_gpu_hours) +
                    std::max(0.0, step_gpu_hours) * static_cast<double>(steps);
  const double rate = std::max(0.0, per_hour);
  const double lost = std::max(0.0, lost_hours);
  const double lost_share = std::min(kMaxLostShare, rate * lost);
  p.expected_failures = rate * (p.run_gpu_hours / gpus) / (1 - lost_share);
  p.rework_gpu_hours = p.expected_failures * lost * gpus;
  return p;
}

double Total(const StepsAndRework& p) {
  return p.run_gpu_hours + p.rework_gpu_hours;
}

// The band of a measured step: the spread of the runs' mean step times
// (p10-p90 over runs), never narrower than the histogram that keeps them
// can tell (half a 19% bucket either side).
Band MeasuredStepBand(const EvidenceStats& m, double step_gpu_hours,
                      double gpus) {
  const double resolution = std::sqrt(kStepTimeHistogram.growth);
  double low = step_gpu_hours;
  double high = step_gpu_hours;
  if (m.run_step_time_p10_s > 0) {
    low = std::min(low, m.run_step_time_p10_s * gpus / 3600);
    high = std::max(high, m.run_step_time_p90_s * gpus / 3600);
  }
  return {low / resolution, high * resolution};
}

// An attempt's start-up in GPU-hours: the succeeded attempts' mean within
// kMaxStartupPullFromMedian of their median, or that median alone when it
// is the unretried runs' (EvidenceStats: the mean then holds the retries'
// detection and relaunch), or the model's start-up elsewhere when every
// succeeded run may have retried and it is lower, else the 0017 figure
// per run, else the prior.
double StartupGpuHours(const EvidenceStats& m, double g,
                       std::optional<double> model_startup_hours) {
  if (m.median_startup_hours_per_attempt) {
    const double median = *m.median_startup_hours_per_attempt * g;
    if (m.startup_of_unretried_runs) return median;
    const double startup = std::clamp(m.mean_startup_gpu_hours_per_attempt,
                                      median / kMaxStartupPullFromMedian,
                                      median * kMaxStartupPullFromMedian);
    if (m.startup_holds_retries && model_startup_hours &&
        *model_startup_hours > 0) {
      return std::min(startup, *model_startup_hours * g);
    }
    return startup;
  }
  if (m.startup_gpu_hours_per_run) return *m.startup_gpu_hours_per_run;
  return g * kPriorStartupSeconds / 3600;
}

// What the runs lost to their failed attempts, in GPU-hours. The stored
// figure takes from each succeeded run that retried its own start-up per
// attempt, which holds its failures' detection and relaunch; those belong
// to the failures. Counted against `startup_gpu_hours` (an attempt that
// did not fail), the runs lost what their counted time did not keep beyond
// one start-up per succeeded run: the loss each failure is priced at then
// holds its detection, and the start-up every job pays does not.
double LostGpuHours(const EvidenceStats& m, double startup_gpu_hours) {
  if (m.retried_succeeded_attempts <= 0 || !m.busy_gpu_hours_per_step) {
    return m.lost_gpu_hours;
  }
  const double kept =
      static_cast<double>(m.steps_succeeded) * *m.busy_gpu_hours_per_step;
  const double lost =
      m.exposure_gpu_hours - kept -
      startup_gpu_hours * static_cast<double>(m.successful_runs);
  return std::clamp(lost, m.lost_gpu_hours,
                    std::max(m.lost_gpu_hours, m.exposure_gpu_hours));
}

}  // namespace

JobCost ProjectJobCost(const JobCostInputs& in, int64_t steps) {
  const int gpus = std::max(1, in.gpus);
  const double job_hours =
      (std::max(0.0, in.startup_gpu_hours) +
       std::max(0.0, in.step_gpu_hours) * static_cast<double>(steps)) /
      gpus;
  const double lost =
      LostHoursForJob(in.failure, job_hours, in.startup_gpu_hours / gpus);
  const StepsAndRework nominal =
      Project(gpus, in.startup_gpu_hours, in.step_gpu_hours, steps,
              in.failure.per_hour, lost);
  JobCost cost;
  cost.startup_gpu_hours = std::max(0.0, in.startup_gpu_hours);
  cost.steps_gpu_hours =
      std::max(0.0, in.step_gpu_hours) * static_cast<double>(steps);
  cost.expected_failures = nominal.expected_failures;
  cost.rework_gpu_hours = nominal.rework_gpu_hours;
  cost.lost_hours_per_failure = lost;
  cost.total_gpu_hours = Total(nominal);
  cost.wall_hours = cost.total_gpu_hours / gpus;
  const bool has_step_band = in.step_gpu_hours_band.high > 0;
  const double step_low =
      has_step_band ? std::min(in.step_gpu_hours, in.step_gpu_hours_band.low)
                    : in.step_gpu_hours;
  const double step_high =
      has_step_band ? std::max(in.step_gpu_hours, in.step_gpu_hours_band.high)
                    : in.step_gpu_hours;
  const double rate_low =
      std::min(in.failure.per_hour, in.failure.per_hour_band.low);
  const double rate_high =
      std::max(in.failure.per_hour, in.failure.per_hour_band.high);
  cost.total_gpu_hours_band = {
      Total(
          Project(gpus, in.startup_gpu_hours, step_low, steps, rate_low, lost)),
      Total(Project(gpus, in.startup_gpu_hours, step_high, steps, rate_high,
                    lost))};
  return cost;
}

std::optional<JobCostInputs> MeasuredJobInputs(
    const EvidenceStats& m, int gpus, const PoolFailures& pool,
    std::optional<double> model_startup_hours) {
  if (!m.busy_gpu_hours_per_step) return std::nullopt;
  JobCostInputs in;
  in.gpus = std::max(1, gpus);
  const double g = in.gpus;
  in.step_gpu_hours = *m.busy_gpu_hours_per_step;
  if (m.median_run_step_time_s > 0) {
    const double typical = m.median_run_step_time_s * g / 3600;
    in.step_gpu_hours =
        std::clamp(in.step_gpu_hours, typical / kMaxStepPullFromMedianRun,
                   typical * kMaxStepPullFromMedianRun);
  }
  in.step_gpu_hours_band = MeasuredStepBand(m, in.step_gpu_hours, g);
  in.startup_gpu_hours = StartupGpuHours(m, g, model_startup_hours);
  RecipeFailures own;
  own.attempts = m.attempts;
  own.failed_attempts = m.failed_attempts;
  own.node_failed_attempts = m.node_failed_attempts;
  own.fabric_failed_attempts = m.fabric_failed_attempts;
  own.exposure_hours = m.exposure_gpu_hours / g;
  own.lost_hours = LostGpuHours(m, in.startup_gpu_hours) / g;
  in.failure = EstimateLayoutFailureRate(pool, in.gpus > 1,
                                         in.startup_gpu_hours / g, own);
  return in;
}

std::optional<ObservedCost> ObservedJobCost(
    const EvidenceStats& m, int gpus,
    std::optional<double> model_startup_hours) {
  if (m.steps_succeeded <= 0 || !(m.exposure_gpu_hours > 0) ||
      !m.busy_gpu_hours_per_step) {
    return std::nullopt;
  }
  const double g = std::max(1, gpus);
  ObservedCost observed;
  observed.gpu_hours_per_successful_step =
      m.exposure_gpu_hours / static_cast<double>(m.steps_succeeded);
  // The runs as jobs: each succeeded run one job of the steps they kept.
  const double jobs = std::max<int64_t>(1, m.successful_runs);
  const double held_hours = m.exposure_gpu_hours / g;
  const double startup_hours = StartupGpuHours(m, g, model_startup_hours) / g;
  const double lost_hours =
      std::min(LostGpuHours(m, startup_hours * g) / g, held_hours);
  const double job_hours = (held_hours - lost_hours) / jobs;
  const double job_steps = static_cast<double>(m.steps_succeeded) / jobs;
  observed.job_steps = static_cast<int64_t>(std::llround(job_steps));
  const double steps_hours =
      std::min(job_hours, job_steps * *m.busy_gpu_hours_per_step / g);
  const double mean_step_s = *m.busy_gpu_hours_per_step / g * 3600;
  const double slow =
      mean_step_s > 0 ? std::max(1.0, m.p95_step_time_s / mean_step_s) : 1;
  const double failures = static_cast<double>(m.failed_attempts);
  // Runs that never failed still leave a rate they cannot rule out (the
  // Jeffreys p90 below), and the band's upper edge prices it as a
  // projection prices a failure of a job with no checkpoint
  // (LostHoursForJob): a relaunch and half of the job. Priced at nothing,
  // a clean pool's band would be its runs' figure alone, and any rework a
  // projection expects would lie above it.
  const double loss =
      failures > 0 ? lost_hours / failures : startup_hours + job_hours / 2;
  auto per_step = [&](double step_factor, double rate) {
    const double run = job_hours + steps_hours * (step_factor - 1);
    const double total = run / (1 - std::min(kMaxLostShare, rate * loss));
    return total * g / job_steps;
  };
  const double shape = failures + 0.5;
  observed.band = {
      per_step(1, failures > 0 ? GammaQuantile(shape, held_hours, 0.1) : 0),
      per_step(slow, GammaQuantile(shape, held_hours, 0.9))};
  observed.band.low =
      std::min(observed.band.low, observed.gpu_hours_per_successful_step);
  observed.band.high =
      std::max(observed.band.high, observed.gpu_hours_per_successful_step);
  return observed;
}

}  // namespace placement::core
