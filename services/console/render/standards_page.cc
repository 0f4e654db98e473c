// Standards in force and retired, each with its proof (the plan whose
// bake-off proved it and the evidence then) and what a plan of its proving
// request says now (applied, contradicted).

#include "absl/strings/str_cat.h"
#include "services/console/render/figure_text.h"
#include "services/console/render/html.h"
#include "services/console/render/pages.h"
#include "services/console/render/proto_text.h"

namespace placement::services::console {
namespace {

std::string RecipeClass(const v1::Recipe& r) {
  std::string out = absl::StrCat(
      r.model(), " ", EnumText(v1::FineTuneMethod_descriptor(), r.method()));
  if (r.lora_rank() > 0) absl::StrAppend(&out, " r", r.lora_rank());
  if (r.sequence_length() > 0) {
    absl::StrAppend(&out, " seq ", r.sequence_length());
  }
  if (r.precision() != v1::PRECISION_UNSPECIFIED) {
    absl::StrAppend(&out, " ",
                    EnumText(v1::Precision_descriptor(), r.precision()));
  }
  if (r.gpu_count() > 0) absl::StrAppend(&out, " ", r.gpu_count(), " GPUs");
  return out;
}

std::string NowCell(const StandardsPage& page, const v1::Standard& s) {
  if (!s.active()) return "<td data-field=\"now\">-</td>";
  if (!page.now.has_value()) return "<td data-field=\"now\">(withheld)</td>";
  auto it = page.now->find(s.standard_id());
  if (it == page.now->end() || !it->second.checked) {
    return absl::StrCat(
        "<td data-field=\"now\" data-v=\"unchecked\">not checked",
        it == page.now->end() ? "" : absl::StrCat(": ", Esc(it->second.error)),
        "</td>");
  }
  const StandardNow& now = it->second;
  if (now.governed_by != s.standard_id()) {
    return absl::StrCat(
        "<td data-field=\"now\" data-v=\"superseded\">its proving recipe is "
        "governed now by ",
        now.governed_by.empty() ? "no standard" : Esc(now.governed_by),
        "</td>");
  }
  const char* verdict = now.contradicted
                            ? "contradicted"
                            : (now.applied ? "applied" : "rejected");
  std::string out =
      absl::StrCat("<td data-field=\"now\" data-v=\"", verdict, "\"><strong>",
                   verdict, ":</strong> ", Esc(now.reason));
  for (const std::string& c : now.contradictions) {
    absl::StrAppend(&out, "<p class=\"warning\">Contradicted: ", Esc(c),
                    "</p>");
  }
  return out + "</td>";
}

std::string Table(const StandardsPage& page, bool active) {
  std::string out = absl::StrCat(
      "<table id=\"standards-", active ? "active" : "retired",
      "\" class=\"sortable\"><thead><tr><th>Written</th><th>Recipe class</th>"
      "<th>Pool</th><th>SKU</th><th>By</th><th>Why</th><th>Proof</th>"
      "<th>Cost / step band then</th><th>Failures / h band then</th>",
      active ? "<th>A plan of its recipe now</th>"
             : "<th>Retired</th><th>By</th><th>Why</th>",
      "</tr></thead><tbody>");
  int rows = 0;
  for (const v1::Standard& s : page.standards) {
    if (s.active() != active) continue;
    ++rows;
    absl::StrAppend(
        &out, "<tr data-standard=\"", Esc(s.standard_id()), "\">",
        TextCell("create_time",
                 UtcTime(absl::FromUnixSeconds(s.create_time().seconds()))),
        TextCell("recipe_class", RecipeClass(s.recipe_class())),
        "<td data-field=\"pool\" data-v=\"", Esc(s.pool()), "\">",
        Link(Href("/pool", {{"name", s.pool()}}), s.pool()), "</td>",
        TextCell("sku", s.sku()), TextCell("written_by", s.written_by()),
        TextCell("reason", s.reason()), "<td data-field=\"plan_id\" data-v=\"",
        Esc(s.plan_id()), "\">",
        Link(Href("/plan", {{"id", s.plan_id()}}),
             absl::StrCat("bake-off of plan ", s.plan_id().substr(0, 8))),
        "</td>",
        NumCell("cost_band",
                absl::StrCat(
                    PerStepNumber(
                        s.cost_micros_per_successful_step_band().low() / 1e6),
                    " to ",
                    PerStepNumber(
                        s.cost_micros_per_successful_step_band().high() / 1e6)),
                absl::StrCat(
                    Exact(s.cost_micros_per_successful_step_band().low()), " ",
                    Exact(s.cost_micros_per_successful_step_band().high()))),
        NumCell("failure_band", BandText(s.failure_rate_per_hour_band(), 4),
                absl::StrCat(Exact(s.failure_rate_per_hour_band().low()), " ",
                             Exact(s.failure_rate_per_hour_band().high()))));
    if (active) {
      absl::StrAppend(&out, NowCell(page, s));
    } else {
      absl::StrAppend(
          &out,
          TextCell("retire_time",
                   UtcTime(absl::FromUnixSeconds(s.retire_time().seconds()))),
          TextCell("retired_by", s.retired_by()),
          TextCell("retire_reason", s.retire_reason()));
    }
    absl::StrAppend(&out, "</tr>");
  }
  absl::StrAppend(&out, "</tbody></table>");
  if (rows == 0) absl::StrAppend(&out, "<p>None.</p>");
  return out;
}

}  // namespace

std::string RenderStandardsPage(const StandardsPage& page) {
  std::string out = absl::StrCat(
      "<section id=\"standards-in-force\"><h2>In force</h2>", Table(page, true),
      "<p class=\"note\">A plan of a standard's proving request, made now on "
      "this replica's evidence with PlacePlan's own planning, says whether "
      "the standard still applies and whether later evidence contradicts "
      "it (another pool measured cheaper beyond both bands, or the pool "
      "failing more often than its recorded band).</p></section>"
      "<section id=\"standards-retired\"><h2>Retired</h2>",
      Table(page, false), "</section>");
  if (!page.next_page_token.empty()) {
    absl::StrAppend(
        &out, "<p class=\"pager\">",
        Link(Href("/standards", {{"page_token", page.next_page_token}}),
             "Older standards"),
        "</p>");
  }
  return out;
}

}  // namespace placement::services::console
