#include "services/console/render/charts.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/civil_time.h"
#include "services/console/render/html.h"

namespace placement::services::console {
namespace {

// The drawing area inside the SVG's view box (user units).
constexpr double kWidth = 720;
constexpr double kHeight = 260;
constexpr double kLeft = 76;
constexpr double kRight = 16;
constexpr double kTop = 24;
constexpr double kBottom = 36;
constexpr int kSeriesClasses = 8;  // .s0 .. .s7 in console.css

// A linear map from data to drawing coordinates.
struct Scale {
  double from_low, from_high, to_low, to_high;
  double operator()(double v) const {
    if (from_high == from_low) return (to_low + to_high) / 2;
    return to_low +
           (v - from_low) / (from_high - from_low) * (to_high - to_low);
  }
};

std::string Num(double v) { return absl::StrFormat("%.2f", v); }

// An axis tick's label: three significant digits, whatever the figure's own
// format (a cost per step's nine decimals do not fit beside the axis).
std::string Tick(double v) { return absl::StrFormat("%.3g", v); }

// The smallest of 1, 2, 2.5, 5 x 10^k at or above `v` (> 0): an axis top
// whose quarters read well.
double NiceTop(double v) {
  const double power = std::pow(10, std::floor(std::log10(v)));
  for (double step : {1.0, 2.0, 2.5, 5.0, 10.0}) {
    if (step * power >= v * (1 - 1e-12)) return step * power;
  }
  return 10 * power;
}

std::string DayLabel(double day) {
  const absl::CivilDay d =
      absl::CivilDay(1970, 1, 1) + static_cast<int64_t>(std::llround(day));
  return absl::FormatCivilTime(d);
}

std::string Open(absl::string_view id, absl::string_view kind,
                 absl::string_view title, size_t points, double height) {
  return absl::StrCat(
      "<figure class=\"chart\"><figcaption>", Esc(title),
      "</figcaption><svg id=\"", Esc(id), "\" class=\"chart\" data-kind=\"",
      kind, "\" data-points=\"", points, "\" role=\"img\" aria-label=\"",
      Esc(title), "\" viewBox=\"0 0 ", Num(kWidth), " ", Num(height),
      "\" xmlns=\"http://www.w3.org/2000/svg\">");
}

constexpr char kClose[] = "</svg></figure>";

// The series' names under a chart, in their colours.
std::string Legend(const std::vector<ChartSeries>& series) {
  std::string out = "<ul class=\"legend\">";
  for (size_t i = 0; i < series.size(); ++i) {
    absl::StrAppend(&out, "<li class=\"s", i % kSeriesClasses, "\">",
                    Esc(series[i].name), "</li>");
  }
  return out + "</ul>";
}

std::string NoData(absl::string_view id, absl::string_view kind,
                   absl::string_view title) {
  return absl::StrCat(
      Open(id, kind, title, 0, kHeight / 2), "<text class=\"empty\" x=\"",
      Num(kWidth / 2), "\" y=\"", Num(kHeight / 4),
      "\" text-anchor=\"middle\">no data in this range</text>", kClose);
}

// The y axis: four ticks from 0 to `top`, with their labels and grid lines.
std::string YAxis(const Scale& y, double top, absl::string_view label) {
  std::string out;
  for (int i = 0; i <= 4; ++i) {
    const double v = top * i / 4;
    absl::StrAppend(&out, "<line class=\"grid\" x1=\"", Num(kLeft), "\" x2=\"",
                    Num(kWidth - kRight), "\" y1=\"", Num(y(v)), "\" y2=\"",
                    Num(y(v)), "\"/><text class=\"tick\" x=\"", Num(kLeft - 6),
                    "\" y=\"", Num(y(v) + 4), "\" text-anchor=\"end\">",
                    Esc(Tick(v)), "</text>");
  }
  absl::StrAppend(&out, "<text class=\"axis-label\" x=\"", Num(kLeft),
                  "\" y=\"", Num(kTop - 8), "\">", Esc(label), "</text>");
  return out;
}

// The x axis of a time series: up to five dates spread over [low, high].
std::string DayAxis(const Scale& x, double low, double high, double base) {
  std::string out;
  const int ticks = std::min(4, static_cast<int>(high - low));
  for (int i = 0; i <= ticks; ++i) {
    const double day =
        ticks == 0 ? low : std::round(low + (high - low) * i / ticks);
    // The end labels lean inwards, so that none is cut at an edge.
    const char* anchor = ticks == 0   ? "middle"
                         : i == 0     ? "start"
                         : i == ticks ? "end"
                                      : "middle";
    absl::StrAppend(&out, "<text class=\"tick\" x=\"", Num(x(day)), "\" y=\"",
                    Num(base + 16), "\" text-anchor=\"", anchor, "\">",
                    DayLabel(day), "</text>");
  }
  return out;
}

// A value axis along x: five ticks from 0 to `top`.
std::string XValueAxis(const Scale& x, double top, double base,
                       absl::string_view label) {
  std::string out;
  for (int i = 0; i <= 4; ++i) {
    const double v = top * i / 4;
    absl::StrAppend(&out, "<text class=\"tick\" x=\"", Num(x(v)), "\" y=\"",
                    Num(base + 16), "\" text-anchor=\"",
                    i == 4 ? "end" : "middle", "\">", Esc(Tick(v)), "</text>");
  }
  absl::StrAppend(&out, "<text class=\"axis-label\" x=\"", Num(kWidth - kRight),
                  "\" y=\"", Num(base + 32), "\" text-anchor=\"end\">",
                  Esc(label), "</text>");
  return out;
}

// One point, with its tooltip.
std::string Point(double cx, double cy, int series_class,
                  absl::string_view series, const ChartPoint& p,
                  absl::string_view shown) {
  return absl::StrCat(
      "<circle class=\"point s", series_class, "\" cx=\"", Num(cx), "\" cy=\"",
      Num(cy), "\" r=\"3.5\" data-series=\"", Esc(series), "\" data-x=\"",
      Exact(p.x), "\" data-y=\"", Exact(p.y), "\"><title>", Esc(series),
      series.empty() ? "" : " ", Esc(p.label), p.label.empty() ? "" : ": ",
      Esc(shown), "</title></circle>");
}

double Finite(double v) { return std::isfinite(v) ? v : 0; }

}  // namespace

std::string RenderLineChart(const LineChart& chart) {
  size_t points = 0;
  double x_low = 0, x_high = 0, y_top = 0;
  bool first = true;
  for (const ChartSeries& s : chart.series) {
    for (const ChartPoint& p : s.points) {
      ++points;
      x_low = first ? p.x : std::min(x_low, p.x);
      x_high = first ? p.x : std::max(x_high, p.x);
      first = false;
      y_top = std::max(y_top, Finite(p.y));
      if (p.band) y_top = std::max(y_top, Finite(p.band->high));
    }
  }
  if (points == 0) return NoData(chart.id, "line", chart.title);
  y_top = y_top > 0 ? NiceTop(y_top * 1.02) : 1;
  const double base = kHeight - kBottom;
  const Scale x{x_low, x_high, kLeft + 8, kWidth - kRight - 8};
  const Scale y{0, y_top, base, kTop};
  std::string out = Open(chart.id, "line", chart.title, points, kHeight);
  absl::StrAppend(&out, YAxis(y, y_top, chart.y_label));
  if (chart.x_is_day) absl::StrAppend(&out, DayAxis(x, x_low, x_high, base));
  for (size_t i = 0; i < chart.series.size(); ++i) {
    const ChartSeries& s = chart.series[i];
    const int cls = static_cast<int>(i % kSeriesClasses);
    // The band: the low edge left to right, the high edge back.
    std::string low_edge, high_edge;
    for (const ChartPoint& p : s.points) {
      if (!p.band) continue;
      absl::StrAppend(&low_edge, Num(x(p.x)), ",", Num(y(Finite(p.band->low))),
                      " ");
      high_edge = absl::StrCat(Num(x(p.x)), ",", Num(y(Finite(p.band->high))),
                               " ", high_edge);
    }
    if (!low_edge.empty()) {
      absl::StrAppend(&out, "<polygon class=\"band s", cls, "\" points=\"",
                      low_edge, high_edge, "\"/>");
    }
    if (chart.connect) {
      std::string line;
      for (const ChartPoint& p : s.points) {
        absl::StrAppend(&line, Num(x(p.x)), ",", Num(y(Finite(p.y))), " ");
      }
      absl::StrAppend(&out, "<polyline class=\"line s", cls, "\" points=\"",
                      line, "\"/>");
    }
    for (const ChartPoint& p : s.points) {
      std::string shown = chart.format_y(p.y);
      if (p.band) {
        absl::StrAppend(&shown, " (band ", chart.format_y(p.band->low), " to ",
                        chart.format_y(p.band->high), ")");
      }
      absl::StrAppend(&out,
                      Point(x(p.x), y(Finite(p.y)), cls, s.name, p, shown));
    }
  }
  // The legend goes inside the figure, after the drawing.
  absl::StrAppend(&out, "</svg>", Legend(chart.series), "</figure>");
  return out;
}

std::string RenderScatterChart(const ScatterChart& chart) {
  if (chart.points.empty()) {
    return NoData(chart.id, "scatter", chart.title);
  }
  double top = 0;
  for (const ChartPoint& p : chart.points) {
    top = std::max({top, Finite(p.x), Finite(p.y)});
  }
  top = top > 0 ? NiceTop(top * 1.02) : 1;
  const double height = kHeight + 16;
  const double base = height - kBottom - 16;
  const Scale x{0, top, kLeft, kWidth - kRight};
  const Scale y{0, top, base, kTop};
  std::string out =
      Open(chart.id, "scatter", chart.title, chart.points.size(), height);
  absl::StrAppend(&out, YAxis(y, top, chart.y_label),
                  XValueAxis(x, top, base, chart.x_label));
  if (chart.p90_fraction.has_value() && *chart.p90_fraction > 0) {
    // observed = predicted / (1 + e) below the diagonal, / (1 - e) above
    // it (vertical when e >= 1: any observed figure down to 0 is inside).
    const double e = *chart.p90_fraction;
    const double low_end = top / (1 + e);
    const double upper_x = e < 1 ? std::min(top, top * (1 - e)) : 0;
    absl::StrAppend(&out, "<polygon class=\"band s0\" points=\"", Num(x(0)),
                    ",", Num(y(0)), " ", Num(x(top)), ",", Num(y(low_end)), " ",
                    Num(x(top)), ",", Num(y(top)), " ", Num(x(upper_x)), ",",
                    Num(y(top)),
                    "\"><title>p90 of the absolute error: ", Percent(e),
                    "</title></polygon>");
  }
  absl::StrAppend(&out, "<line class=\"diagonal\" x1=\"", Num(x(0)), "\" y1=\"",
                  Num(y(0)), "\" x2=\"", Num(x(top)), "\" y2=\"", Num(y(top)),
                  "\"/>");
  for (const ChartPoint& p : chart.points) {
    absl::StrAppend(
        &out, Point(x(Finite(p.x)), y(Finite(p.y)), 0, "", p,
                    absl::StrCat("predicted ", chart.format(p.x), ", observed ",
                                 chart.format(p.y))));
  }
  return out + kClose;
}

std::string RenderStackedBars(const StackedBars& chart) {
  if (chart.bars.empty()) return NoData(chart.id, "bars", chart.title);
  double top = 0;
  for (const StackedBar& bar : chart.bars) {
    double total = 0;
    for (double v : bar.segments) total += std::max(0.0, Finite(v));
    top = std::max(top, total);
  }
  if (top <= 0) top = 1;
  constexpr double kRow = 26;
  constexpr double kLabel = 150;
  constexpr double kNote = 210;
  const double height = kTop + kRow * chart.bars.size() + 28;
  const Scale x{0, top, kLabel, kWidth - kNote};
  size_t segments = 0;
  for (const StackedBar& bar : chart.bars) segments += bar.segments.size();
  std::string out = Open(chart.id, "bars", chart.title, segments, height);
  for (size_t i = 0; i < chart.segment_names.size(); ++i) {
    absl::StrAppend(&out, "<text class=\"legend s", i % kSeriesClasses,
                    "\" x=\"", Num(kLabel + 130 * i), "\" y=\"", Num(kTop - 8),
                    "\">", Esc(chart.segment_names[i]), "</text>");
  }
  for (size_t row = 0; row < chart.bars.size(); ++row) {
    const StackedBar& bar = chart.bars[row];
    const double top_y = kTop + kRow * row;
    absl::StrAppend(&out, "<g class=\"bar\" data-label=\"", Esc(bar.label),
                    "\"><text class=\"tick\" x=\"", Num(kLabel - 6), "\" y=\"",
                    Num(top_y + 15), "\" text-anchor=\"end\">", Esc(bar.label),
                    "</text>");
    double at = 0;
    for (size_t s = 0; s < bar.segments.size(); ++s) {
      const double v = std::max(0.0, Finite(bar.segments[s]));
      const std::string name =
          s < chart.segment_names.size() ? chart.segment_names[s] : "";
      absl::StrAppend(
          &out, "<rect class=\"segment s", s % kSeriesClasses, "\" x=\"",
          Num(x(at)), "\" y=\"", Num(top_y + 3), "\" width=\"",
          Num(x(at + v) - x(at)), "\" height=\"18\" data-segment=\"", Esc(name),
          "\" data-v=\"", Exact(bar.segments[s]), "\"><title>", Esc(bar.label),
          " ", Esc(name), ": ", Esc(chart.format(v)), "</title></rect>");
      at += v;
    }
    absl::StrAppend(&out, "<text class=\"note\" x=\"", Num(x(at) + 6),
                    "\" y=\"", Num(top_y + 15), "\">", Esc(bar.note),
                    "</text></g>");
  }
  return out + kClose;
}

std::string RenderRangeChart(const RangeChart& chart) {
  if (chart.rows.empty()) return NoData(chart.id, "ranges", chart.title);
  double top = 0;
  for (const RangeRow& row : chart.rows) {
    top = std::max({top, Finite(row.value), Finite(row.band.high)});
  }
  top = top > 0 ? NiceTop(top * 1.02) : 1;
  constexpr double kRow = 26;
  constexpr double kLabel = 150;
  const double height = kTop + kRow * chart.rows.size() + 36;
  const double base = kTop + kRow * chart.rows.size();
  const Scale x{0, top, kLabel, kWidth - kRight - 40};
  std::string out =
      Open(chart.id, "ranges", chart.title, chart.rows.size(), height);
  for (int i = 0; i <= 4; ++i) {
    const double v = top * i / 4;
    absl::StrAppend(&out, "<text class=\"tick\" x=\"", Num(x(v)), "\" y=\"",
                    Num(base + 16), "\" text-anchor=\"middle\">", Esc(Tick(v)),
                    "</text>");
  }
  for (size_t i = 0; i < chart.rows.size(); ++i) {
    const RangeRow& row = chart.rows[i];
    const double mid = kTop + kRow * i + 12;
    ChartPoint p{row.value, static_cast<double>(i), ChartBand{row.band}, ""};
    absl::StrAppend(
        &out, "<text class=\"tick\" x=\"", Num(kLabel - 6), "\" y=\"",
        Num(mid + 4), "\" text-anchor=\"end\">", Esc(row.label),
        "</text><line class=\"range s", i % kSeriesClasses, "\" x1=\"",
        Num(x(Finite(row.band.low))), "\" x2=\"", Num(x(Finite(row.band.high))),
        "\" y1=\"", Num(mid), "\" y2=\"", Num(mid), "\"/>",
        Point(x(Finite(row.value)), mid, static_cast<int>(i % kSeriesClasses),
              row.label, p,
              absl::StrCat(chart.format(row.value), " (band ",
                           chart.format(row.band.low), " to ",
                           chart.format(row.band.high), ")")));
  }
  return out + kClose;
}

}  // namespace placement::services::console
