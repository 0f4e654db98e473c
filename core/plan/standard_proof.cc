#include "core/plan/standard_proof.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"

namespace placement::core {
namespace {

const BakeOffPoolVerdict* VerdictOn(const BakeOffVerdict& verdict,
                                    const std::string& pool) {
  for (const BakeOffPoolVerdict& p : verdict.pools) {
    if (p.pool_name == pool) return &p;
  }
  return nullptr;
}

std::string PoolSubject(const std::string& pool) {
  return absl::StrCat("pools/", pool);
}

// The verdict's judgement of the pool itself: measured, passed, and the
// winner or within its band.
void JudgeThePool(const BakeOffVerdict& verdict, const BakeOffPoolVerdict& p,
                  std::vector<PreconditionViolation>* missing) {
  if (!p.measured || p.successful_steps <= 0) {
    missing->push_back({"MEASURED_RUNS_MISSING", PoolSubject(p.pool_name),
                        absl::StrCat("no run of ", p.recipe_key,
                                     " (the plan's recipe and "
                                     "layout on ",
                                     p.pool_name,
                                     ") kept a step there since "
                                     "the plan or naming it")});
    return;
  }
  const bool eval_short = p.eval.has_value() && !p.eval->met;
  if (!p.eligible && !eval_short) {
    std::vector<std::string> why;
    for (const std::string& f : p.findings) why.push_back(f);
    missing->push_back(
        {"POOL_FAILED_BAKE_OFF", PoolSubject(p.pool_name),
         absl::StrCat(p.pool_name, " did not pass the bake-off (",
                      absl::StrJoin(why, "; "), ")")});
    return;
  }
  if (verdict.winner_pool.empty() || verdict.winner_pool == p.pool_name) {
    return;
  }
  const BakeOffPoolVerdict& winner = verdict.pools.front();
  if (p.cost_micros_per_successful_step_band.low >
      winner.cost_micros_per_successful_step_band.high) {
    missing->push_back(
        {"POOL_NOT_THE_WINNER", PoolSubject(p.pool_name),
         absl::StrFormat("%s wins beyond %s's band: %.6f to %.6f per "
                         "successful step against %.6f to %.6f",
                         winner.pool_name, p.pool_name,
                         winner.cost_micros_per_successful_step_band.low / 1e6,
                         winner.cost_micros_per_successful_step_band.high / 1e6,
                         p.cost_micros_per_successful_step_band.low / 1e6,
                         p.cost_micros_per_successful_step_band.high / 1e6)});
  }
}

void JudgeTheEval(const BakeOffPoolVerdict& p,
                  std::vector<PreconditionViolation>* missing) {
  if (!p.eval.has_value() || p.eval->met) return;
  std::string description =
      absl::StrCat("no eval of ", p.recipe_key, " on ", p.eval->serving_sku_id,
                   " in ", PrecisionName(p.eval->serving_precision),
                   " meets the plan's eval "
                   "requirement");
  for (const EvalCheck& check : p.eval->checks) {
    if (check.passed) continue;
    absl::StrAppend(
        &description, "; criterion ", check.criterion.name, " is not passed",
        check.eval.has_value()
            ? absl::StrFormat(" (best %s %.4g, run %s)", check.criterion.metric,
                              check.eval->score, check.eval->run_id)
            : absl::StrCat(" (no eval reports ", check.criterion.metric, ")"));
  }
  missing->push_back({"EVAL_MISSING",
                      absl::StrCat("recipe_keys/", p.recipe_key), description});
}

}  // namespace

std::vector<PreconditionViolation> MissingProof(
    const RecordedPlan& plan, const std::vector<BakeOffUpload>& uploads,
    const std::string& pool) {
  std::vector<PreconditionViolation> missing;
  const auto target =
      std::find_if(plan.targets.begin(), plan.targets.end(),
                   [&](const BakeOffTarget& t) { return t.pool_name == pool; });
  if (target == plan.targets.end()) {
    missing.push_back(
        {"POOL_NOT_A_CANDIDATE", PoolSubject(pool),
         absl::StrCat(pool, " was not a candidate of plan ", plan.plan_id,
                      ": its bake-off proves nothing about it")});
    return missing;
  }
  const BakeOffStatus status = JudgeRecordedPlan(plan, uploads);
  if (!status.all_complete) {
    missing.push_back(
        {"BAKE_OFF_INCOMPLETE", absl::StrCat("plans/", plan.plan_id),
         absl::StrCat("the plan's bake-off is ", status.complete, " of ",
                      status.proposed, " complete: waiting for a run on ",
                      absl::StrJoin(status.waiting_for, ", "))});
  }
  const BakeOffVerdict verdict = JudgeBakeOff(plan, uploads);
  const BakeOffPoolVerdict* judged = VerdictOn(verdict, pool);
  if (judged != nullptr) {
    JudgeThePool(verdict, *judged, &missing);
    JudgeTheEval(*judged, &missing);
  }
  return missing;
}

}  // namespace placement::core
