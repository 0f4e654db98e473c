#ifndef PLACEMENT_SERVICES_CONSOLE_FIGURES_H_
#define PLACEMENT_SERVICES_CONSOLE_FIGURES_H_

// What the console derives from the API's answers to draw them: the bands
// of daily cost per successful step, the series of a chart, a pool's
// failure rates from its reliability rollups. Cost per successful step
// itself is never computed here: it is GetCostReport's figure, parsed from
// the decimal string the API answers.

#include <optional>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "core/evidence/pool_reliability.h"
#include "google/protobuf/timestamp.pb.h"
#include "placement/v1/cost.pb.h"
#include "services/console/models.h"
#include "services/console/render/charts.h"

namespace placement::services::console {

// How many days back a daily point's band reaches (the day included).
inline constexpr int kBandWindowDays = 7;

// A per-step money figure of the API ("0.001111111", currency units);
// nullopt for "" (no successful step) or text that is not a number.
std::optional<double> PerStepValue(absl::string_view decimal);

// The 10th to 90th percentile (nearest rank) of `values`; nullopt when
// there are none. With one value both edges are it.
std::optional<ChartBand> QuantileBand(std::vector<double> values);

// Days since 1970-01-01 of a row's period (UTC midnight).
double DayNumber(const google::protobuf::Timestamp& period_start);

// A pool's cost: its row over the range and the band of its daily cost per
// successful step (the p10-p90 of the days in `daily_rows`, the pool's rows
// grouped by day, that have a successful step).
PoolCost PoolCostOf(const v1::CostReportRow& total,
                    const std::vector<v1::CostReportRow>& daily_rows);

// The daily cost per successful step of `daily_rows` (rows of one group,
// grouped by day, in day order) as a series: one point a day with a
// successful step, each with the band of the days of the last
// kBandWindowDays that have one.
ChartSeries DailyCostSeries(const std::string& name,
                            const std::vector<v1::CostReportRow>& daily_rows);

// A pool's failure rates as a plan prices them (EstimateFailureRate for a
// one-GPU and a multi-GPU layout) and the failed attempts behind them by
// cause.
PoolFailures FailuresOf(const core::PoolReliabilityRollup& single_gpu,
                        const core::PoolReliabilityRollup& multi_gpu);

}  // namespace placement::services::console

#endif  // PLACEMENT_SERVICES_CONSOLE_FIGURES_H_
