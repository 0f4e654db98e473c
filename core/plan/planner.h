#ifndef PLACEMENT_CORE_PLAN_PLANNER_H_
#define PLACEMENT_CORE_PLAN_PLANNER_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/evidence/evidence.h"
#include "core/evidence/fleet_model.h"
#include "core/field_violation.h"
#include "core/models/memory_model.h"
#include "core/plan/bake_off.h"
#include "core/plan/plan_types.h"
#include "core/plan/ranking.h"
#include "core/plan/rules.h"
#include "core/pool.h"
#include "core/recipe.h"
#include "core/sku.h"

namespace placement::core {

// The request types (PlanRequest, Candidate, PlanResult...) are in
// core/plan/plan_types.h; ranking in core/plan/ranking.h; the bake-off in
// core/plan/bake_off.h. Fit and Band (the fit verdicts and estimate bands)
// are in core/models/fit.h.

// The most optimizer steps a request may ask for: far beyond any fine-tune,
// and small enough that GPU-hours and costs stay finite figures.
inline constexpr int64_t kMaxTotalSteps = 1'000'000'000'000;

// Places a fine-tune: every pool ends up either a ranked candidate or a
// rejection naming the rule. Validates the request (ValidatePlanRequest),
// then plans it (PlanValidatedRequest).
//
// The pipeline: each pool, in name order, is evaluated (EvaluatePool, in
// planner.cc): the configurations the request leaves open are enumerated
// (EnumerateConfigurations) and each is checked by the rules and estimated
// (EvaluateConfiguration); the best viable one is kept
// (ChooseConfiguration) or, if none is viable, the rejection of the most
// relieved configuration (least memory per GPU) names the rule. Then
// MarkOverBought, RankCandidates (core/plan/ranking.h: the ranking currency,
// FITS before BORDERLINE, an unmeasured candidate at its pessimistic edge,
// ties by pool name) and ProposeBakeOff (core/plan/bake_off.h).
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

// Plan for a request whose ValidatePlanRequest is empty (a caller that
// validated it already, with its own checks beside, such as the service):
// the same result as Plan without validating again. NOT_FOUND for an
// unknown model.
absl::StatusOr<PlanResult> PlanValidatedRequest(
    const PlanRequest& request, const std::vector<Pool>& pools,
    const std::vector<GpuSku>& skus, const EvidenceSource& evidence,
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

// Violations of a request (recipe, total steps up to kMaxTotalSteps,
// constraints), paths like "recipe.lora_rank" and "total_steps". Empty when
// valid.
FieldViolations ValidatePlanRequest(const PlanRequest& request);

}  // namespace placement::core

#endif  // PLACEMENT_CORE_PLAN_PLANNER_H_
