#ifndef PLACEMENT_CORE_PLAN_BAKE_OFF_VERDICT_H_
#define PLACEMENT_CORE_PLAN_BAKE_OFF_VERDICT_H_

// The verdict of a plan's bake-off, in the guide's terms: run the same
// recipe on each card at equal settings, then judge each pool by its cost
// per successful step, whether it over-bought memory, whether it needed
// offload (a miss), whether a multi-GPU run's collectives crossed PCIe, and
// whether the eval on the serving SKU and precision passed.
//
// The cost is the planner's own (core/plan/job_cost.h): each pool's runs of
// the plan's recipe key and layout are projected to the plan's total_steps
// (start-up once, the steps, the rework their failures imply), so a
// 50-step measurement and the first choice's whole job are compared per
// step of the same job. Pure: the caller reads the plan and the uploads.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/evidence/eval_evidence.h"
#include "core/evidence/evidence.h"
#include "core/models/fit.h"
#include "core/plan/job_cost.h"
#include "core/plan/recorded_plan.h"

namespace placement::core {

// A succeeded run whose peak memory per GPU stays under this share of the
// card's memory over-bought the card ("if A100 finished with 50GB idle,
// you over-bought that job").
inline constexpr double kOverBoughtPeakShare = 0.6;

struct BakeOffPoolVerdict {
  std::string pool_name;
  std::string sku_id;
  int gpu_count = 0;
  std::string recipe_key;
  bool proposed = false;
  bool first_choice = false;
  int64_t runs = 0;  // of its recipe key, since the plan or naming it
  int64_t runs_succeeded = 0;
  int64_t successful_steps = 0;
  // A run of its recipe key kept a step: the figures below are projected
  // from its runs. False: the pool is not measured yet (its figures 0).
  bool measured = false;
  // The planner's projection of the plan's job on this pool from its runs,
  // per successful step: GPU-hours and at the pool's internal rate, with
  // the projection's band (step-time band, failure rate p10-p90).
  double gpu_hours_per_successful_step = 0;
  Band gpu_hours_per_successful_step_band;
  double cost_micros_per_successful_step = 0;
  Band cost_micros_per_successful_step_band;
  // What the projection is made of: the start-up once per job (apart from
  // the steps, which a short run would otherwise overstate), the GPU-hours
  // of one step and the failure rate of the layout.
  double startup_gpu_hours = 0;
  double step_gpu_hours = 0;
  FailureRate failure_rate;
  // What its runs cost as they ran (ObservedJobCost), for comparison.
  std::optional<ObservedCost> observed;
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
  // The bake-off settled it: every pool it compares is measured, at least
  // two are, and the winner's band is below every other eligible pool's.
  bool decisive = false;
  std::string summary;
  // What keeps it from being decisive, as sentences (a pool not measured,
  // only one pool measured, a rival within the winner's band).
  std::vector<std::string> missing;
  // Eligible pools cheapest first (ties by pool name), then the others by
  // pool name.
  std::vector<BakeOffPoolVerdict> pools;
};

// Where a plan's bake-off stands.
struct BakeOffStatus {
  int proposed = 0;
  int complete = 0;  // proposed runs with an upload of their recipe key
  bool all_complete = false;
  std::vector<std::string> waiting_for;  // proposed pools with none yet
  // Once every proposed run has an upload (none when none was proposed).
  std::optional<BakeOffVerdict> verdict;
};

// Judges one pool from its uploads (only those of the target's recipe key
// and pool count: UploadsFor):
//  - its cost: the planner's projection of a `total_steps`-step job from
//    the runs (MeasuredJobInputs, their failures against the target's
//    pool's), per successful step, with its band;
//  - over-bought: a succeeded run whose peak is under kOverBoughtPeakShare
//    of the card's memory (the idle GB is the card's memory less the
//    largest succeeded peak);
//  - offload: any run that offloaded to CPU or NVMe did not fit, a miss;
//  - collectives on PCIe: a multi-GPU run whose collectives used PCIe or
//    host memory;
//  - eligible to win: measured, a run succeeded, no run offloaded or ran
//    out of memory, and the eval requirement (if any) is met under the
//    criteria that apply to the pool.
BakeOffPoolVerdict JudgePool(const BakeOffTarget& target,
                             const std::vector<BakeOffUpload>& uploads,
                             int64_t total_steps);

// Judges every target of `plan` and names the winner: the eligible pool
// with the lowest projected cost per successful step. Decisive only when
// every target is measured, two or more are, and the winner's band high is
// below every other eligible pool's band low; otherwise `missing` says why.
BakeOffVerdict JudgeBakeOff(const RecordedPlan& plan,
                            const std::vector<BakeOffUpload>& uploads);

// Progress of the proposed runs and, once all have an upload, the verdict.
BakeOffStatus JudgeRecordedPlan(const RecordedPlan& plan,
                                const std::vector<BakeOffUpload>& uploads);

}  // namespace placement::core

#endif  // PLACEMENT_CORE_PLAN_BAKE_OFF_VERDICT_H_
