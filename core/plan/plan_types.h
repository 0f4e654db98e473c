#ifndef PLACEMENT_CORE_PLAN_PLAN_TYPES_H_
#define PLACEMENT_CORE_PLAN_PLAN_TYPES_H_

// The planner's request and answer: what is asked (PlanRequest), each pool's
// verdict (Candidate or Rejection), the bake-off and the whole PlanResult.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "core/evidence/evidence.h"
#include "core/evidence/pool_reliability.h"
#include "core/models/fit.h"
#include "core/models/memory_model.h"
#include "core/plan/candidate_timing.h"
#include "core/plan/job_cost.h"
#include "core/plan/rules.h"
#include "core/recipe.h"

namespace placement::core {

enum class Objective {
  kUnspecified = 0,  // treated as kLowestCost
  kLowestCost = 1,
  kShortestTime = 2,
  // The cheapest candidate whose finish (wait + run) meets the deadline at
  // the 90th percentile (core/plan/plan_with_time.h); the planner proper
  // ranks these two by cost.
  kFinishByDeadline = 3,
  // Cost plus delay_cost_micros_per_hour x the expected hours to finish.
  kCostOfDelay = 4,
};

// Where the fine-tuned model will be served.
struct ServingTarget {
  std::string sku_id;
  Precision precision = Precision::kUnspecified;  // unspecified = training's
};

struct PlanConstraints {
  std::vector<std::string> allowed_pools;              // empty = any pool
  std::map<std::string, std::string> required_labels;  // all must match
  int max_gpus = 0;                                    // 0 = no limit
  // Candidates whose expected wall time exceeds it are REJECTED (rule
  // "deadline"), not merely warned: a plan that misses the deadline is not
  // a plan. Under kFinishByDeadline it counts the wait too: from the plan's
  // time to the finish at the 90th percentile (PlanWithTime).
  std::optional<absl::Duration> deadline;
  Objective objective = Objective::kLowestCost;
  double headroom_fraction = kDefaultHeadroomFraction;
  // kCostOfDelay: what an hour of later finish is worth, in micro-units.
  int64_t delay_cost_micros_per_hour = 0;
};

struct PlanRequest {
  Recipe recipe;
  int64_t total_steps = 0;  // optimizer steps the job must complete
  PlanConstraints constraints;
  std::optional<ServingTarget> serving;
  std::string team;
};

// Fit and Band (the fit verdicts and estimate bands) are in core/models/fit.h.

// Why a pool's job runs a configuration that is only estimated where another
// configuration of the pool is measured: measuring it is worth more to the
// recipe class's remaining demand than it may cost this job
// (core/plan/configuration_exploration.h). The pool ranks at the measured
// configuration's value, what it is worth without the measurement.
struct ConfigurationExploration {
  std::string measured_recipe_key;
  double measured_value_micros = 0;  // its ranking value, risk priced
  bool measured_fits = true;         // FITS, not BORDERLINE
  // What this job may pay for the measurement: the explored configuration
  // at its pessimistic edge, risk priced, less the measured one (at most 0
  // when the estimate wins even there).
  double premium_micros = 0;
  // What the measurement is expected to save over the steps of the recipe
  // class still expected (`demand_steps`), and the chance that the explored
  // configuration turns out cheaper (and fits).
  double expected_saving_micros = 0;
  int64_t demand_steps = 0;
  double win_probability = 0;
};

// One pool the job can run on, ranked.
struct Candidate {
  int rank = 0;  // 1 = best
  std::string pool_name;
  std::string sku_id;
  int gpu_count = 0;
  Fit fit = Fit::kUnspecified;  // FITS or BORDERLINE for a candidate
  bool fits = false;            // FITS or BORDERLINE; kept for the API
  // The concrete recipe proposed on this pool (its configuration chosen
  // where the request left it open) and its key.
  Recipe recipe;
  std::string recipe_key;
  double peak_memory_gb = 0;  // per GPU: measured peak when measured
  Band peak_memory_gb_band;   // narrow when measured
  // The chance that a run runs out of memory (FitVerdict::oom_probability):
  // priced into rework_gpu_hours as that share of a failed start.
  double oom_probability = 0;
  double headroom_gb = 0;  // card memory - peak_memory_gb
  // expected_gpu_hours / total_steps x 1000: the job's, start-up and
  // rework included (their priors when nothing is measured), not a step's
  // (a step alone is step_time_s x gpu_count).
  double gpu_hours_per_1k_successful_steps = 0;
  // expected_gpu_hours = startup_gpu_hours + total_steps x step_gpu_hours
  // + rework_gpu_hours: what each term rests on is in the reasons.
  double expected_gpu_hours = 0;
  // Its band: the projection at the step-time band's low edge and the
  // failure rate's p10, and at the high edge and the rate's p90.
  Band expected_gpu_hours_band;
  // Loading the model, compiling, warming up: once per run (measured as the
  // succeeded runs' wall time less their busy time, else a prior).
  double startup_gpu_hours = 0;
  bool startup_measured = false;
  // GPU-hours per step, start-up and failures left out: the same for a
  // 300-step measurement and a 10,000-step job of the layout.
  double step_gpu_hours = 0;
  // Expected GPU-hours lost to the pool's failures: rate x hours held x
  // what one failure loses (progress since the last checkpoint, detection,
  // the relaunch's start-up); plus oom_probability x a start-up and a step,
  // what an attempt that runs out of memory costs.
  double rework_gpu_hours = 0;
  FailureRate failure_rate;  // of this layout on the pool
  // What each failure loses in this job (LostHoursForJob): less than
  // failure_rate's measured loss in a job shorter than its attempts.
  double job_lost_hours_per_failure = 0;
  // MEASURED only: what the layout's runs cost per successful step as they
  // ran, with its band (core/plan/job_cost.h, ObservedJobCost), and this
  // plan's projection of a job as long as those runs: the projection rests
  // on them and lies in that band.
  std::optional<ObservedCost> observed;
  double projected_gpu_hours_per_successful_step_at_observed = 0;
  // The step figure is GPU-hours per successful step of runs that did not
  // report busy time: start-up and failures are in it, not added again.
  bool failures_in_step_figure = false;
  int64_t expected_cost_micros = 0;               // at the pool's internal rate
  std::optional<int64_t> list_price_cost_micros;  // brochure, for contrast
  // The rate its expected cost was priced at, micros per GPU-hour (its
  // pool's internal rate); 0 when it has no GPU-hours to read it from.
  double micros_per_gpu_hour() const {
    return expected_gpu_hours > 0
               ? static_cast<double>(expected_cost_micros) / expected_gpu_hours
               : 0;
  }
  absl::Duration expected_wall_time;
  double step_time_s = 0;  // one optimizer step: measured p50 or estimated
  Band step_time_s_band;
  // Proposed for a measurement run before the job (an unmeasured runner-up
  // worth measuring: ProposeBakeOff); never the first choice, which its job
  // measures.
  bool measure_first = false;
  EvidenceBasis basis = EvidenceBasis::kEstimated;
  int64_t evidence_runs = 0;
  Confidence confidence = Confidence::kLow;
  std::string transferred_from_recipe_key;  // when TRANSFERRED
  // When the peak memory was TRANSFERRED from the same recipe key measured
  // on another SKU: that SKU.
  std::string transferred_from_sku_id;
  // The analytic model's own figures for this configuration, before any
  // evidence or fleet calibration (to compare with what the planner says).
  double prior_peak_memory_gb = 0;
  double prior_step_time_s = 0;
  std::optional<std::string> eval_requirement;  // serve_what_you_evaluated
  // Whether an eval of this candidate's recipe key on the serving SKU and
  // precision exists (set with eval_requirement; MatchEval).
  std::optional<EvalStatus> eval_status;
  std::vector<std::string> reasons;
  std::vector<std::string> warnings;  // e.g. "over_bought: ..."
  // When it would start and finish (set by PlanWithTime).
  std::optional<CandidateTiming> timing;
  // Set when its job measures this configuration in place of the pool's
  // measured one; it then ranks at that one's value.
  std::optional<ConfigurationExploration> exploration;
};

struct Rejection {
  std::string pool_name;
  std::string sku_id;
  std::string rule;  // e.g. kCollectivesNeedFabricRule
  std::string reason;
};

// One run of the equal-settings bake-off.
struct BakeOffRun {
  std::string pool_name;
  std::string sku_id;
  int gpu_count = 0;
  // The key of the run's own recipe: the configuration chosen on its pool
  // (the bake-off's recipe_key when the request fixed the layout).
  std::string recipe_key;
  bool borderline = false;  // its fit is BORDERLINE: it may run out of memory
  // As short as the confidence it needs allows.
  int64_t steps = 0;
  // What the run is expected to cost, and what measuring it is expected to
  // save over the recipe class's expected remaining demand (the value of
  // the information), both at the pool's internal rate.
  int64_t cost_micros = 0;
  int64_t expected_saving_micros = 0;
  // The chance that it turns out cheaper than the plan's first choice.
  double win_probability = 0;
  std::string reason;  // why it is worth its cost, in money
};

// Proposed when the leading candidates lack measured evidence: the same
// recipe key, at the same settings, on each candidate SKU.
struct BakeOff {
  std::string recipe_key;
  Recipe recipe;         // normalized: the settings to hold equal
  std::string settings;  // DescribeSettings(recipe)
  std::vector<BakeOffRun> runs;
  // The steps of this recipe class the fleet is expected to run still:
  // this request's, plus as many as its history ran (what the savings are
  // counted over).
  int64_t expected_demand_steps = 0;
  std::vector<std::string> measure;  // what each run must record
  std::optional<std::string> eval_requirement;
  std::string reason;
};

// What a plan did with the standard that governs its recipe
// (core/plan/standard.h).
struct StandardApplication {
  std::string standard_id;
  std::string pool_name;
  bool applied = false;
  std::string reason;
  bool contradicted = false;
  std::vector<std::string> contradictions;
};

struct PlanResult {
  // The normalized request, or, when the request left its configuration
  // open, the best candidate's recipe.
  std::string recipe_key;
  Recipe recipe;
  // The memory model's terms per GPU for `recipe`.
  MemoryBreakdown predicted_memory;
  std::vector<Candidate> candidates;  // ranked, best first
  std::vector<Rejection> rejections;  // in pool name order
  std::optional<BakeOff> bake_off;
  // serve_what_you_evaluated for the best candidate, and whether an eval
  // meets it.
  std::optional<std::string> eval_requirement;
  std::optional<EvalStatus> eval_status;
  // Set when an active standard governs the recipe (ApplyStandard).
  std::optional<StandardApplication> standard;
  // Set for OBJECTIVE_FINISH_BY_DEADLINE (PlanWithTime).
  std::optional<DeadlineVerdict> deadline;
};

}  // namespace placement::core

#endif  // PLACEMENT_CORE_PLAN_PLAN_TYPES_H_
