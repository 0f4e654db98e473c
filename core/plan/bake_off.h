#ifndef PLACEMENT_CORE_PLAN_BAKE_OFF_H_
#define PLACEMENT_CORE_PLAN_BAKE_OFF_H_

#include <optional>
#include <vector>

#include "core/plan/plan_types.h"

namespace placement::core {

// At most this many measurement runs in one bake-off: the one worth the
// most, and one more if it is worth its cost too.
inline constexpr int kMaxMeasurementRuns = 2;

// A measurement run is proposed when it is expected to save more than this
// many times what it costs. Its saving is itself an estimate: the demand
// still to come is extrapolated from the recipe class's past, the band it
// reads the candidate's cost with is calibrated on other recipes, and the
// run delays the job; the run's cost is nearly certain. Measured in the
// fleet replay's nine worlds (docs/DECISIONS.md, "A measurement must save
// twice its cost"): 1 (break-even) spent 1.021 of hindsight, 1.5 1.019, 2
// 1.018, 3 1.020.
inline constexpr double kMeasurementHurdle = 2;

// The bake-off over ranked `candidates`, by the value of information: an
// unmeasured candidate other than the first is proposed for a short run
// when what measuring it is expected to save over `demand_steps` (this
// request's steps and the recipe class's expected remaining demand) is
// more than kMeasurementHurdle times what the run costs, and never when it
// cannot beat the first even at its optimistic edge. The first candidate is
// never proposed, BORDERLINE or not: the job itself measures it (should it
// run out of memory at its first steps, it loses what a short run would
// have, priced into its rank by RiskPricedValue). Flags the proposed candidates
// measure_first and explains, in money, why each run is or is not worth it.
// nullopt when nothing is worth measuring.
std::optional<BakeOff> ProposeBakeOff(const PlanRequest& request,
                                      int64_t demand_steps,
                                      std::vector<Candidate>* candidates);

}  // namespace placement::core

#endif  // PLACEMENT_CORE_PLAN_BAKE_OFF_H_
