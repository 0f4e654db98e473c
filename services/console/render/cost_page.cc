// Cost per successful step by team, SKU or pool over a range of days:
// GetCostReport's rows as a table and a daily chart, and the same rows as
// CSV.

#include <map>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/civil_time.h"
#include "core/money.h"
#include "services/console/figures.h"
#include "services/console/render/charts.h"
#include "services/console/render/figure_text.h"
#include "services/console/render/html.h"
#include "services/console/render/pages.h"

namespace placement::services::console {
namespace {

// The value of the row's group.
std::string GroupOf(const v1::CostReportRow& row, CostGrouping by) {
  switch (by) {
    case CostGrouping::kSku:
      return row.sku();
    case CostGrouping::kPool:
      return row.pool();
    case CostGrouping::kTeam:
      break;
  }
  return row.team();
}

std::string GroupHeading(CostGrouping by) {
  switch (by) {
    case CostGrouping::kSku:
      return "SKU";
    case CostGrouping::kPool:
      return "Pool";
    case CostGrouping::kTeam:
      break;
  }
  return "Team";
}

std::string Form(const CostPage& page) {
  std::string out = absl::StrCat(
      "<form method=\"get\" action=\"/cost\" class=\"range\"><label "
      "for=\"by\">By</label> <select id=\"by\" name=\"by\">");
  for (CostGrouping g :
       {CostGrouping::kTeam, CostGrouping::kSku, CostGrouping::kPool}) {
    absl::StrAppend(&out, "<option value=\"", CostGroupingName(g), "\"",
                    g == page.by ? " selected" : "", ">", GroupHeading(g),
                    "</option>");
  }
  absl::StrAppend(
      &out,
      "</select> <label for=\"from\">from</label> <input id=\"from\" "
      "name=\"from\" type=\"date\" value=\"",
      absl::FormatCivilTime(page.range.first),
      "\"> <label for=\"to\">to</label> <input id=\"to\" name=\"to\" "
      "type=\"date\" value=\"",
      absl::FormatCivilTime(page.range.end - 1),
      "\"> <button type=\"submit\">Show</button> ",
      Link(Href("/cost.csv",
                {{"by", CostGroupingName(page.by)},
                 {"from", absl::FormatCivilTime(page.range.first)},
                 {"to", absl::FormatCivilTime(page.range.end - 1)}}),
           "Download CSV (by day)"),
      "</form>");
  return out;
}

// A text cell a spreadsheet would run as a formula (=, +, -, @ first) is
// kept as text with a leading apostrophe: a team or model name comes from
// whoever uploaded the run, and the file is opened by someone else.
std::string CsvText(const std::string& s) {
  if (!s.empty() && (s[0] == '=' || s[0] == '+' || s[0] == '-' || s[0] == '@' ||
                     s[0] == '\t' || s[0] == '\r')) {
    return "'" + s;
  }
  return s;
}

std::string CsvField(const std::string& s) {
  if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

}  // namespace

std::string RenderCostPage(const CostPage& page) {
  std::string out = Form(page);
  const std::string heading = GroupHeading(page.by);
  absl::StrAppend(&out,
                  "<table id=\"cost-table\" class=\"sortable\" "
                  "data-by=\"",
                  CostGroupingName(page.by), "\"><thead><tr><th>", heading,
                  "</th>", CostFigureHeadings(), "</tr></thead><tbody>");
  for (const v1::CostReportRow& row : page.rows) {
    const std::string group = GroupOf(row, page.by);
    absl::StrAppend(&out, "<tr data-group=\"", Esc(group), "\">",
                    TextCell("group", group.empty() ? "(none)" : group),
                    CostFigureCells(row), "</tr>");
  }
  absl::StrAppend(&out, "</tbody>");
  if (page.has_total) {
    absl::StrAppend(&out, "<tfoot><tr data-group=\"\">",
                    TextCell("group", "All"), CostFigureCells(page.total),
                    "</tr></tfoot>");
  }
  absl::StrAppend(&out, "</table>");
  if (page.rows.empty()) {
    absl::StrAppend(&out, "<p>No run ended in the range.</p>");
  }
  if (page.truncated) {
    absl::StrAppend(&out,
                    "<p class=\"warning\">More rows than the console reads "
                    "at once: narrow the range, or use placectl cost.</p>");
  }
  // One series per group, in the order of the table.
  std::map<std::string, std::vector<v1::CostReportRow>> daily;
  for (const v1::CostReportRow& row : page.daily_rows) {
    daily[GroupOf(row, page.by)].push_back(row);
  }
  LineChart chart;
  chart.id = "chart-cost";
  chart.title = absl::StrCat(
      "Cost per successful step a day, by ", absl::AsciiStrToLower(heading),
      " (band: p10-p90 of the last ", kBandWindowDays, " days with steps)");
  chart.y_label = "per successful step";
  chart.format_y = [](double v) { return PerStepNumber(v); };
  for (const v1::CostReportRow& row : page.rows) {
    const std::string group = GroupOf(row, page.by);
    auto it = daily.find(group);
    if (it == daily.end()) continue;
    chart.series.push_back(
        DailyCostSeries(group.empty() ? "(none)" : group, it->second));
  }
  absl::StrAppend(&out, RenderLineChart(chart),
                  "<p class=\"note\">The same figures as GetCostReport (and "
                  "placectl cost) for the same range and grouping: "
                  "docs/FINANCE.md defines each.</p>");
  return out;
}

std::string RenderCostCsv(const CostPage& page) {
  // placectl cost --csv's columns, for the rows grouped by the page's
  // dimension and day (docs/FINANCE.md).
  std::string out =
      "period_start,sku,pool,recipe_key,model,method,team,outcome,runs,"
      "successful_runs,failed_runs,retries,gpu_hours,wasted_gpu_hours,"
      "successful_steps,gpu_hours_per_1k_successful_steps,internal_cost,"
      "internal_cost_per_successful_step,list_price_cost_per_successful_step,"
      "observed_over_list_price_ratio,occupancy,"
      "amortized_cost_per_successful_step\n";
  for (const v1::CostReportRow& r : page.daily_rows) {
    std::vector<std::string> cells = {
        PeriodText(r),
        CsvText(r.sku()),
        CsvText(r.pool()),
        CsvText(r.recipe_key()),
        CsvText(r.model()),
        "",  // method: not grouped by
        CsvText(r.team()),
        "",  // outcome: not grouped by
        absl::StrCat(r.runs()),
        absl::StrCat(r.successful_runs()),
        absl::StrCat(r.failed_runs()),
        absl::StrCat(r.retries()),
        Fixed(r.gpu_hours(), 2),
        Fixed(r.wasted_gpu_hours(), 2),
        absl::StrCat(r.successful_steps()),
        r.successful_steps() == 0
            ? ""
            : Fixed(r.gpu_hours_per_1k_successful_steps(), 4),
        core::FormatMicros(r.internal_cost_micros()),
        r.internal_cost_per_successful_step(),
        r.has_list_price() ? r.list_price_cost_per_successful_step() : "",
        r.has_list_price() ? Fixed(r.observed_over_list_price_ratio(), 3) : "",
        r.has_pool_occupancy()
            ? absl::StrCat(Fixed(100 * r.pool_occupancy().occupancy(), 1), "%")
            : "",
        r.pool_occupancy().amortized_cost_per_successful_step(),
    };
    for (std::string& cell : cells) cell = CsvField(cell);
    absl::StrAppend(&out, absl::StrJoin(cells, ","), "\n");
  }
  return out;
}

}  // namespace placement::services::console
