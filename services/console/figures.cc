#include "services/console/figures.h"

#include <algorithm>
#include <cmath>
#include <deque>

#include "absl/strings/numbers.h"
#include "absl/time/civil_time.h"
#include "absl/time/time.h"

namespace placement::services::console {
namespace {

double NearestRank(const std::vector<double>& sorted, double q) {
  const size_t n = sorted.size();
  size_t rank = static_cast<size_t>(std::ceil(q * static_cast<double>(n)));
  rank = std::clamp<size_t>(rank, 1, n);
  return sorted[rank - 1];
}

std::string DayText(double day) {
  return absl::FormatCivilTime(absl::CivilDay(1970, 1, 1) +
                               static_cast<int64_t>(std::llround(day)));
}

}  // namespace

std::optional<double> PerStepValue(absl::string_view decimal) {
  double value = 0;
  if (decimal.empty() || !absl::SimpleAtod(decimal, &value) ||
      !std::isfinite(value)) {
    return std::nullopt;
  }
  return value;
}

std::optional<ChartBand> QuantileBand(std::vector<double> values) {
  if (values.empty()) return std::nullopt;
  std::sort(values.begin(), values.end());
  return ChartBand{NearestRank(values, 0.1), NearestRank(values, 0.9)};
}

double DayNumber(const google::protobuf::Timestamp& period_start) {
  return std::floor(static_cast<double>(period_start.seconds()) / 86400.0);
}

PoolCost PoolCostOf(const v1::CostReportRow& total,
                    const std::vector<v1::CostReportRow>& daily_rows) {
  PoolCost cost;
  cost.row = total;
  std::vector<double> daily;
  for (const v1::CostReportRow& row : daily_rows) {
    if (std::optional<double> v =
            PerStepValue(row.internal_cost_per_successful_step())) {
      daily.push_back(*v);
    }
  }
  cost.band_days = static_cast<int>(daily.size());
  cost.band = QuantileBand(std::move(daily));
  return cost;
}

ChartSeries DailyCostSeries(const std::string& name,
                            const std::vector<v1::CostReportRow>& daily_rows) {
  ChartSeries series;
  series.name = name;
  // (day, figure) of the days with a successful step, the window's only.
  std::deque<std::pair<double, double>> window;
  for (const v1::CostReportRow& row : daily_rows) {
    std::optional<double> v =
        PerStepValue(row.internal_cost_per_successful_step());
    if (!v.has_value()) continue;
    const double day = DayNumber(row.period_start_time());
    window.emplace_back(day, *v);
    while (window.front().first <= day - kBandWindowDays) window.pop_front();
    std::vector<double> values;
    for (const auto& [d, value] : window) values.push_back(value);
    series.points.push_back({day, *v, QuantileBand(values), DayText(day)});
  }
  return series;
}

PoolFailures FailuresOf(const core::PoolReliabilityRollup& single_gpu,
                        const core::PoolReliabilityRollup& multi_gpu) {
  PoolFailures failures;
  failures.runs = single_gpu.runs + multi_gpu.runs;
  failures.attempts = single_gpu.attempts + multi_gpu.attempts;
  failures.run_hours = single_gpu.run_hours + multi_gpu.run_hours;
  // The start-up only sets the lost hours assumed without failures, which
  // the pages do not show: 0 here.
  failures.single_gpu_layout =
      core::EstimateFailureRate(single_gpu, multi_gpu, false, 0);
  failures.multi_gpu_layout =
      core::EstimateFailureRate(single_gpu, multi_gpu, true, 0);
  const double all_hours =
      single_gpu.ExposureHours() + multi_gpu.ExposureHours();
  failures.by_cause = {
      {core::RunOutcome::kPreempted,
       single_gpu.preempted_attempts + multi_gpu.preempted_attempts, all_hours},
      {core::RunOutcome::kHardwareError,
       single_gpu.hardware_error_attempts + multi_gpu.hardware_error_attempts,
       all_hours},
      {core::RunOutcome::kCollectiveTimeout,
       single_gpu.collective_timeout_attempts +
           multi_gpu.collective_timeout_attempts,
       multi_gpu.ExposureHours()},
  };
  return failures;
}

}  // namespace placement::services::console
