#ifndef PLACEMENT_CORE_PLAN_STANDARD_PROOF_H_
#define PLACEMENT_CORE_PLAN_STANDARD_PROOF_H_

// What a standard needs before it is written ("prove the exact recipe
// before you write the standard"): measured runs of the plan's recipe key
// and layout on the standard's pool, a bake-off verdict on the planner's
// cost that names the pool the winner or within the winner's band, and the
// eval requirement met under the criteria that apply to the pool. Pure:
// PlacementService.WriteStandard reads the plan, the uploads and the evals
// and answers FAILED_PRECONDITION with what this returns.

#include <string>
#include <vector>

#include "core/plan/bake_off_verdict.h"
#include "core/plan/recorded_plan.h"
#include "core/precondition_violation.h"

namespace placement::core {

// Every missing piece of proof for a standard on `pool` from `plan`, given
// the uploads that carried it out (the pool among the plan's targets when
// it was a candidate); empty when the proof is complete. Types:
//  - POOL_NOT_A_CANDIDATE: the plan did not rank the pool;
//  - BAKE_OFF_INCOMPLETE: a proposed run has no upload of its recipe key;
//  - MEASURED_RUNS_MISSING: no run of the pool's recipe key and layout
//    kept a step on it (since the plan, or naming it);
//  - POOL_FAILED_BAKE_OFF: its runs offloaded, ran out of memory or never
//    succeeded;
//  - POOL_NOT_THE_WINNER: another pool wins beyond its band (its band's low
//    edge above the winner's high edge);
//  - EVAL_MISSING: the eval requirement is not met under the criteria that
//    apply to the pool (none stored, or short of a criterion).
std::vector<PreconditionViolation> MissingProof(
    const RecordedPlan& plan, const std::vector<BakeOffUpload>& uploads,
    const std::string& pool);

}  // namespace placement::core

#endif  // PLACEMENT_CORE_PLAN_STANDARD_PROOF_H_
