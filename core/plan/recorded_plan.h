#ifndef PLACEMENT_CORE_PLAN_RECORDED_PLAN_H_
#define PLACEMENT_CORE_PLAN_RECORDED_PLAN_H_

// A plan as it was recorded, and the uploads that carried it out: what the
// bake-off verdict (core/plan/bake_off_verdict.h) and a standard's proof
// (core/plan/standard_proof.h) judge. Services read the stored plan and the
// matching runs and map them here; every judgement is core's.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "core/evidence/eval_evidence.h"
#include "core/evidence/evidence.h"
#include "core/evidence/pool_reliability.h"

namespace placement::core {

// A pool the plan's bake-off judges: a proposed measurement run, the plan's
// first choice (the job itself measures it), or the pool a standard is
// asked for.
struct BakeOffTarget {
  std::string pool_name;
  std::string sku_id;
  int gpu_count = 0;
  // The key of the recipe the plan chose on this pool (its layout
  // included): only runs of this key count for it.
  std::string recipe_key;
  bool proposed = false;      // one of the plan's bake-off runs
  bool first_choice = false;  // the plan's first candidate
  double card_memory_gb = 0;
  int64_t internal_rate_micros_per_gpu_hour = 0;
  // The pool's failure sums now: what the runs' own failures are judged
  // against, as the planner does (EstimateLayoutFailureRate).
  PoolFailures pool_failures;
  // The plan's eval requirement for this pool's recipe key under the
  // criteria that apply to the pool; nullopt when the plan has none.
  std::optional<EvalStatus> eval;
};

struct RecordedPlan {
  std::string plan_id;
  absl::Time created = absl::InfinitePast();
  std::string team;
  // The steps the job must complete (the request's total_steps): what
  // every pool is projected to.
  int64_t total_steps = 0;
  // Proposed runs first, in the plan's order; then the first choice when it
  // was not proposed; then any pool asked about (a standard's).
  std::vector<BakeOffTarget> targets;

  int proposed_runs() const;
};

// One upload that may have carried out a target's run.
struct BakeOffUpload {
  MeasuredRun run;
  bool carries_plan_id = false;
  std::string failure_reason;
  absl::Time accepted = absl::InfinitePast();

  bool Succeeded() const { return run.outcome == RunOutcome::kSucceeded; }
  bool Offloaded() const {
    return run.offload == Offload::kCpu || run.offload == Offload::kNvme;
  }
  // GPU-hours per successful step as the run went (counted,
  // core/evidence/run_attempts.h); 0 when no step succeeded.
  double GpuHoursPerSuccessfulStep() const;
};

// The uploads that count for `target`: those of its recipe key (its layout
// included), in the order given.
std::vector<BakeOffUpload> UploadsFor(const BakeOffTarget& target,
                                      const std::vector<BakeOffUpload>& all);

}  // namespace placement::core

#endif  // PLACEMENT_CORE_PLAN_RECORDED_PLAN_H_
