#ifndef PLACEMENT_CORE_PLAN_BAKE_OFF_VERDICT_H_
#define PLACEMENT_CORE_PLAN_BAKE_OFF_VERDICT_H_

// The verdict of a plan's bake-off, in the guide's terms: run the same
// recipe on each card at equal settings, then judge each pool by its cost
// per successful step, whether it over-bought memory, whether it needed
// offload (a miss), whether a multi-GPU run's collectives crossed PCIe, and
// whether the eval on the serving SKU and precision passed. Pure: the
// uploads and evals are read by the caller.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "core/evidence/eval_evidence.h"
#include "core/evidence/evidence.h"
#include "core/models/fit.h"

namespace placement::core {

// A succeeded run whose peak memory per GPU stays under this share of the
// card's memory over-bought the card ("if A100 finished with 50GB idle,
// you over-bought that job").
inline constexpr double kOverBoughtPeakShare = 0.6;

// One upload that carried out a bake-off run.
struct BakeOffUpload {
  std::string run_id;
  std::string recipe_key;
  bool carries_plan_id = false;
  RunOutcome outcome = RunOutcome::kUnspecified;
  std::string failure_reason;
  int64_t steps_attempted = 0;
  int64_t steps_succeeded = 0;
  int gpu_count = 0;
  double gpu_hours = 0;
  double step_time_mean_s = 0;
  double step_time_p50_s = 0;
  double step_time_p95_s = 0;
  double peak_memory_gb = 0;
  Offload offload = Offload::kUnspecified;
  Interconnect interconnect = Interconnect::kUnspecified;
  absl::Time accepted = absl::InfinitePast();

  bool Succeeded() const { return outcome == RunOutcome::kSucceeded; }
  bool Offloaded() const {
    return offload == Offload::kCpu || offload == Offload::kNvme;
  }
  // GPU-hours per successful step; 0 when no step succeeded.
  double GpuHoursPerSuccessfulStep() const;
};

// A pool the bake-off judges, with what is known of it.
struct BakeOffSubject {
  std::string pool_name;
  std::string sku_id;
  int gpu_count = 0;
  std::string recipe_key;
  // The plan's first choice (not a proposed run: the job measures it).
  bool first_choice = false;
  double card_memory_gb = 0;
  int64_t internal_rate_micros_per_gpu_hour = 0;
  // The plan's eval requirement for this pool's recipe key; nullopt when
  // the plan has none.
  std::optional<EvalStatus> eval;
  std::vector<BakeOffUpload> uploads;
};

struct BakeOffPoolVerdict {
  std::string pool_name;
  std::string sku_id;
  int gpu_count = 0;
  std::string recipe_key;
  bool first_choice = false;
  int64_t runs = 0;
  int64_t runs_succeeded = 0;
  int64_t successful_steps = 0;
  double gpu_hours_per_successful_step = 0;
  Band gpu_hours_per_successful_step_band;
  double cost_micros_per_successful_step = 0;
  Band cost_micros_per_successful_step_band;
  double peak_memory_gb = 0;  // largest of a succeeded run
  double card_memory_gb = 0;
  bool over_bought = false;
  double idle_memory_gb = 0;
  bool offload_miss = false;
  bool out_of_memory = false;
  bool collectives_on_pcie = false;
  std::optional<EvalStatus> eval;
  bool eligible = false;
  std::vector<std::string> findings;
};

struct BakeOffVerdict {
  std::string winner_pool;  // empty: no pool is eligible
  bool decisive = false;
  std::string summary;
  // Eligible pools cheapest first (ties by pool name), then the others by
  // pool name.
  std::vector<BakeOffPoolVerdict> pools;
};

// Judges one pool from its uploads:
//  - cost per successful step: the runs' GPU-hours summed over their
//    successful steps summed (a failed run's hours count against the
//    pool), at the pool's internal rate; its band is the lowest and
//    highest per-run figure, or for a single run the figure scaled by its
//    step time p50 and p95 over its mean;
//  - over-bought: a succeeded run whose peak is under kOverBoughtPeakShare
//    of the card's memory (the idle GB is the card's memory less the
//    largest succeeded peak);
//  - offload: any run that offloaded to CPU or NVMe did not fit, a miss;
//  - collectives on PCIe: a multi-GPU run whose collectives used PCIe or
//    host memory;
//  - eligible to win: a run succeeded with successful steps, no run
//    offloaded or ran out of memory, and the eval requirement (if any) is
//    met.
BakeOffPoolVerdict JudgePool(const BakeOffSubject& subject);

// Judges every subject with uploads and names the winner: the eligible
// pool with the lowest cost per successful step; decisive when its cost
// band's high is below every other eligible pool's band low.
BakeOffVerdict JudgeBakeOff(const std::vector<BakeOffSubject>& subjects);

}  // namespace placement::core

#endif  // PLACEMENT_CORE_PLAN_BAKE_OFF_VERDICT_H_
