// One plan as GetPlan answers it: the ranked candidates and what each one's
// GPU-hours are made of, the rejections with their rules, the standard that
// applied, the warnings, and the bake-off's progress and verdict
// (GetBakeOffStatus).

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "services/console/render/charts.h"
#include "services/console/render/figure_text.h"
#include "services/console/render/html.h"
#include "services/console/render/pages.h"
#include "services/console/render/proto_text.h"

namespace placement::services::console {
namespace {

double Seconds(const google::protobuf::Duration& d) {
  return static_cast<double>(d.seconds()) + d.nanos() / 1e9;
}

std::string Summary(const v1::GetPlanResponse& got) {
  const v1::PlacePlanRequest& request = got.request();
  const v1::PlacePlanResponse& plan = got.plan();
  std::string out = absl::StrCat(
      "<dl id=\"plan-summary\" class=\"summary\" data-plan=\"",
      Esc(plan.plan_id()), "\"><dt>Plan</dt><dd data-field=\"plan_id\">",
      Esc(plan.plan_id()), "</dd><dt>Made</dt><dd>",
      Esc(UtcTime(absl::FromUnixSeconds(plan.create_time().seconds()))),
      "</dd><dt>Evidence read</dt><dd>",
      Esc(UtcTime(absl::FromUnixSeconds(plan.evidence_time().seconds()))),
      "</dd><dt>Team</dt><dd data-field=\"team\">", Esc(request.team()),
      "</dd><dt>Recipe key</dt><dd data-field=\"recipe_key\">",
      Esc(plan.recipe_key()), "</dd><dt>Model</dt><dd>",
      Esc(plan.recipe().model()), " ",
      Esc(EnumText(v1::FineTuneMethod_descriptor(), plan.recipe().method())),
      "</dd><dt>Steps</dt><dd data-field=\"total_steps\">",
      request.total_steps(), "</dd><dt>Objective</dt><dd>",
      request.constraints().objective() == v1::OBJECTIVE_UNSPECIFIED
          ? std::string("LOWEST_COST (the default)")
          : Esc(EnumText(v1::Objective_descriptor(),
                         request.constraints().objective())),
      "</dd>");
  if (!plan.eval_requirement().empty()) {
    absl::StrAppend(
        &out, "<dt>Eval requirement</dt><dd>", Esc(plan.eval_requirement()),
        plan.eval_status().met() ? " (met)" : " (not met)", "</dd>");
  }
  absl::StrAppend(&out, "</dl>");
  if (plan.warnings_size() > 0) {
    absl::StrAppend(&out, "<ul id=\"plan-warnings\" class=\"warnings\">");
    for (const std::string& w : plan.warnings()) {
      absl::StrAppend(&out, "<li>", Esc(w), "</li>");
    }
    absl::StrAppend(&out, "</ul>");
  }
  if (plan.has_standard()) {
    const v1::StandardApplied& s = plan.standard();
    absl::StrAppend(&out, "<section id=\"plan-standard\" data-applied=\"",
                    s.applied() ? "true" : "false", "\" data-contradicted=\"",
                    s.contradicted() ? "true" : "false",
                    "\"><h2>Standard</h2><p>", Esc(s.reason()), "</p>");
    for (const std::string& c : s.contradictions()) {
      absl::StrAppend(&out, "<p class=\"warning\">Contradicted: ", Esc(c),
                      "</p>");
    }
    absl::StrAppend(&out, "</section>");
  }
  return out;
}

std::string CandidateRow(const v1::PlacementCandidate& c) {
  return absl::StrCat(
      "<tr data-pool=\"", Esc(c.pool()), "\">",
      NumCell("rank", absl::StrCat(c.rank()), absl::StrCat(c.rank())),
      "<td data-field=\"pool\" data-v=\"", Esc(c.pool()), "\">",
      Link(Href("/pool", {{"name", c.pool()}}), c.pool()), "</td>",
      TextCell("sku", c.sku()),
      NumCell("gpu_count", absl::StrCat(c.gpu_count()),
              absl::StrCat(c.gpu_count())),
      TextCell("fit", EnumText(v1::Fit_descriptor(), c.fit())),
      NumCell("peak_memory_gb",
              absl::StrCat(Fixed(c.peak_memory_gb(), 1), " (",
                           BandText(c.peak_memory_gb_band(), 1), ")"),
              Exact(c.peak_memory_gb())),
      NumCell("step_time_s",
              absl::StrCat(Fixed(c.step_time_s(), 3), " (",
                           BandText(c.step_time_s_band(), 3), ")"),
              Exact(c.step_time_s())),
      NumCell("gpu_hours_per_1k_successful_steps",
              Fixed(c.gpu_hours_per_1k_successful_steps(), 4),
              Exact(c.gpu_hours_per_1k_successful_steps())),
      NumCell("expected_gpu_hours", Fixed(c.expected_gpu_hours(), 2),
              Exact(c.expected_gpu_hours())),
      NumCell("expected_cost_micros", MoneyText(c.expected_cost_micros()),
              absl::StrCat(c.expected_cost_micros())),
      NumCell("list_price_cost_micros",
              c.has_list_price_cost_micros()
                  ? MoneyText(c.list_price_cost_micros())
                  : "-",
              c.has_list_price_cost_micros()
                  ? absl::StrCat(c.list_price_cost_micros())
                  : ""),
      NumCell(
          "expected_wall_time",
          absl::StrCat(Fixed(Seconds(c.expected_wall_time()) / 3600, 2), " h"),
          Exact(Seconds(c.expected_wall_time()))),
      TextCell("basis", EnumText(v1::EvidenceBasis_descriptor(), c.basis())),
      TextCell("confidence",
               EnumText(v1::Confidence_descriptor(), c.confidence())),
      NumCell("failure_rate",
              absl::StrCat(RateText(c.failure_rate().per_hour()), " (",
                           BandText(c.failure_rate().per_hour_band(), 4), ")"),
              Exact(c.failure_rate().per_hour())),
      "</tr>");
}

std::string Candidates(const v1::GetPlanResponse& got) {
  const v1::PlacePlanResponse& plan = got.plan();
  std::string out =
      "<section id=\"plan-candidates\"><h2>Candidates, ranked</h2>";
  if (plan.candidates().empty()) {
    return out + "<p>No candidate: every pool is rejected below.</p></section>";
  }
  absl::StrAppend(
      &out,
      "<div class=\"scroll\"><table "
      "id=\"candidates-table\"><thead><tr><th>Rank</th><th>Pool</th>"
      "<th>SKU</th><th>GPUs</th><th>Fit</th><th>Peak GB (band)</th>"
      "<th>Step s (band)</th><th>GPU-h / 1k steps</th><th>GPU-hours</th>"
      "<th>Cost</th><th>List cost</th><th>Wall time</th><th>Basis</th>"
      "<th>Confidence</th><th>Failures (band)</th></tr></thead><tbody>");
  for (const v1::PlacementCandidate& c : plan.candidates()) {
    absl::StrAppend(&out, CandidateRow(c));
  }
  absl::StrAppend(&out, "</tbody></table></div>");
  // What each candidate's GPU-hours are made of (the API's own terms:
  // startup + total_steps x step + rework).
  StackedBars bars;
  bars.id = "chart-cost-makeup";
  bars.title = "Expected GPU-hours made up of start-up, steps and rework";
  bars.segment_names = {"start-up", "steps", "rework"};
  bars.format = [](double v) { return absl::StrCat(Fixed(v, 2), " GPU-h"); };
  for (const v1::PlacementCandidate& c : plan.candidates()) {
    bars.bars.push_back(
        {absl::StrCat("#", c.rank(), " ", c.pool()),
         {c.startup_gpu_hours(),
          static_cast<double>(got.request().total_steps()) * c.step_gpu_hours(),
          c.rework_gpu_hours()},
         absl::StrCat(Fixed(c.expected_gpu_hours(), 2), " GPU-h, ",
                      MoneyText(c.expected_cost_micros()))});
  }
  absl::StrAppend(&out, RenderStackedBars(bars));
  for (const v1::PlacementCandidate& c : plan.candidates()) {
    absl::StrAppend(&out, "<details class=\"candidate\" data-pool=\"",
                    Esc(c.pool()), "\"><summary>#", c.rank(), " ",
                    Esc(c.pool()),
                    ": every field, reasons and warnings"
                    "</summary>",
                    RenderFields(c), "</details>");
  }
  return out + "</section>";
}

std::string Rejections(const v1::PlacePlanResponse& plan) {
  std::string out = "<section id=\"plan-rejections\"><h2>Rejected pools</h2>";
  if (plan.rejections().empty()) return out + "<p>None.</p></section>";
  absl::StrAppend(&out,
                  "<table id=\"rejections-table\"><thead><tr><th>Pool</th>"
                  "<th>SKU</th><th>Rule</th><th>Why</th></tr></thead><tbody>");
  for (const v1::PoolRejection& r : plan.rejections()) {
    absl::StrAppend(&out, "<tr data-pool=\"", Esc(r.pool()), "\">",
                    TextCell("pool", r.pool()), TextCell("sku", r.sku()),
                    TextCell("rule", r.rule()), TextCell("reason", r.reason()),
                    "</tr>");
  }
  return out + "</tbody></table></section>";
}

std::string ProposedRuns(const v1::BakeOff& bake_off) {
  std::string out = absl::StrCat(
      "<p>", Esc(bake_off.reason()),
      "</p><p>Settings held equal: ", Esc(bake_off.settings()),
      "</p><table id=\"bakeoff-runs\"><thead><tr><th>Pool</th><th>SKU</th>"
      "<th>GPUs</th><th>Recipe key</th><th>Steps</th><th>Cost</th>"
      "<th>Expected saving</th><th>Chance to win</th><th>Why</th></tr>"
      "</thead><tbody>");
  for (const v1::BakeOffRun& run : bake_off.runs()) {
    absl::StrAppend(
        &out, "<tr data-pool=\"", Esc(run.pool()), "\">",
        TextCell("pool", run.pool()), TextCell("sku", run.sku()),
        NumCell("gpu_count", absl::StrCat(run.gpu_count()),
                absl::StrCat(run.gpu_count())),
        TextCell("recipe_key", run.recipe_key()),
        NumCell("steps", absl::StrCat(run.steps()), absl::StrCat(run.steps())),
        NumCell("cost_micros", MoneyText(run.cost_micros()),
                absl::StrCat(run.cost_micros())),
        NumCell("expected_saving_micros",
                MoneyText(run.expected_saving_micros()),
                absl::StrCat(run.expected_saving_micros())),
        NumCell("win_probability", Percent(run.win_probability()),
                Exact(run.win_probability())),
        TextCell("reason", run.reason()), "</tr>");
  }
  return out + "</tbody></table>";
}

std::string Verdict(const v1::BakeOffVerdict& verdict) {
  std::string out = absl::StrCat(
      "<div id=\"bakeoff-verdict\" data-winner=\"", Esc(verdict.winner_pool()),
      "\" data-decisive=\"", verdict.decisive() ? "true" : "false",
      "\"><h3>Verdict</h3><p>", Esc(verdict.summary()),
      "</p><table id=\"verdict-table\"><thead><tr><th>Pool</th><th>SKU</th>"
      "<th>Runs</th><th>Succeeded</th><th>Cost / successful step</th>"
      "<th>Band</th><th>Peak GB / card</th><th>Eligible</th>"
      "<th>Findings</th></tr></thead><tbody>");
  RangeChart chart;
  chart.id = "chart-bakeoff-cost";
  chart.title = "Cost per successful step in the bake-off, with its band";
  chart.format = [](double micros) { return PerStepNumber(micros / 1e6); };
  for (const v1::BakeOffPoolVerdict& p : verdict.pools()) {
    absl::StrAppend(
        &out, "<tr data-pool=\"", Esc(p.pool()), "\">",
        TextCell("pool", p.pool()), TextCell("sku", p.sku()),
        NumCell("runs", absl::StrCat(p.runs()), absl::StrCat(p.runs())),
        NumCell("runs_succeeded", absl::StrCat(p.runs_succeeded()),
                absl::StrCat(p.runs_succeeded())),
        NumCell("cost_micros_per_successful_step",
                PerStepNumber(p.cost_micros_per_successful_step() / 1e6),
                Exact(p.cost_micros_per_successful_step())),
        NumCell("cost_band",
                absl::StrCat(
                    PerStepNumber(
                        p.cost_micros_per_successful_step_band().low() / 1e6),
                    " to ",
                    PerStepNumber(
                        p.cost_micros_per_successful_step_band().high() / 1e6)),
                ""),
        NumCell("peak_memory_gb",
                absl::StrCat(Fixed(p.peak_memory_gb(), 1), " / ",
                             Fixed(p.card_memory_gb(), 0)),
                Exact(p.peak_memory_gb())),
        TextCell("eligible", p.eligible() ? "yes" : "no"),
        TextCell("findings", absl::StrJoin(p.findings(), "; ")), "</tr>");
    if (p.runs_succeeded() > 0) {
      chart.rows.push_back({p.pool(),
                            p.cost_micros_per_successful_step(),
                            {p.cost_micros_per_successful_step_band().low(),
                             p.cost_micros_per_successful_step_band().high()}});
    }
  }
  absl::StrAppend(&out, "</tbody></table>", RenderRangeChart(chart), "</div>");
  return out;
}

std::string BakeOff(const PlanPage& page) {
  const v1::PlacePlanResponse& plan = page.plan.plan();
  std::string out = "<section id=\"plan-bakeoff\"><h2>Bake-off</h2>";
  if (!plan.has_bake_off() || plan.bake_off().runs().empty()) {
    absl::StrAppend(
        &out, "<p>None proposed",
        page.bake_off.has_value() && !page.bake_off->reason().empty() ? ": "
                                                                      : ".",
        page.bake_off.has_value() ? Esc(page.bake_off->reason()) : "", "</p>");
    return out + "</section>";
  }
  absl::StrAppend(&out, ProposedRuns(plan.bake_off()));
  if (!page.bake_off.has_value()) return out + "</section>";
  const v1::GetBakeOffStatusResponse& status = *page.bake_off;
  absl::StrAppend(&out, "<p id=\"bakeoff-progress\" data-complete=\"",
                  status.runs_complete(), "\" data-total=\"",
                  status.runs_total(), "\">Progress: ", Esc(status.progress()),
                  status.complete() ? "" : absl::StrCat(". ", status.reason()),
                  "</p><ul id=\"bakeoff-status\">");
  for (const v1::BakeOffRunStatus& run : status.runs()) {
    absl::StrAppend(&out, "<li data-pool=\"", Esc(run.run().pool()),
                    "\" data-uploads=\"", run.uploads_size(), "\">",
                    Esc(run.run().pool()), ": ", run.uploads_size(),
                    run.uploads_size() == 1 ? " upload" : " uploads",
                    run.complete() ? " (complete)" : " (waiting)", "</li>");
  }
  absl::StrAppend(&out, "</ul>");
  if (status.has_verdict()) absl::StrAppend(&out, Verdict(status.verdict()));
  return out + "</section>";
}

}  // namespace

std::string RenderPlanPage(const PlanPage& page) {
  const v1::PlacePlanResponse& plan = page.plan.plan();
  std::string out = Summary(page.plan);
  absl::StrAppend(&out, Candidates(page.plan), Rejections(plan), BakeOff(page),
                  "<section id=\"plan-memory\"><h2>Predicted peak memory per "
                  "GPU</h2>",
                  RenderFields(plan.predicted_memory()), "</section>");
  return out;
}

}  // namespace placement::services::console
