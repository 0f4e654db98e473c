// The pages and charts render from their models alone: the API's figures
// exactly (data-v), a point per row, no inline script or style, and text
// from the data escaped.
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "services/console/figures.h"
#include "services/console/render/charts.h"
#include "services/console/render/html.h"
#include "services/console/render/layout.h"
#include "services/console/render/pages.h"
#include "services/console/render/proto_text.h"

namespace placement::services::console {
namespace {

int Count(const std::string& text, const std::string& what) {
  int n = 0;
  for (size_t at = text.find(what); at != std::string::npos;
       at = text.find(what, at + 1)) {
    ++n;
  }
  return n;
}

// Whether some <script> tag of `html` has no src attribute.
bool HasInlineScript(const std::string& html) {
  for (size_t at = html.find("<script"); at != std::string::npos;
       at = html.find("<script", at + 1)) {
    const std::string tag = html.substr(at, html.find('>', at) - at);
    if (tag.find(" src=") == std::string::npos) return true;
  }
  return false;
}

// Whether some attribute of `html` is an event handler (" onclick=").
bool HasEventHandler(const std::string& html) {
  for (size_t at = html.find(" on"); at != std::string::npos;
       at = html.find(" on", at + 1)) {
    size_t end = at + 3;
    while (end < html.size() && html[end] >= 'a' && html[end] <= 'z') ++end;
    if (end > at + 3 && end < html.size() && html[end] == '=') return true;
  }
  return false;
}

// What the Content-Security-Policy would refuse, and a browser would report
// as an error: inline script, inline event handlers, inline styles.
void ExpectNothingInline(const std::string& html) {
  EXPECT_FALSE(HasInlineScript(html)) << "inline script";
  EXPECT_FALSE(HasEventHandler(html)) << "event handler attribute";
  EXPECT_FALSE(absl::StrContains(html, " style=")) << "inline style";
  EXPECT_FALSE(absl::StrContains(html, "<style")) << "style element";
  EXPECT_FALSE(absl::StrContains(html, "javascript:"));
}

v1::CostReportRow DayRow(int64_t day, const std::string& per_step,
                         const std::string& pool = "a100") {
  v1::CostReportRow row;
  row.set_pool(pool);
  row.mutable_period_start_time()->set_seconds(day * 86400);
  row.set_runs(2);
  row.set_successful_steps(per_step.empty() ? 0 : 100);
  row.set_internal_cost_per_successful_step(per_step);
  return row;
}

TEST(FiguresTest, BandsAreNearestRankPercentiles) {
  std::optional<ChartBand> band = QuantileBand({5, 1, 2, 3, 4, 6, 7, 8, 9, 10});
  ASSERT_TRUE(band.has_value());
  EXPECT_EQ(band->low, 1);
  EXPECT_EQ(band->high, 9);
  EXPECT_EQ(QuantileBand({3})->low, 3);
  EXPECT_FALSE(QuantileBand({}).has_value());
  EXPECT_EQ(*PerStepValue("0.001111111"), 0.001111111);
  EXPECT_FALSE(PerStepValue("").has_value());
}

TEST(FiguresTest, DailySeriesSkipsDaysWithoutStepsAndBandsTheLastWeek) {
  std::vector<v1::CostReportRow> rows = {
      DayRow(20000, "0.000000010"), DayRow(20001, ""),
      DayRow(20002, "0.000000030"), DayRow(20010, "0.000000020")};
  ChartSeries series = DailyCostSeries("a100", rows);
  ASSERT_EQ(series.points.size(), 3u);
  EXPECT_DOUBLE_EQ(series.points[1].band->low, 1e-8);
  EXPECT_DOUBLE_EQ(series.points[1].band->high, 3e-8);
  // Eight days later the earlier days are out of its window.
  EXPECT_DOUBLE_EQ(series.points[2].band->low, 2e-8);
  EXPECT_DOUBLE_EQ(series.points[2].band->high, 2e-8);
  PoolCost cost = PoolCostOf(rows[0], rows);
  EXPECT_EQ(cost.band_days, 3);
}

TEST(FiguresTest, FailuresAreThePlansRatesAndTheirAttemptsByCause) {
  core::PoolReliabilityRollup single, multi;
  single.runs = 10;
  single.attempts = 13;  // three retries
  single.run_hours = 40;
  single.preempted_attempts = 2;
  multi.runs = 5;
  multi.attempts = 6;
  multi.multi_gpu = true;
  multi.run_hours = 20;
  multi.hardware_error_attempts = 1;
  multi.collective_timeout_attempts = 3;
  PoolFailures f = FailuresOf(single, multi);
  EXPECT_EQ(f.runs, 15);
  EXPECT_EQ(f.attempts, 19);
  // The rates are the very ones a plan prices for the pool.
  EXPECT_EQ(f.single_gpu_layout.per_hour,
            core::EstimateFailureRate(single, multi, false, 0).per_hour);
  EXPECT_EQ(f.multi_gpu_layout.per_hour,
            core::EstimateFailureRate(single, multi, true, 0).per_hour);
  ASSERT_EQ(f.by_cause.size(), 3u);
  EXPECT_EQ(f.by_cause[0].cause, core::RunOutcome::kPreempted);
  EXPECT_EQ(f.by_cause[0].failed_attempts, 2);
  EXPECT_EQ(f.by_cause[1].failed_attempts, 1);
  EXPECT_EQ(f.by_cause[2].failed_attempts, 3);
  // The causes add up to the failed attempts each layout's rate rests on,
  // over the same hours.
  EXPECT_EQ(f.by_cause[0].failed_attempts + f.by_cause[1].failed_attempts,
            f.single_gpu_layout.failures);
  EXPECT_EQ(f.by_cause[0].failed_attempts + f.by_cause[1].failed_attempts +
                f.by_cause[2].failed_attempts,
            f.multi_gpu_layout.failures);
  EXPECT_DOUBLE_EQ(f.by_cause[0].exposure_hours, f.single_gpu_layout.hours);
  EXPECT_DOUBLE_EQ(f.by_cause[2].exposure_hours, multi.ExposureHours());
}

TEST(PagesTest, TheInlineChecksFindWhatTheyLookFor) {
  EXPECT_TRUE(HasInlineScript("<p><script>alert(1)</script>"));
  EXPECT_FALSE(HasInlineScript("<script src=\"/assets/console.js\" defer>"));
  EXPECT_TRUE(HasEventHandler("<img src=x onerror=alert(1)>"));
  EXPECT_FALSE(HasEventHandler("<p>carried on = plan</p><a data-on=1>"));
}

TEST(ChartsTest, ALineChartDrawsAPointPerRowAndItsBand) {
  LineChart chart;
  chart.id = "c";
  chart.title = "t <b>";
  chart.format_y = [](double v) { return Fixed(v, 2); };
  chart.series.push_back({"pool <x>",
                          {{1, 2, ChartBand{1, 3}, "d1"},
                           {2, 4, ChartBand{3, 5}, "d2"},
                           {3, 1, std::nullopt, "d3"}}});
  chart.series.push_back({"other", {{1, 1, std::nullopt, ""}}});
  const std::string svg = RenderLineChart(chart);
  EXPECT_EQ(Count(svg, "<circle class=\"point"), 4);
  EXPECT_TRUE(absl::StrContains(svg, "data-points=\"4\""));
  EXPECT_EQ(Count(svg, "<polygon class=\"band"), 1);
  EXPECT_EQ(Count(svg, "<polyline"), 2);
  EXPECT_TRUE(absl::StrContains(svg, "pool &lt;x&gt;"));
  EXPECT_FALSE(absl::StrContains(svg, "<x>"));
  EXPECT_FALSE(absl::StrContains(svg, "<b>"));
  EXPECT_TRUE(absl::StrContains(svg, "data-x=\"2\" data-y=\"4\""));
  ExpectNothingInline(svg);
}

TEST(ChartsTest, EmptyChartsSayThereIsNoData) {
  LineChart chart;
  chart.id = "c";
  chart.format_y = [](double v) { return Fixed(v, 2); };
  const std::string svg = RenderLineChart(chart);
  EXPECT_TRUE(absl::StrContains(svg, "data-points=\"0\""));
  EXPECT_TRUE(absl::StrContains(svg, "no data"));
}

TEST(ChartsTest, AScatterHasTheDiagonalAndTheP90Band) {
  ScatterChart chart;
  chart.id = "s";
  chart.format = [](double v) { return Fixed(v, 1); };
  chart.points = {{10, 11, std::nullopt, "r1"}, {20, 18, std::nullopt, "r2"}};
  chart.p90_fraction = 0.1;
  const std::string svg = RenderScatterChart(chart);
  EXPECT_EQ(Count(svg, "<circle class=\"point"), 2);
  EXPECT_EQ(Count(svg, "class=\"diagonal\""), 1);
  EXPECT_EQ(Count(svg, "<polygon class=\"band"), 1);
}

TEST(ChartsTest, StackedBarsDrawEverySegment) {
  StackedBars bars;
  bars.id = "b";
  bars.segment_names = {"start-up", "steps", "rework"};
  bars.format = [](double v) { return Fixed(v, 2); };
  bars.bars = {{"#1 a", {1, 10, 0.5}, "11.5"}, {"#2 b", {2, 20, 0}, "22"}};
  const std::string svg = RenderStackedBars(bars);
  EXPECT_EQ(Count(svg, "<rect class=\"segment"), 6);
  EXPECT_TRUE(absl::StrContains(svg, "data-segment=\"rework\" data-v=\"0.5\""));
}

TEST(ProtoTextTest, EveryFieldTheApiGainsIsShown) {
  v1::PlacementCandidate candidate;
  candidate.set_pool("a100");
  candidate.set_fit(v1::FIT_BORDERLINE);
  candidate.mutable_expected_wall_time()->set_seconds(7200);
  candidate.add_warnings("w1 <b>");
  candidate.mutable_failure_rate()->set_per_hour(0.25);
  const std::string html = RenderFields(candidate);
  // Each set field by its proto name, whatever it is.
  const google::protobuf::Descriptor* d = candidate.GetDescriptor();
  for (const char* name :
       {"pool", "fit", "expected_wall_time", "warnings", "failure_rate"}) {
    ASSERT_NE(d->FindFieldByName(name), nullptr);
    EXPECT_TRUE(absl::StrContains(html, absl::StrCat("<dt>", name, "</dt>")))
        << name;
  }
  EXPECT_TRUE(absl::StrContains(html, "BORDERLINE"));
  EXPECT_TRUE(absl::StrContains(html, "7200 s"));
  EXPECT_TRUE(absl::StrContains(html, "w1 &lt;b&gt;"));
  EXPECT_FALSE(absl::StrContains(html, "<dt>rank</dt>"));  // unset: left out
  EXPECT_EQ(
      EnumText(v1::RunOutcome_descriptor(), v1::RUN_OUTCOME_OUT_OF_MEMORY),
      "OUT_OF_MEMORY");
  EXPECT_EQ(EnumText(v1::Fit_descriptor(), v1::FIT_UNSPECIFIED), "");
}

PoolsPage SamplePoolsPage() {
  PoolsPage page;
  page.range = {absl::CivilDay(2026, 1, 1), absl::CivilDay(2026, 1, 31)};
  v1::Pool* pool = page.pools.add_pools();
  pool->set_name("a100-train");
  pool->set_sku("A100-SXM4-80GB");
  pool->set_node_count(2);
  pool->set_gpus_per_node(8);
  pool->set_internal_rate_micros_per_gpu_hour(2100000);
  (*pool->mutable_labels())["team"] = "<ml>";
  v1::CostReportRow row = DayRow(20454, "0.001111111", "a100-train");
  row.set_gpu_hours(12.5);
  page.cost.emplace();
  (*page.cost)["a100-train"] = PoolCostOf(row, {row});
  page.failures.emplace();
  (*page.failures)["a100-train"] = FailuresOf({}, {});
  return page;
}

TEST(PagesTest, PoolsPageShowsTheApisFiguresExactly) {
  PoolsPage page = SamplePoolsPage();
  const std::string html = RenderPoolsPage(page);
  EXPECT_TRUE(
      absl::StrContains(html,
                        "data-field=\"internal_cost_per_successful_step\" "
                        "data-v=\"0.001111111\">0.001111111<"));
  EXPECT_TRUE(
      absl::StrContains(html, "data-field=\"gpu_hours\" data-v=\"12.5\""));
  EXPECT_TRUE(absl::StrContains(html, "team=&lt;ml&gt;"));
  EXPECT_TRUE(absl::StrContains(html, "failures_PREEMPTED"));
  ExpectNothingInline(html);
  // Without the cost section, none of its columns.
  page.cost.reset();
  EXPECT_FALSE(absl::StrContains(RenderPoolsPage(page), "cost_per_successful"));
}

TEST(PagesTest, EveryPageRendersWithoutInlineScriptOrStyle) {
  PageFrame frame;
  frame.title = "T";
  frame.viewer = "someone <x>";
  frame.withheld = {"cost (GetCostReport)"};
  for (const Route& route : Routes()) {
    if (route.kind == RouteKind::kPage && *route.nav_title) {
      frame.nav.push_back(&route);
    }
  }
  PlanPage plan;
  v1::PlacementCandidate* c = plan.plan.mutable_plan()->add_candidates();
  c->set_rank(1);
  c->set_pool("a100");
  c->set_startup_gpu_hours(0.05);
  c->set_step_gpu_hours(0.001);
  c->set_rework_gpu_hours(0.2);
  plan.plan.mutable_request()->set_total_steps(1000);
  plan.plan.mutable_plan()->add_rejections()->set_rule("fit_without_offload");
  CostPage cost;
  cost.range = {absl::CivilDay(2026, 1, 1), absl::CivilDay(2026, 1, 8)};
  cost.rows = {DayRow(20454, "0.1")};
  cost.daily_rows = cost.rows;
  AccuracyPage accuracy;
  v1::SkuAccuracy* sku = accuracy.accuracy.add_skus();
  sku->set_sku("L40S-PCIE-48GB");
  sku->set_runs(2);
  accuracy.points.push_back(
      {"L40S-PCIE-48GB", {{30, 31, std::nullopt, ""}}, {}, 500});
  StandardsPage standards;
  standards.standards.emplace_back();
  standards.standards.back().set_active(true);
  PoolPage pool;
  pool.pool.set_name("a100");
  pool.cost.emplace();
  pool.cost->by_day = {DayRow(20454, "0.1")};
  for (const std::string& content :
       {RenderPoolsPage(SamplePoolsPage()), RenderPoolPage(pool),
        RenderPlansPage(PlansPage{}), RenderPlanPage(plan),
        RenderAccuracyPage(accuracy), RenderCostPage(cost),
        RenderStandardsPage(standards)}) {
    const std::string html = RenderDocument(frame, content);
    ExpectNothingInline(html);
    EXPECT_TRUE(absl::StrContains(
        html, "<script src=\"/assets/console.js\" defer></script>"));
    EXPECT_TRUE(absl::StrContains(html, "someone &lt;x&gt;"));
  }
  ExpectNothingInline(RenderLoginPage("x"));
  ExpectNothingInline(RenderErrorPage(400, "t", "m", {{"days", "bad"}}, true));
  // The plan's cost made up of three segments per candidate.
  EXPECT_EQ(Count(RenderPlanPage(plan), "<rect class=\"segment"), 3);
  EXPECT_TRUE(absl::StrContains(RenderPlanPage(plan),
                                "data-segment=\"steps\" data-v=\"1\""));
}

TEST(PagesTest, CostCsvHasPlacectlsColumnsAndDefusesFormulas) {
  CostPage page;
  page.by = CostGrouping::kTeam;
  v1::CostReportRow row = DayRow(20454, "0.001111111");
  row.set_team("=HYPERLINK(\"x\")");
  row.set_internal_cost_micros(12000000);
  page.daily_rows = {row};
  const std::string csv = RenderCostCsv(page);
  EXPECT_TRUE(absl::StartsWith(
      csv,
      "period_start,sku,pool,recipe_key,model,method,team,outcome,runs,"
      "successful_runs,failed_runs,retries,gpu_hours,wasted_gpu_hours,"
      "successful_steps,gpu_hours_per_1k_successful_steps,internal_cost,"
      "internal_cost_per_successful_step,list_price_cost_per_successful_step,"
      "observed_over_list_price_ratio,occupancy,"
      "amortized_cost_per_successful_step\n"));
  EXPECT_TRUE(absl::StrContains(csv, "2026-01-01,"));
  EXPECT_TRUE(absl::StrContains(csv, ",\"'=HYPERLINK(\"\"x\"\")\","));
  EXPECT_TRUE(absl::StrContains(csv, ",12.00,0.001111111,"));
}

}  // namespace
}  // namespace placement::services::console
