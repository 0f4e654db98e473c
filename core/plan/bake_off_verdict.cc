#include "core/plan/bake_off_verdict.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"

namespace placement::core {
namespace {

Band Scaled(const Band& band, double factor) {
  return {band.low * factor, band.high * factor};
}

bool CheaperFirst(const BakeOffPoolVerdict& a, const BakeOffPoolVerdict& b) {
  if (a.eligible != b.eligible) return a.eligible;
  if (a.eligible &&
      a.cost_micros_per_successful_step != b.cost_micros_per_successful_step) {
    return a.cost_micros_per_successful_step <
           b.cost_micros_per_successful_step;
  }
  return a.pool_name < b.pool_name;
}

// The guide's findings of a judged pool, as sentences, after its runs'
// failures: over-bought memory, offload, out of memory, collectives on
// PCIe, a missing or short eval.
void AddFindings(BakeOffPoolVerdict* v) {
  if (v->runs_succeeded > 0 && v->card_memory_gb > 0 &&
      v->peak_memory_gb < kOverBoughtPeakShare * v->card_memory_gb) {
    v->over_bought = true;
    v->idle_memory_gb = v->card_memory_gb - v->peak_memory_gb;
    v->findings.push_back(absl::StrFormat(
        "over-bought: finished with %.0f GB idle of %.0f GB (peak %.1f GB, "
        "under %.0f%% of the card)",
        v->idle_memory_gb, v->card_memory_gb, v->peak_memory_gb,
        100 * kOverBoughtPeakShare));
  }
  if (v->offload_miss) {
    v->findings.push_back(
        "offload: a run needed CPU or NVMe offload to finish; it did not "
        "fit, a miss");
  }
  if (v->out_of_memory) {
    v->findings.push_back("out of memory: a run did not fit the card");
  }
  if (v->collectives_on_pcie) {
    v->findings.push_back(
        "collectives on PCIe: a multi-GPU run's collectives crossed PCIe or "
        "host memory");
  }
  if (v->eval.has_value() && !v->eval->met) {
    v->findings.push_back(
        v->eval->checks.empty()
            ? absl::StrCat("eval missing: no eval of ", v->recipe_key, " on ",
                           v->eval->serving_sku_id, " in ",
                           PrecisionName(v->eval->serving_precision),
                           " is stored")
            : absl::StrCat("eval short: an eval criterion that applies to ",
                           v->pool_name, " is not passed by an eval of ",
                           v->recipe_key));
  }
  if (!v->measured) {
    v->findings.push_back(absl::StrCat("not measured: no run of ",
                                       v->recipe_key, " on ", v->pool_name,
                                       " since the plan or naming it"));
  }
}

// The uploads' own figures: counts, memory, offload and fabric findings.
void CountUploads(const std::vector<BakeOffUpload>& uploads,
                  BakeOffPoolVerdict* v, EvidenceRollup* rollup) {
  for (const BakeOffUpload& upload : uploads) {
    const MeasuredRun& run = upload.run;
    ++v->runs;
    rollup->Add(run);
    v->successful_steps += run.steps_succeeded;
    if (upload.Succeeded()) {
      ++v->runs_succeeded;
      v->peak_memory_gb = std::max(v->peak_memory_gb, run.peak_memory_gb);
    }
    if (upload.Offloaded()) v->offload_miss = true;
    if (run.outcome == RunOutcome::kOom) v->out_of_memory = true;
    if (run.gpu_count > 1 && (run.interconnect == Interconnect::kPcie ||
                              run.interconnect == Interconnect::kHostMemory)) {
      v->collectives_on_pcie = true;
    }
    if (!upload.Succeeded()) {
      v->findings.push_back(absl::StrCat(
          "run ", run.run_id, " ", RunOutcomeName(run.outcome),
          run.retries > 0 ? absl::StrCat(" after ", run.retries, " retries")
                          : "",
          upload.failure_reason.empty() ? "" : ": ", upload.failure_reason));
    }
  }
}

std::string Describe(const BakeOffPoolVerdict& p) {
  return absl::StrFormat("%.6f per successful step (%.3g GPU-hours)",
                         p.cost_micros_per_successful_step / 1e6,
                         p.gpu_hours_per_successful_step);
}

// Why the verdict is not decisive, if it is not.
std::vector<std::string> Missing(const BakeOffVerdict& verdict) {
  std::vector<std::string> missing;
  int measured = 0;
  for (const BakeOffPoolVerdict& p : verdict.pools) {
    if (p.measured) {
      ++measured;
    } else {
      missing.push_back(
          absl::StrCat(p.pool_name, " has no run of ", p.recipe_key, " yet"));
    }
  }
  if (measured < 2) {
    missing.push_back(
        measured == 0
            ? "no pool is measured"
            : "only one pool is measured: a verdict compares two or more");
  }
  if (verdict.winner_pool.empty()) return missing;
  const BakeOffPoolVerdict& winner = verdict.pools.front();
  for (size_t i = 1; i < verdict.pools.size(); ++i) {
    const BakeOffPoolVerdict& other = verdict.pools[i];
    if (!other.eligible) continue;
    if (winner.cost_micros_per_successful_step_band.high >=
        other.cost_micros_per_successful_step_band.low) {
      missing.push_back(
          absl::StrCat(other.pool_name, " is within the winner's band"));
    }
  }
  return missing;
}

}  // namespace

BakeOffPoolVerdict JudgePool(const BakeOffTarget& target,
                             const std::vector<BakeOffUpload>& uploads,
                             int64_t total_steps) {
  BakeOffPoolVerdict v;
  v.pool_name = target.pool_name;
  v.sku_id = target.sku_id;
  v.gpu_count = target.gpu_count;
  v.recipe_key = target.recipe_key;
  v.proposed = target.proposed;
  v.first_choice = target.first_choice;
  v.card_memory_gb = target.card_memory_gb;
  v.eval = target.eval;
  EvidenceRollup rollup;
  CountUploads(UploadsFor(target, uploads), &v, &rollup);
  v.measured = v.runs > 0;
  const EvidenceStats stats = Summarize(rollup);
  const int gpus = std::max(1, target.gpu_count);
  const std::optional<JobCostInputs> inputs =
      v.measured ? MeasuredJobInputs(stats, gpus, target.pool_failures)
                 : std::nullopt;
  if (inputs.has_value() && total_steps > 0) {
    const JobCost job = ProjectJobCost(*inputs, total_steps);
    const double steps = static_cast<double>(total_steps);
    const double rate =
        static_cast<double>(target.internal_rate_micros_per_gpu_hour);
    v.gpu_hours_per_successful_step = job.total_gpu_hours / steps;
    v.gpu_hours_per_successful_step_band =
        Scaled(job.total_gpu_hours_band, 1 / steps);
    v.cost_micros_per_successful_step = v.gpu_hours_per_successful_step * rate;
    v.cost_micros_per_successful_step_band =
        Scaled(v.gpu_hours_per_successful_step_band, rate);
    v.startup_gpu_hours = inputs->startup_gpu_hours;
    v.step_gpu_hours = inputs->step_gpu_hours;
    v.failure_rate = inputs->failure;
    v.observed = ObservedJobCost(stats, gpus);
  }
  AddFindings(&v);
  v.eligible = v.measured && v.runs_succeeded > 0 && v.successful_steps > 0 &&
               inputs.has_value() && !v.offload_miss && !v.out_of_memory &&
               (!v.eval.has_value() || v.eval->met);
  return v;
}

BakeOffVerdict JudgeBakeOff(const RecordedPlan& plan,
                            const std::vector<BakeOffUpload>& uploads) {
  BakeOffVerdict verdict;
  for (const BakeOffTarget& target : plan.targets) {
    verdict.pools.push_back(JudgePool(target, uploads, plan.total_steps));
  }
  std::sort(verdict.pools.begin(), verdict.pools.end(), CheaperFirst);
  if (!verdict.pools.empty() && verdict.pools.front().eligible) {
    verdict.winner_pool = verdict.pools.front().pool_name;
  }
  verdict.missing = Missing(verdict);
  verdict.decisive = !verdict.winner_pool.empty() && verdict.missing.empty();
  if (verdict.winner_pool.empty()) {
    verdict.summary =
        "no pool is eligible: none finished without offload, running out of "
        "memory, or a missing eval";
  } else {
    verdict.summary = absl::StrCat(
        verdict.winner_pool, " wins at ", Describe(verdict.pools.front()),
        ", each pool projected to the plan's ", plan.total_steps, " steps");
  }
  if (!verdict.missing.empty()) {
    absl::StrAppend(&verdict.summary,
                    "; not decisive: ", absl::StrJoin(verdict.missing, "; "));
  }
  return verdict;
}

BakeOffStatus JudgeRecordedPlan(const RecordedPlan& plan,
                                const std::vector<BakeOffUpload>& uploads) {
  BakeOffStatus status;
  for (const BakeOffTarget& target : plan.targets) {
    if (!target.proposed) continue;
    ++status.proposed;
    if (UploadsFor(target, uploads).empty()) {
      status.waiting_for.push_back(target.pool_name);
    } else {
      ++status.complete;
    }
  }
  status.all_complete = status.complete == status.proposed;
  if (status.proposed > 0 && status.all_complete) {
    status.verdict = JudgeBakeOff(plan, uploads);
  }
  return status;
}

}  // namespace placement::core
