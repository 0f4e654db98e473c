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
#include "core/plan/configuration_evaluation.h"
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
// a BORDERLINE candidate's risk priced for cost and FITS first for time, an
// unmeasured candidate at its pessimistic edge, ties by pool name) and
// ProposeBakeOff (core/plan/bake_off.h).
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

// --- The steps of Plan, each testable alone (evaluating and choosing one
// configuration: core/plan/configuration_evaluation.h). ---

// Adds over_bought warnings; `skus` resolves each candidate's card.
void MarkOverBought(const std::vector<GpuSku>& skus,
                    std::vector<Candidate>* candidates);

// Sets eval_status on each candidate that has an eval_requirement: whether
// `evidence` holds an eval of the candidate's recipe key on the request's
// serving SKU, in its serving precision (the candidate's training precision
// when the request leaves it unspecified), that passes the eval criteria
// declared for the candidate's pool (`pools`, by name; CriteriaFor).
void MarkEvalStatus(const PlanRequest& request, const std::vector<Pool>& pools,
                    const EvidenceSource& evidence,
                    std::vector<Candidate>* candidates);

// Violations of a request (recipe, total steps up to kMaxTotalSteps,
// constraints), paths like "recipe.lora_rank" and "total_steps". Empty when
// valid.
FieldViolations ValidatePlanRequest(const PlanRequest& request);

}  // namespace placement::core

#endif  // PLACEMENT_CORE_PLAN_PLANNER_H_
