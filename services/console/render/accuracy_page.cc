// Predicted against observed, per SKU: GetPlanAccuracy's figures, and the
// newest outcomes behind them drawn against the diagonal with the band the
// p90 error spans.

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/civil_time.h"
#include "services/console/render/charts.h"
#include "services/console/render/html.h"
#include "services/console/render/pages.h"

namespace placement::services::console {
namespace {

std::string Pct(double pct) { return absl::StrFormat("%.1f%%", pct); }

std::string ErrorCells(absl::string_view prefix, double median, double p90,
                       double mean) {
  return absl::StrCat(
      NumCell(absl::StrCat(prefix, "_median_abs_error_pct"), Pct(median),
              Exact(median)),
      NumCell(absl::StrCat(prefix, "_p90_abs_error_pct"), Pct(p90), Exact(p90)),
      NumCell(absl::StrCat(prefix, "_mean_error_pct"), Pct(mean), Exact(mean)));
}

std::string Slug(absl::string_view sku) {
  std::string out;
  for (char c : sku) out.push_back(absl::ascii_isalnum(c) ? c : '-');
  return out;
}

std::string Form(const AccuracyPage& page) {
  return absl::StrCat(
      "<form method=\"get\" action=\"/accuracy\" class=\"range\"><label "
      "for=\"from\">From</label> <input id=\"from\" name=\"from\" "
      "type=\"date\" value=\"",
      page.from ? absl::FormatCivilTime(*page.from) : "",
      "\"> <label for=\"to\">to</label> <input id=\"to\" name=\"to\" "
      "type=\"date\" value=\"",
      page.to ? absl::FormatCivilTime(*page.to) : "",
      "\"> <button type=\"submit\">Show</button> <span>(UTC days an outcome "
      "was recorded; empty: all)</span></form>");
}

std::string Table(const AccuracyPage& page) {
  std::string out =
      "<div class=\"scroll\"><table id=\"accuracy-table\" "
      "class=\"sortable\"><thead><tr>"
      "<th>SKU</th><th>Runs</th><th>Peak memory: median |error|</th>"
      "<th>p90 |error|</th><th>mean error</th><th>Runs with steps</th>"
      "<th>GPU-h/step: median |error|</th><th>p90 |error|</th>"
      "<th>mean error</th><th>Prior alone: runs</th>"
      "<th>memory median |error|</th><th>GPU-h/step median |error|</th>"
      "</tr></thead><tbody>";
  for (const v1::SkuAccuracy& sku : page.accuracy.skus()) {
    absl::StrAppend(
        &out, "<tr data-sku=\"", Esc(sku.sku()), "\">",
        TextCell("sku", sku.sku()),
        NumCell("runs", absl::StrCat(sku.runs()), absl::StrCat(sku.runs())),
        ErrorCells("peak_memory", sku.peak_memory_median_abs_error_pct(),
                   sku.peak_memory_p90_abs_error_pct(),
                   sku.peak_memory_mean_error_pct()),
        NumCell("runs_with_successful_steps",
                absl::StrCat(sku.runs_with_successful_steps()),
                absl::StrCat(sku.runs_with_successful_steps())),
        ErrorCells("gpu_hours_per_step",
                   sku.gpu_hours_per_step_median_abs_error_pct(),
                   sku.gpu_hours_per_step_p90_abs_error_pct(),
                   sku.gpu_hours_per_step_mean_error_pct()),
        NumCell("prior_runs", absl::StrCat(sku.prior().runs()),
                absl::StrCat(sku.prior().runs())),
        NumCell("prior_peak_memory_median_abs_error_pct",
                Pct(sku.prior().peak_memory_median_abs_error_pct()),
                Exact(sku.prior().peak_memory_median_abs_error_pct())),
        NumCell("prior_gpu_hours_per_step_median_abs_error_pct",
                Pct(sku.prior().gpu_hours_per_step_median_abs_error_pct()),
                Exact(sku.prior().gpu_hours_per_step_median_abs_error_pct())),
        "</tr>");
  }
  return out + "</tbody></table></div>";
}

// The two scatters of one SKU, with the band of its p90 errors.
std::string Scatters(const v1::SkuAccuracy& sku, const AccuracyPoints& points) {
  ScatterChart memory;
  memory.id = absl::StrCat("chart-memory-", Slug(points.sku));
  memory.title = absl::StrCat(points.sku, ": peak memory per GPU, GB");
  memory.x_label = "predicted";
  memory.y_label = "observed";
  memory.format = [](double v) { return Fixed(v, 1); };
  memory.points = points.peak_memory_gb;
  memory.p90_fraction = sku.peak_memory_p90_abs_error_pct() / 100;
  ScatterChart step;
  step.id = absl::StrCat("chart-step-", Slug(points.sku));
  step.title = absl::StrCat(points.sku, ": GPU-hours per successful step");
  step.x_label = "predicted";
  step.y_label = "observed";
  step.format = [](double v) { return absl::StrFormat("%.3g", v); };
  step.points = points.gpu_hours_per_step;
  step.p90_fraction = sku.gpu_hours_per_step_p90_abs_error_pct() / 100;
  std::string out = absl::StrCat(
      "<section class=\"sku-accuracy\" data-sku=\"", Esc(points.sku), "\"><h2>",
      Esc(points.sku), "</h2><div class=\"pair\">", RenderScatterChart(memory),
      RenderScatterChart(step), "</div>");
  if (sku.runs() > points.limit) {
    absl::StrAppend(&out, "<p class=\"note\">The newest ", points.limit, " of ",
                    sku.runs(), " outcomes are drawn.</p>");
  }
  return out + "</section>";
}

}  // namespace

std::string RenderAccuracyPage(const AccuracyPage& page) {
  std::string out = absl::StrCat(Form(page), Table(page));
  if (page.accuracy.skus().empty()) {
    absl::StrAppend(&out,
                    "<p>No run has carried out a plan in this range: "
                    "accuracy is measured on runs that name a plan "
                    "(BenchmarkRun.plan_id).</p>");
  }
  for (size_t i = 0; i < page.points.size() &&
                     i < static_cast<size_t>(page.accuracy.skus_size());
       ++i) {
    absl::StrAppend(&out, Scatters(page.accuracy.skus(static_cast<int>(i)),
                                   page.points[i]));
  }
  return out;
}

}  // namespace placement::services::console
