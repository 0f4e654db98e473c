#ifndef PLACEMENT_CORE_PLANNER_H_
#define PLACEMENT_CORE_PLANNER_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "core/evidence.h"
#include "core/memory_model.h"
#include "core/pool.h"
#include "core/recipe.h"
#include "core/rules.h"
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

// The three fit verdicts of an estimated (or measured) peak memory per GPU
// against what a card offers.
enum class Fit {
  kUnspecified = 0,
  kFits = 1,        // the band's upper edge stays within the card
  kBorderline = 2,  // the band straddles the card: measure first
  kDoesNotFit = 3,  // the band's lower edge is beyond the card
};

// An interval an estimate is expected to fall in (low <= high).
struct Band {
  double low = 0;
  double high = 0;

  friend bool operator==(const Band&, const Band&) = default;
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
  double peak_memory_gb = 0;  // per GPU: measured p95 when measured
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
  std::string transferred_from_recipe_key;      // when TRANSFERRED
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
  std::string recipe_key;
  Recipe recipe;  // normalized
  // The memory model's terms per GPU for the recipe: the same on every pool.
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
// rejection naming the rule. Ranking currency: GPU-hours per successful step
// (failures and retries included) x the pool's internal rate for
// kLowestCost, expected wall time for kShortestTime; ties broken by pool
// name, so the result is deterministic for the same inputs. List price is
// reported, never ranked on.
//
// Returns INVALID_ARGUMENT (listing the violations) when the recipe or
// total_steps is invalid and NOT_FOUND for an unknown model. Pools and SKUs
// are not validated here (the catalog did that); a pool whose SKU is not
// exactly in `skus` is rejected by exact_sku.
absl::StatusOr<PlanResult> Plan(const PlanRequest& request,
                                const std::vector<Pool>& pools,
                                const std::vector<GpuSku>& skus,
                                const EvidenceSource& evidence);

// Violations of a request (recipe and total steps), paths like
// "recipe.lora_rank" and "total_steps". Empty when valid.
FieldViolations ValidatePlanRequest(const PlanRequest& request);

}  // namespace placement::core

#endif  // PLACEMENT_CORE_PLANNER_H_
