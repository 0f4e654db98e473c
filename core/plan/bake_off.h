#ifndef PLACEMENT_CORE_PLAN_BAKE_OFF_H_
#define PLACEMENT_CORE_PLAN_BAKE_OFF_H_

#include <optional>
#include <vector>

#include "core/plan/plan_types.h"

namespace placement::core {

// How many leading candidates must be MEASURED before no bake-off is
// proposed.
inline constexpr int kLeadingCandidates = 3;

// The bake-off over ranked `candidates`: every BORDERLINE candidate and
// every unmeasured one among the kLeadingCandidates first, one run per (SKU,
// recipe key); flags them measure_first. Its recipe is that of the first
// candidate flagged. nullopt when there is nothing to measure.
std::optional<BakeOff> ProposeBakeOff(const PlanRequest& request,
                                      std::vector<Candidate>* candidates);

}  // namespace placement::core

#endif  // PLACEMENT_CORE_PLAN_BAKE_OFF_H_
