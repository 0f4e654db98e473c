#ifndef PLACEMENT_CORE_PLAN_PLANNER_H_
#define PLACEMENT_CORE_PLAN_PLANNER_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "core/evidence/evidence.h"
#include "core/evidence/fleet_model.h"
#include "core/models/fit.h"
#include "core/models/memory_model.h"
#include "core/plan/rules.h"
#include "core/pool.h"
#include "core/recipe.h"
#include "core/sku.h"

namespace placement::core {

enum class Objective {
  kUnspecified = 0,  // treated as kLowestCost
  kLowestCost = 1,
  kShortestTime = 2,
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
  // a plan.
  std::optional<absl::Duration> deadline;
  Objective objective = Objective::kLowestCost;
  double headroom_fraction = kDefaultHeadroomFraction;
};

struct PlanRequest {
  Recipe recipe;
  int64_t total_steps = 0;  // optimizer steps the job must complete
  PlanConstraints constraints;
  std::optional<ServingTarget> serving;
  std::string team;
};

// Fit and Band (the fit verdicts and estimate bands) are in core/models/fit.h.

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
  double headroom_gb = 0;     // card memory - peak_memory_gb
  double gpu_hours_per_1k_successful_steps = 0;
  double expected_gpu_hours = 0;
  int64_t expected_cost_micros = 0;               // at the pool's internal rate
  std::optional<int64_t> list_price_cost_micros;  // brochure, for contrast
  absl::Duration expected_wall_time;
  double step_time_s = 0;  // one optimizer step: measured p50 or estimated
  Band step_time_s_band;
  // Borderline fit or an unmeasured leading candidate: run it first.
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
  std::vector<std::string> reasons;
  std::vector<std::string> warnings;  // e.g. "over_bought: ..."
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
  bool borderline = false;  // in the bake-off because its fit is BORDERLINE
};

// Proposed when the leading candidates lack measured evidence: the same
// recipe key, at the same settings, on each candidate SKU.
struct BakeOff {
  std::string recipe_key;
  Recipe recipe;         // normalized: the settings to hold equal
  std::string settings;  // DescribeSettings(recipe)
  std::vector<BakeOffRun> runs;
  std::vector<std::string> measure;  // what each run must record
  std::optional<std::string> eval_requirement;
  std::string reason;
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
  // serve_what_you_evaluated for the best candidate.
  std::optional<std::string> eval_requirement;
};

// How many leading candidates must be MEASURED before no bake-off is
// proposed.
inline constexpr int kLeadingCandidates = 3;

// Places a fine-tune: every pool ends up either a ranked candidate or a
// rejection naming the rule.
//
// Per pool (EvaluatePool): the configurations the request leaves open are
// enumerated (EnumerateConfigurations) and each is checked by the rules and
// estimated (EvaluateConfiguration); the best viable one is kept
// (ChooseConfiguration) or, if none is viable, the rejection of the most
// relieved configuration (least memory per GPU) names the rule. Then
// MarkOverBought, RankCandidates and ProposeBakeOff.
//
// Ranking currency: GPU-hours per successful step (failures and retries
// included) x the pool's internal rate for kLowestCost, expected wall time
// for kShortestTime. FITS ranks before BORDERLINE. An ESTIMATED or
// TRANSFERRED candidate is ranked at its pessimistic edge (the upper
// step-time band), a MEASURED one at its measured figure. Ties broken by
// pool name, so the result is deterministic. List price is reported, never
// ranked on.
//
// Returns INVALID_ARGUMENT with field violations
// (InvalidArgumentWithViolations) when the request is invalid and NOT_FOUND
// for an unknown model. Pools and SKUs are not validated here (the catalog
// did that); a pool whose SKU is not exactly in `skus` is rejected by
// exact_sku.
//
// Without evidence of the exact key on a pool's SKU nor of a nearby recipe
// there, the same key measured on another SKU of `skus` gives the peak
// memory (TRANSFERRED, naming that SKU; CrossSkuMemoryTransfer), and
// `fleet`, when given, corrects the analytic step time (FleetModel::StepTime,
// its band replacing the prior's) and scales the predicted memory of the
// recipe's framework (FleetModel::PlanMemoryScale: 1 unless enabled).
absl::StatusOr<PlanResult> Plan(const PlanRequest& request,
                                const std::vector<Pool>& pools,
                                const std::vector<GpuSku>& skus,
                                const EvidenceSource& evidence,
                                const FleetModel* fleet = nullptr);

// --- The steps of Plan, each testable alone. ---

// One configuration of the recipe on one pool, checked and estimated.
struct ConfigurationOutcome {
  Recipe recipe;  // normalized, valid
  std::string recipe_key;
  std::optional<RuleRejection> rejection;  // set: not viable
  MemoryBreakdown predicted_memory;
  FitVerdict fit;
  Candidate candidate;  // filled when viable (rank 0)
};

// Evidence a configuration is estimated from, looked up by the caller.
struct ConfigurationEvidence {
  const EvidenceStats* measured = nullptr;
  const TransferredEvidence* transferred = nullptr;
  // Used only without `measured` and `transferred`.
  const CrossSkuMemory* cross_sku = nullptr;
  const FleetStepTime* fleet_step_time = nullptr;
  // The fleet's factor on the predicted memory (without measured evidence).
  double memory_scale = 1;
};

// Checks one configuration on `pool` (quota, fabric, inter-node fabric,
// retries, fit, deadline) and estimates it; `predicted` is the memory
// model's prediction for it. Never fails. With `explain` false only the
// figures, verdicts and rule names are filled, no reason or warning text
// (the search explains only what it keeps).
ConfigurationOutcome EvaluateConfiguration(
    const PlanRequest& request, const Recipe& configuration,
    const ModelArchitecture& arch, const MemoryBreakdown& predicted,
    const Pool& pool, const GpuSku& sku, const ConfigurationEvidence& evidence,
    bool explain = true);

// The ranking value of a candidate for `objective`: cost or wall time,
// at the upper step-time band unless MEASURED. Lower is better.
double RankingValue(const Candidate& candidate, Objective objective);

// The index of the best viable outcome (a FITS one by RankingValue; else
// the BORDERLINE one with the least peak memory per GPU, the likeliest to
// run when measured; then fewer GPUs, then enumeration order), or, when none is
// viable, of the rejection to report: the configuration with the least
// predicted memory per GPU (the most relieved one), ties to more GPUs.
size_t ChooseConfiguration(const std::vector<ConfigurationOutcome>& outcomes,
                           Objective objective);

// Adds over_bought warnings; `skus` resolves each candidate's card.
void MarkOverBought(const std::vector<GpuSku>& skus,
                    std::vector<Candidate>* candidates);

// Sorts (see Plan), sets rank, and says in the reasons when an unmeasured
// candidate ranks above a measured one (it still wins at its pessimistic
// edge) or after one it would beat on its optimistic estimate.
void RankCandidates(Objective objective, std::vector<Candidate>* candidates);

// The bake-off: every BORDERLINE candidate and every unmeasured one among
// the kLeadingCandidates first, one run per (SKU, recipe key); flags them
// measure_first. nullopt when there is nothing to measure.
std::optional<BakeOff> ProposeBakeOff(const PlanRequest& request,
                                      std::vector<Candidate>* candidates);

// Violations of a request (recipe and total steps), paths like
// "recipe.lora_rank" and "total_steps". Empty when valid.
FieldViolations ValidatePlanRequest(const PlanRequest& request);

}  // namespace placement::core

#endif  // PLACEMENT_CORE_PLAN_PLANNER_H_
