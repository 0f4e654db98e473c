#include "core/plan/bake_off_verdict.h"

#include <algorithm>
#include <limits>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"

namespace placement::core {
namespace {

// The per-step figure of one run, and its range by the run's step times.
Band OneRunBand(const BakeOffUpload& run, double per_step) {
  if (run.step_time_mean_s <= 0 || run.step_time_p50_s <= 0) {
    return {per_step, per_step};
  }
  const double low = per_step * run.step_time_p50_s / run.step_time_mean_s;
  const double high = per_step * run.step_time_p95_s / run.step_time_mean_s;
  return {std::min(low, per_step), std::max(high, per_step)};
}

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
// PCIe, a missing eval.
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
        absl::StrCat("eval missing: no eval of ", v->recipe_key, " on ",
                     v->eval->serving_sku_id, " in ",
                     PrecisionName(v->eval->serving_precision), " is stored"));
  }
}

}  // namespace

double BakeOffUpload::GpuHoursPerSuccessfulStep() const {
  if (steps_succeeded <= 0) return 0;
  return gpu_hours / static_cast<double>(steps_succeeded);
}

BakeOffPoolVerdict JudgePool(const BakeOffSubject& subject) {
  BakeOffPoolVerdict v;
  v.pool_name = subject.pool_name;
  v.sku_id = subject.sku_id;
  v.gpu_count = subject.gpu_count;
  v.recipe_key = subject.recipe_key;
  v.first_choice = subject.first_choice;
  v.card_memory_gb = subject.card_memory_gb;
  v.eval = subject.eval;
  v.runs = static_cast<int64_t>(subject.uploads.size());

  double gpu_hours = 0;
  Band per_run{std::numeric_limits<double>::infinity(), 0};
  const BakeOffUpload* only_with_steps = nullptr;
  int runs_with_steps = 0;
  for (const BakeOffUpload& run : subject.uploads) {
    gpu_hours += run.gpu_hours;
    v.successful_steps += run.steps_succeeded;
    if (run.steps_succeeded > 0) {
      ++runs_with_steps;
      only_with_steps = &run;
      const double per_step = run.GpuHoursPerSuccessfulStep();
      per_run.low = std::min(per_run.low, per_step);
      per_run.high = std::max(per_run.high, per_step);
    }
    if (run.Succeeded()) {
      ++v.runs_succeeded;
      v.peak_memory_gb = std::max(v.peak_memory_gb, run.peak_memory_gb);
    }
    if (run.Offloaded()) v.offload_miss = true;
    if (run.outcome == RunOutcome::kOom) v.out_of_memory = true;
    if (run.gpu_count > 1 && (run.interconnect == Interconnect::kPcie ||
                              run.interconnect == Interconnect::kHostMemory)) {
      v.collectives_on_pcie = true;
    }
    if (!run.Succeeded()) {
      v.findings.push_back(absl::StrCat(
          "run ", run.run_id, " ", RunOutcomeName(run.outcome),
          run.failure_reason.empty() ? "" : ": ", run.failure_reason));
    }
  }
  const double rate =
      static_cast<double>(subject.internal_rate_micros_per_gpu_hour);
  if (v.successful_steps > 0) {
    v.gpu_hours_per_successful_step =
        gpu_hours / static_cast<double>(v.successful_steps);
    v.gpu_hours_per_successful_step_band =
        runs_with_steps == 1
            ? OneRunBand(*only_with_steps, v.gpu_hours_per_successful_step)
            : Band{std::min(per_run.low, v.gpu_hours_per_successful_step),
                   std::max(per_run.high, v.gpu_hours_per_successful_step)};
    v.cost_micros_per_successful_step = v.gpu_hours_per_successful_step * rate;
    v.cost_micros_per_successful_step_band =
        Scaled(v.gpu_hours_per_successful_step_band, rate);
  }

  AddFindings(&v);
  v.eligible = v.runs_succeeded > 0 && v.successful_steps > 0 &&
               !v.offload_miss && !v.out_of_memory &&
               (!v.eval.has_value() || v.eval->met);
  return v;
}

BakeOffVerdict JudgeBakeOff(const std::vector<BakeOffSubject>& subjects) {
  BakeOffVerdict verdict;
  for (const BakeOffSubject& subject : subjects) {
    if (subject.uploads.empty()) continue;
    verdict.pools.push_back(JudgePool(subject));
  }
  std::sort(verdict.pools.begin(), verdict.pools.end(), CheaperFirst);
  if (verdict.pools.empty() || !verdict.pools.front().eligible) {
    verdict.summary =
        "no pool is eligible: none finished without offload, running out of "
        "memory, or a missing eval";
    return verdict;
  }
  const BakeOffPoolVerdict& winner = verdict.pools.front();
  verdict.winner_pool = winner.pool_name;
  verdict.decisive = true;
  std::vector<std::string> within;
  for (size_t i = 1; i < verdict.pools.size(); ++i) {
    const BakeOffPoolVerdict& other = verdict.pools[i];
    if (!other.eligible) continue;
    if (winner.cost_micros_per_successful_step_band.high >=
        other.cost_micros_per_successful_step_band.low) {
      verdict.decisive = false;
      within.push_back(other.pool_name);
    }
  }
  verdict.summary = absl::StrFormat(
      "%s wins at %.6f per successful step (%.3g GPU-hours)", winner.pool_name,
      winner.cost_micros_per_successful_step / 1e6,
      winner.gpu_hours_per_successful_step);
  if (!verdict.decisive) {
    absl::StrAppend(&verdict.summary, "; not decisive: within the band of ",
                    absl::StrJoin(within, ", "));
  }
  return verdict;
}

}  // namespace placement::core
