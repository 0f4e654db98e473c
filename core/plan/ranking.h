#ifndef PLACEMENT_CORE_PLAN_RANKING_H_
#define PLACEMENT_CORE_PLAN_RANKING_H_

#include <vector>

#include "core/plan/plan_types.h"

namespace placement::core {

// Ranking currency: GPU-hours per successful step (failures and retries
// included) x the pool's internal rate for kLowestCost, expected wall time
// for kShortestTime. FITS ranks before BORDERLINE. An ESTIMATED or
// TRANSFERRED candidate is ranked at its pessimistic edge (the upper
// step-time band), a MEASURED one at its measured figure. Ties broken by the
// other objective's figure, then by pool name, so the result is
// deterministic. List price is reported, never ranked on.

// The ranking value of a candidate for `objective`: cost or wall time,
// at the upper step-time band unless MEASURED. Lower is better.
double RankingValue(const Candidate& candidate, Objective objective);

// Sorts (see above), sets rank, and says in the reasons when an unmeasured
// candidate ranks above a measured one (it still wins at its pessimistic
// edge) or after one it would beat on its optimistic estimate.
void RankCandidates(Objective objective, std::vector<Candidate>* candidates);

}  // namespace placement::core

#endif  // PLACEMENT_CORE_PLAN_RANKING_H_
