#include "services/console/render/figure_text.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/time.h"
#include "core/money.h"
#include "services/console/render/html.h"

namespace placement::services::console {

std::string MoneyText(int64_t micros) {
  return core::FormatMicrosAsCents(micros);
}

std::string PerStepText(absl::string_view decimal) {
  return decimal.empty() ? "-" : std::string(decimal);
}

std::string PerStepNumber(double value) {
  return absl::StrFormat("%.9f", value);
}

std::string BandText(const ChartBand& band, int digits) {
  return absl::StrCat(Fixed(band.low, digits), " to ",
                      Fixed(band.high, digits));
}

std::string BandText(const v1::Band& band, int digits) {
  return BandText(ChartBand{band.low(), band.high()}, digits);
}

std::string RateText(double per_hour) {
  return absl::StrFormat("%.4f/h", per_hour);
}

std::string PeriodText(const v1::CostReportRow& row) {
  if (!row.has_period_start_time()) return "";
  return absl::FormatTime(
      "%Y-%m-%d", absl::FromUnixSeconds(row.period_start_time().seconds()),
      absl::UTCTimeZone());
}

std::string CostFigureHeadings() {
  return absl::StrCat(
      "<th>Runs</th><th>Failed</th><th>Retries</th><th>GPU-hours</th>"
      "<th>Wasted GPU-hours</th><th>Successful steps</th>"
      "<th>GPU-h / 1k steps</th><th>Cost</th><th>Cost / successful step</th>"
      "<th>List cost / step</th><th>Observed / list</th>");
}

std::string CostFigureCells(const v1::CostReportRow& row) {
  return absl::StrCat(
      NumCell("runs", absl::StrCat(row.runs()), absl::StrCat(row.runs())),
      NumCell("failed_runs", absl::StrCat(row.failed_runs()),
              absl::StrCat(row.failed_runs())),
      NumCell("retries", absl::StrCat(row.retries()),
              absl::StrCat(row.retries())),
      NumCell("gpu_hours", Fixed(row.gpu_hours(), 2), Exact(row.gpu_hours())),
      NumCell("wasted_gpu_hours", Fixed(row.wasted_gpu_hours(), 2),
              Exact(row.wasted_gpu_hours())),
      NumCell("successful_steps", absl::StrCat(row.successful_steps()),
              absl::StrCat(row.successful_steps())),
      NumCell("gpu_hours_per_1k_successful_steps",
              row.successful_steps() == 0
                  ? "-"
                  : Fixed(row.gpu_hours_per_1k_successful_steps(), 4),
              Exact(row.gpu_hours_per_1k_successful_steps())),
      NumCell("internal_cost_micros", MoneyText(row.internal_cost_micros()),
              absl::StrCat(row.internal_cost_micros())),
      NumCell("internal_cost_per_successful_step",
              PerStepText(row.internal_cost_per_successful_step()),
              row.internal_cost_per_successful_step()),
      NumCell("list_price_cost_per_successful_step",
              row.has_list_price()
                  ? PerStepText(row.list_price_cost_per_successful_step())
                  : "-",
              row.list_price_cost_per_successful_step()),
      NumCell("observed_over_list_price_ratio",
              row.has_list_price()
                  ? Fixed(row.observed_over_list_price_ratio(), 3)
                  : "-",
              Exact(row.observed_over_list_price_ratio())));
}

}  // namespace placement::services::console
