#ifndef PLACEMENT_SERVICES_CONSOLE_RENDER_CHARTS_H_
#define PLACEMENT_SERVICES_CONSOLE_RENDER_CHARTS_H_

// Charts drawn on the server as inline SVG: a page is complete when it
// arrives (no script draws it, nothing is fetched after), and a test counts
// what is drawn. Every point is a <circle class="point"> carrying its
// series and exact coordinates (data-series, data-x, data-y), every bar
// segment a <rect class="segment"> with data-v; each chart's <svg> says
// how many points it holds (data-points).

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace placement::services::console {

struct ChartBand {
  double low = 0;
  double high = 0;
};

struct ChartPoint {
  double x = 0;  // for time series: days since 1970-01-01 (UTC)
  double y = 0;
  std::optional<ChartBand> band;  // drawn as a shaded area around the line
  std::string label;              // the point's tooltip prefix (its day)
};

struct ChartSeries {
  std::string name;
  std::vector<ChartPoint> points;  // in x order
};

using ValueFormat = std::function<std::string(double)>;

// A time series chart: one line per series (or only its points, when the
// days between them are not a continuum: counts of a day), bands as shaded
// areas, the y axis from 0, the series named in a legend under it.
struct LineChart {
  std::string id;  // the <svg>'s id
  std::string title;
  std::string y_label;
  ValueFormat format_y;
  bool x_is_day = true;  // x ticks as dates
  bool connect = true;   // draw the line through the points
  std::vector<ChartSeries> series;
};
std::string RenderLineChart(const LineChart& chart);

// Predicted (x) against observed (y): the diagonal where they agree, and
// the band the API's p90 error spans (observed within predicted / (1 +
// p90) and predicted / (1 - p90)).
struct ScatterChart {
  std::string id;
  std::string title;
  std::string x_label;
  std::string y_label;
  ValueFormat format;
  std::vector<ChartPoint> points;
  std::optional<double> p90_fraction;  // 0.12 = 12%
};
std::string RenderScatterChart(const ScatterChart& chart);

// Horizontal bars made of named segments (a candidate's GPU-hours made up
// of start-up, steps and rework).
struct StackedBar {
  std::string label;
  std::vector<double> segments;  // one per StackedBars::segment_names
  std::string note;              // after the bar (its total, its cost)
};
struct StackedBars {
  std::string id;
  std::string title;
  std::vector<std::string> segment_names;
  ValueFormat format;
  std::vector<StackedBar> bars;
};
std::string RenderStackedBars(const StackedBars& chart);

// One range per row: low to high with the figure marked (a bake-off's cost
// bands per pool).
struct RangeRow {
  std::string label;
  double value = 0;
  ChartBand band;
};
struct RangeChart {
  std::string id;
  std::string title;
  ValueFormat format;
  std::vector<RangeRow> rows;
};
std::string RenderRangeChart(const RangeChart& chart);

}  // namespace placement::services::console

#endif  // PLACEMENT_SERVICES_CONSOLE_RENDER_CHARTS_H_
