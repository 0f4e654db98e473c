// Recent plans, newest first, each linking to its page.

#include "absl/strings/str_cat.h"
#include "services/console/render/html.h"
#include "services/console/render/pages.h"

namespace placement::services::console {

std::string RenderPlansPage(const PlansPage& page) {
  std::string out =
      "<table id=\"plans-table\" class=\"sortable\"><thead><tr><th>Made</th>"
      "<th>Plan</th><th>Team</th><th>Model</th><th>Method</th>"
      "<th>Recipe key</th><th>Steps</th><th>Objective</th>"
      "<th>First choice</th><th>SKU</th><th>Warnings</th></tr></thead><tbody>";
  for (const PlanRow& plan : page.plans) {
    absl::StrAppend(
        &out, "<tr data-plan=\"", Esc(plan.plan_id), "\">",
        TextCell("create_time", UtcTime(plan.created_at)),
        "<td data-field=\"plan_id\" data-v=\"", Esc(plan.plan_id), "\">",
        Link(Href("/plan", {{"id", plan.plan_id}}), plan.plan_id.substr(0, 8)),
        "</td>", TextCell("team", plan.team), TextCell("model", plan.model),
        TextCell("method", plan.method),
        TextCell("recipe_key", plan.recipe_key),
        NumCell("total_steps", absl::StrCat(plan.total_steps),
                absl::StrCat(plan.total_steps)),
        TextCell("objective", plan.objective),
        TextCell("chosen_pool", plan.chosen_pool.empty() ? "(no candidate)"
                                                         : plan.chosen_pool),
        TextCell("chosen_sku", plan.chosen_sku),
        NumCell("warnings", absl::StrCat(plan.warnings),
                absl::StrCat(plan.warnings)),
        "</tr>");
  }
  absl::StrAppend(&out, "</tbody></table>");
  if (page.plans.empty()) absl::StrAppend(&out, "<p>No plan is recorded.</p>");
  if (!page.older_than.empty()) {
    absl::StrAppend(
        &out, "<p class=\"pager\">",
        Link(Href("/plans", {{"before", page.older_than}}), "Older plans"),
        "</p>");
  }
  return out;
}

}  // namespace placement::services::console
