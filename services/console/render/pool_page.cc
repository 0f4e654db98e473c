// One pool: its catalog entry, its cost per successful step by day (a chart
// with bands), its runs by outcome, its failures by cause over time, its
// failure rates and the standards in force on it.

#include <algorithm>
#include <map>

#include "absl/strings/str_cat.h"
#include "absl/time/civil_time.h"
#include "core/evidence/evidence.h"
#include "services/console/figures.h"
#include "services/console/render/charts.h"
#include "services/console/render/figure_text.h"
#include "services/console/render/html.h"
#include "services/console/render/pages.h"
#include "services/console/render/proto_text.h"

namespace placement::services::console {
namespace {

std::string OutcomeTable(const std::vector<v1::CostReportRow>& rows) {
  std::string out =
      "<table id=\"outcomes-table\" class=\"sortable\"><thead><tr>"
      "<th>Outcome</th>" +
      CostFigureHeadings() + "</tr></thead><tbody>";
  for (const v1::CostReportRow& row : rows) {
    const std::string outcome =
        EnumText(v1::RunOutcome_descriptor(), row.outcome());
    absl::StrAppend(&out, "<tr data-outcome=\"", Esc(outcome), "\">",
                    TextCell("outcome", outcome), CostFigureCells(row),
                    "</tr>");
  }
  return out + "</tbody></table>";
}

// Failed runs a day, one series per outcome other than SUCCEEDED.
LineChart FailuresChart(const std::vector<v1::CostReportRow>& rows) {
  std::map<int, ChartSeries> by_outcome;
  for (const v1::CostReportRow& row : rows) {
    if (row.outcome() == v1::RUN_OUTCOME_SUCCEEDED) continue;
    ChartSeries& series = by_outcome[row.outcome()];
    series.name = EnumText(v1::RunOutcome_descriptor(), row.outcome());
    const double day = DayNumber(row.period_start_time());
    series.points.push_back(
        {day, static_cast<double>(row.runs()), std::nullopt, PeriodText(row)});
  }
  LineChart chart;
  chart.id = "chart-failures";
  chart.title = "Failed runs a day, by cause";
  chart.y_label = "runs";
  chart.format_y = [](double v) { return Fixed(v, 0); };
  chart.connect = false;  // a day without failures has no row: not a line
  for (auto& [outcome, series] : by_outcome) {
    std::sort(
        series.points.begin(), series.points.end(),
        [](const ChartPoint& a, const ChartPoint& b) { return a.x < b.x; });
    chart.series.push_back(std::move(series));
  }
  return chart;
}

std::string FailureRateTable(const PoolFailures& f) {
  std::string out = absl::StrCat(
      "<table id=\"failure-rates\"><thead><tr><th>Failures of the pool</th>"
      "<th>Failed attempts</th><th>Over run-hours</th><th>Per hour</th>"
      "<th>p10 to p90</th></tr></thead><tbody>");
  auto row = [&](absl::string_view key, absl::string_view name,
                 int64_t failures, double hours, std::string per_hour_cells) {
    absl::StrAppend(
        &out, "<tr data-rate=\"", key, "\">", TextCell("cause", name),
        NumCell("failures", absl::StrCat(failures), absl::StrCat(failures)),
        NumCell("hours", Fixed(hours, 1), Exact(hours)), per_hour_cells,
        "</tr>");
  };
  auto rate_cells = [](const core::FailureRate& rate) {
    const core::Band& band = rate.per_hour_band;
    return absl::StrCat(
        NumCell("per_hour", RateText(rate.per_hour), Exact(rate.per_hour)),
        NumCell("band",
                absl::StrCat(Fixed(band.low, 4), " to ", Fixed(band.high, 4)),
                absl::StrCat(Exact(band.low), " ", Exact(band.high))));
  };
  row("single_gpu", "a 1-GPU layout (all causes)", f.single_gpu_layout.failures,
      f.single_gpu_layout.hours, rate_cells(f.single_gpu_layout));
  row("multi_gpu", "a multi-GPU layout (all causes)",
      f.multi_gpu_layout.failures, f.multi_gpu_layout.hours,
      rate_cells(f.multi_gpu_layout));
  // A cause alone is not priced: plans price the pool's nodes (preemptions
  // and hardware errors together) and its fabric.
  for (const CauseFailures& c : f.by_cause) {
    const char* name = core::RunOutcomeName(c.cause);
    row(name, name, c.failed_attempts, c.exposure_hours,
        "<td>&#8212;</td><td>&#8212;</td>");
  }
  return out + "</tbody></table>";
}

}  // namespace

std::string RenderPoolPage(const PoolPage& page) {
  const v1::Pool& pool = page.pool;
  std::string out =
      absl::StrCat("<section id=\"pool-detail\" data-pool=\"", Esc(pool.name()),
                   "\"><h2>Catalog</h2>", RenderFields(pool), "</section>");
  if (page.cost) {
    const PoolPage::Cost& cost = *page.cost;
    absl::StrAppend(
        &out, "<section id=\"pool-cost\"><h2>Cost per successful step</h2>",
        "<form method=\"get\" action=\"/pool\" class=\"range\">"
        "<input type=\"hidden\" name=\"name\" value=\"",
        Esc(pool.name()),
        "\"><label for=\"days\">Days</label> <input id=\"days\" name=\"days\" "
        "type=\"number\" min=\"1\" max=\"366\" value=\"",
        page.range.days(), "\"> <button type=\"submit\">Show</button> <span>",
        absl::FormatCivilTime(page.range.first), " to ",
        absl::FormatCivilTime(page.range.end - 1), "</span></form>");
    absl::StrAppend(&out, "<table id=\"pool-total\"><thead><tr><th>Range</th>",
                    CostFigureHeadings(), "</tr></thead><tbody><tr>",
                    TextCell("range", absl::StrCat(page.range.days(), " days")),
                    CostFigureCells(cost.total.row), "</tr></tbody></table>");
    LineChart chart;
    chart.id = "chart-cost-per-step";
    chart.title = absl::StrCat(
        "Cost per successful step a day (band: p10-p90 of the last ",
        kBandWindowDays, " days with steps)");
    chart.y_label = "per successful step";
    chart.format_y = [](double v) { return PerStepNumber(v); };
    chart.series.push_back(DailyCostSeries(pool.name(), cost.by_day));
    absl::StrAppend(&out, RenderLineChart(chart), "<h2>Runs by outcome</h2>",
                    OutcomeTable(cost.by_outcome),
                    RenderLineChart(FailuresChart(cost.by_day_and_outcome)),
                    "</section>");
  }
  if (page.failures) {
    absl::StrAppend(&out,
                    "<section id=\"pool-failures\"><h2>Failure rates, as "
                    "plans price them</h2>",
                    FailureRateTable(*page.failures), "</section>");
  }
  if (page.standards) {
    absl::StrAppend(&out,
                    "<section id=\"pool-standards\"><h2>Standards in "
                    "force</h2>");
    if (page.standards->empty()) {
      absl::StrAppend(&out, "<p>None.</p>");
    } else {
      absl::StrAppend(&out, "<ul>");
      for (const v1::Standard& s : *page.standards) {
        absl::StrAppend(&out, "<li data-standard=\"", Esc(s.standard_id()),
                        "\">", Esc(s.recipe_class().model()), " ",
                        Esc(EnumText(v1::FineTuneMethod_descriptor(),
                                     s.recipe_class().method())),
                        ": ", Esc(s.reason()), " (proved by plan ",
                        Link(Href("/plan", {{"id", s.plan_id()}}), s.plan_id()),
                        ")</li>");
      }
      absl::StrAppend(&out, "</ul>");
    }
    absl::StrAppend(&out, "</section>");
  }
  return out;
}

}  // namespace placement::services::console
