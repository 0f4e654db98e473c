#ifndef PLACEMENT_SERVICES_CONSOLE_RENDER_FIGURE_TEXT_H_
#define PLACEMENT_SERVICES_CONSOLE_RENDER_FIGURE_TEXT_H_

// How the pages write the API's figures: money as the API and placectl
// write it, bands as "low to high", rates per hour.

#include <cstdint>
#include <optional>
#include <string>

#include "absl/strings/string_view.h"
#include "placement/v1/cost.pb.h"
#include "placement/v1/placement.pb.h"
#include "services/console/render/charts.h"

namespace placement::services::console {

// Micro-units as currency to the cent ("26.36"), as placectl's tables
// write it (the exact micro-units are the cell's data-v).
std::string MoneyText(int64_t micros);
// A per-step decimal of the API, "-" when empty (no successful step).
std::string PerStepText(absl::string_view decimal);
// A per-step figure in currency units (a band's edge): nine decimals, as
// the API writes per-step money.
std::string PerStepNumber(double value);
// "low to high" with `digits` decimals.
std::string BandText(const ChartBand& band, int digits);
std::string BandText(const v1::Band& band, int digits);
// A failure rate per hour ("0.0050/h").
std::string RateText(double per_hour);
// The period of a cost row ("2026-01-31"), "" without one.
std::string PeriodText(const v1::CostReportRow& row);
// The figures of a cost row as table cells, in the order of
// CostFigureHeadings(), each with data-field = the proto field's name.
std::string CostFigureCells(const v1::CostReportRow& row);
std::string CostFigureHeadings();

}  // namespace placement::services::console

#endif  // PLACEMENT_SERVICES_CONSOLE_RENDER_FIGURE_TEXT_H_
