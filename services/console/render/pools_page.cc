// The pools page: every pool with its size and rates, and (by role) its
// cost per successful step over the range with the band its days span, its
// failure rates by cause, and the standards in force on it.

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
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

std::string RangeForm(const DayRange& range, absl::string_view action) {
  return absl::StrCat(
      "<form method=\"get\" action=\"", action,
      "\" class=\"range\"><label for=\"days\">Days</label> <input id=\"days\" "
      "name=\"days\" type=\"number\" min=\"1\" max=\"366\" value=\"",
      range.days(), "\"> <button type=\"submit\">Show</button> <span>",
      absl::FormatCivilTime(range.first), " to ",
      absl::FormatCivilTime(range.end - 1),
      " (UTC days a run ended)</span></form>");
}

// Inside a node, and between nodes when declared ("NVLINK, INFINIBAND").
std::string FabricText(const v1::Pool& pool) {
  std::string text = EnumText(v1::Fabric_descriptor(), pool.fabric());
  const std::string between =
      EnumText(v1::InterNodeFabric_descriptor(), pool.inter_node_fabric());
  if (!between.empty()) absl::StrAppend(&text, ", ", between);
  return text;
}

std::string CatalogCells(const v1::Pool& pool) {
  std::vector<std::string> labels;
  for (const auto& [key, value] : pool.labels()) {
    labels.push_back(absl::StrCat(key, "=", value));
  }
  std::sort(labels.begin(), labels.end());
  const int gpus = pool.node_count() * pool.gpus_per_node();
  return absl::StrCat(
      "<td data-field=\"name\" data-v=\"", Esc(pool.name()), "\">",
      Link(Href("/pool", {{"name", pool.name()}}), pool.name()), "</td>",
      TextCell("sku", pool.sku()),
      NumCell("gpus",
              absl::StrCat(gpus, " (", pool.node_count(), " x ",
                           pool.gpus_per_node(), ")"),
              absl::StrCat(gpus)),
      TextCell("purpose",
               EnumText(v1::PoolPurpose_descriptor(), pool.purpose())),
      TextCell("fabric", FabricText(pool)),
      NumCell("internal_rate_micros_per_gpu_hour",
              MoneyText(pool.internal_rate_micros_per_gpu_hour()),
              absl::StrCat(pool.internal_rate_micros_per_gpu_hour())),
      NumCell("list_price_micros_per_gpu_hour",
              pool.has_list_price_micros_per_gpu_hour()
                  ? MoneyText(pool.list_price_micros_per_gpu_hour())
                  : "-",
              pool.has_list_price_micros_per_gpu_hour()
                  ? absl::StrCat(pool.list_price_micros_per_gpu_hour())
                  : ""),
      TextCell("labels", absl::StrJoin(labels, ", ")));
}

std::string CostCells(const PoolCost* cost) {
  if (cost == nullptr) {
    return "<td class=\"num\" data-field=\"runs\" data-v=\"0\">0</td>"
           "<td class=\"num\" data-field=\"gpu_hours\" data-v=\"0\">0.00</td>"
           "<td class=\"num\" data-field=\"successful_steps\" "
           "data-v=\"0\">0</td><td class=\"num\" "
           "data-field=\"internal_cost_per_successful_step\" "
           "data-v=\"\">-</td><td data-field=\"cost_band\">-</td>"
           "<td class=\"num\" data-field=\"failed_runs\" data-v=\"0\">0</td>";
  }
  const v1::CostReportRow& row = cost->row;
  std::string band = "-";
  std::string band_exact;
  if (cost->band.has_value()) {
    band = absl::StrCat(PerStepNumber(cost->band->low), " to ",
                        PerStepNumber(cost->band->high), " (", cost->band_days,
                        cost->band_days == 1 ? " day" : " days", ")");
    band_exact =
        absl::StrCat(Exact(cost->band->low), " ", Exact(cost->band->high));
  }
  return absl::StrCat(
      NumCell("runs", absl::StrCat(row.runs()), absl::StrCat(row.runs())),
      NumCell("gpu_hours", Fixed(row.gpu_hours(), 2), Exact(row.gpu_hours())),
      NumCell("successful_steps", absl::StrCat(row.successful_steps()),
              absl::StrCat(row.successful_steps())),
      NumCell("internal_cost_per_successful_step",
              PerStepText(row.internal_cost_per_successful_step()),
              row.internal_cost_per_successful_step()),
      NumCell("cost_band", band, band_exact),
      NumCell("failed_runs", absl::StrCat(row.failed_runs()),
              absl::StrCat(row.failed_runs())));
}

std::string RateCell(absl::string_view field, const core::FailureRate& rate) {
  return NumCell(field,
                 absl::StrCat(RateText(rate.per_hour), " (",
                              Fixed(rate.per_hour_band.low, 3), " to ",
                              Fixed(rate.per_hour_band.high, 3), ")"),
                 Exact(rate.per_hour));
}

std::string FailureCells(const PoolFailures& f) {
  std::string out = absl::StrCat(
      NumCell("reliability_runs", absl::StrCat(f.runs), absl::StrCat(f.runs)),
      NumCell("run_hours", Fixed(f.run_hours, 1), Exact(f.run_hours)),
      RateCell("failure_rate_single_gpu", f.single_gpu_layout),
      RateCell("failure_rate_multi_gpu", f.multi_gpu_layout));
  for (const CauseFailures& cause : f.by_cause) {
    absl::StrAppend(
        &out,
        NumCell(absl::StrCat("failures_", core::RunOutcomeName(cause.cause)),
                absl::StrCat(cause.failed_attempts),
                absl::StrCat(cause.failed_attempts)));
  }
  return out;
}

std::string CatalogTable(const PoolsPage& page) {
  std::string out =
      "<div class=\"scroll\"><table id=\"pools-table\" class=\"pools "
      "sortable\"><thead><tr><th>Pool</th><th>SKU</th><th>GPUs</th>"
      "<th>Purpose</th><th>Fabric</th><th>Rate / GPU-h</th>"
      "<th>List / GPU-h</th><th>Labels</th>";
  if (page.standards) absl::StrAppend(&out, "<th>Standards in force</th>");
  absl::StrAppend(&out, "</tr></thead><tbody>");
  for (const v1::Pool& pool : page.pools.pools()) {
    absl::StrAppend(&out, "<tr data-pool=\"", Esc(pool.name()), "\">",
                    CatalogCells(pool));
    if (page.standards) {
      auto it = page.standards->find(pool.name());
      std::string links;
      if (it != page.standards->end()) {
        for (const v1::Standard& s : it->second) {
          absl::StrAppend(&links, links.empty() ? "" : " ",
                          Link(Href("/plan", {{"id", s.plan_id()}}),
                               s.recipe_class().model()));
        }
      }
      absl::StrAppend(&out, "<td data-field=\"standards\" data-v=\"",
                      it == page.standards->end() ? 0 : it->second.size(),
                      "\">", links.empty() ? "-" : links, "</td>");
    }
    absl::StrAppend(&out, "</tr>");
  }
  return out + "</tbody></table></div>";
}

std::string CostSection(const PoolsPage& page) {
  std::string out =
      "<h2>Cost per successful step</h2><div class=\"scroll\"><table "
      "id=\"pools-cost\" class=\"pools sortable\"><thead><tr><th>Pool</th>"
      "<th>Runs</th><th>GPU-hours</th><th>Successful steps</th>"
      "<th>Cost / successful step</th><th>Band (p10-p90 of days)</th>"
      "<th>Failed runs</th></tr></thead><tbody>";
  RangeChart chart;
  chart.id = "chart-pools-cost";
  chart.title = "Cost per successful step, with the band of its days";
  chart.format = [](double v) { return PerStepNumber(v); };
  for (const v1::Pool& pool : page.pools.pools()) {
    auto it = page.cost->find(pool.name());
    const PoolCost* cost = it == page.cost->end() ? nullptr : &it->second;
    absl::StrAppend(&out, "<tr data-pool=\"", Esc(pool.name()), "\">",
                    TextCell("name", pool.name()), CostCells(cost), "</tr>");
    if (cost == nullptr) continue;
    std::optional<double> value =
        PerStepValue(cost->row.internal_cost_per_successful_step());
    if (value.has_value() && cost->band.has_value()) {
      chart.rows.push_back({pool.name(), *value, *cost->band});
    }
  }
  absl::StrAppend(
      &out, "</tbody></table></div>", RenderRangeChart(chart),
      "<p class=\"note\">GetCostReport's figures, grouped by pool over the "
      "range: every GPU-hour, failures and retries included, at the rate "
      "when each run was stored, over the steps that succeeded "
      "(docs/FINANCE.md). The band is the 10th to 90th percentile of the "
      "pool's daily figures.</p>");
  return out;
}

std::string FailureSection(const PoolsPage& page) {
  std::string out =
      "<h2>Failures of the pools</h2><div class=\"scroll\"><table "
      "id=\"pools-failures\" class=\"pools sortable\"><thead><tr>"
      "<th>Pool</th><th>Runs recorded</th><th>Run-hours</th>"
      "<th>Per hour, 1-GPU layout (p10 to p90)</th>"
      "<th>Per hour, multi-GPU layout</th><th>Preempted attempts</th>"
      "<th>Hardware error attempts</th><th>Collective timeout attempts</th>"
      "</tr></thead>"
      "<tbody>";
  for (const v1::Pool& pool : page.pools.pools()) {
    auto it = page.failures->find(pool.name());
    absl::StrAppend(
        &out, "<tr data-pool=\"", Esc(pool.name()), "\">",
        TextCell("name", pool.name()),
        FailureCells(it == page.failures->end() ? PoolFailures{} : it->second),
        "</tr>");
  }
  absl::StrAppend(
      &out, "</tbody></table></div>",
      "<p class=\"note\">The rates plans price (FailureRate): failed "
      "attempts of the pool (a run's retries are failed attempts) per hour "
      "a run holds it, with their p10-p90, from every run recorded on it. "
      "Preemptions and hardware errors count for every layout, collective "
      "timeouts for multi-GPU ones; each cause shows its failed attempts.</p>");
  return out;
}

}  // namespace

std::string RenderPoolsPage(const PoolsPage& page) {
  std::string out = RangeForm(page.range, "/pools");
  absl::StrAppend(&out, CatalogTable(page));
  if (!page.pools.next_page_token().empty()) {
    absl::StrAppend(&out,
                    "<p class=\"note\">More pools exist than one page shows "
                    "(1000); placectl pools list pages through them.</p>");
  }
  if (page.cost) absl::StrAppend(&out, CostSection(page));
  if (page.failures) absl::StrAppend(&out, FailureSection(page));
  return out;
}

}  // namespace placement::services::console
