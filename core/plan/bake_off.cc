#include "core/plan/bake_off.h"

#include <algorithm>
#include <string>

#include "absl/strings/str_cat.h"
#include "core/plan/rules.h"
#include "core/recipe.h"

namespace placement::core {

namespace {

// Why the bake-off is proposed: how many runs are unmeasured leaders and how
// many BORDERLINE fits, and what to run.
std::string BakeOffReason(const BakeOff& bake_off) {
  const size_t borderline = static_cast<size_t>(
      std::count_if(bake_off.runs.begin(), bake_off.runs.end(),
                    [](const BakeOffRun& r) { return r.borderline; }));
  const size_t unmeasured = bake_off.runs.size() - borderline;
  std::string what;
  if (unmeasured > 0) {
    what =
        absl::StrCat(unmeasured, " of the leading candidates ",
                     unmeasured == 1 ? "has" : "have", " no measured run of ",
                     unmeasured == 1 ? "its" : "their", " recipe");
  }
  if (borderline > 0) {
    absl::StrAppend(&what, what.empty() ? "" : "; ", borderline,
                    borderline == 1 ? " candidate has" : " candidates have",
                    " a BORDERLINE fit to measure first");
  }
  return absl::StrCat(kEvidenceBeatsEstimatesRule, ": ", what, "; run recipe ",
                      bake_off.recipe_key,
                      bake_off.runs.size() == 1 ? " there" : " on each",
                      " at equal sequence length, rank and precision");
}

}  // namespace

std::optional<BakeOff> ProposeBakeOff(const PlanRequest& request,
                                      std::vector<Candidate>* candidates) {
  BakeOff bake_off;
  for (size_t i = 0; i < candidates->size(); ++i) {
    Candidate& cand = (*candidates)[i];
    const bool borderline = cand.fit == Fit::kBorderline;
    const bool leading_unmeasured =
        i < static_cast<size_t>(kLeadingCandidates) &&
        cand.basis != EvidenceBasis::kMeasured;
    if (!borderline && !leading_unmeasured) continue;
    cand.measure_first = true;
    const bool seen = std::any_of(
        bake_off.runs.begin(), bake_off.runs.end(), [&](const BakeOffRun& r) {
          return r.sku_id == cand.sku_id && r.recipe_key == cand.recipe_key;
        });
    if (!seen) {
      bake_off.runs.push_back({cand.pool_name, cand.sku_id, cand.gpu_count,
                               cand.recipe_key, borderline});
    }
  }
  if (bake_off.runs.empty()) return std::nullopt;
  const Candidate* first = nullptr;
  for (const Candidate& c : *candidates) {
    if (c.measure_first) {
      first = &c;
      break;
    }
  }
  bake_off.recipe_key = first->recipe_key;
  bake_off.recipe = first->recipe;
  bake_off.settings = DescribeSettings(first->recipe);
  bake_off.measure = {"peak memory per GPU", "step time (p50, p95)",
                      "steps attempted and succeeded, retries, failures",
                      "whether CPU/NVMe offload was needed",
                      "which link the collectives used (NVLink, PCIe, host "
                      "memory)"};
  bake_off.reason = BakeOffReason(bake_off);
  if (request.serving) {
    bake_off.eval_requirement = CheckServeWhatYouEvaluated(
        bake_off.recipe, bake_off.runs.front().sku_id, request.serving->sku_id,
        request.serving->precision);
  }
  return bake_off;
}

}  // namespace placement::core
