#ifndef PLACEMENT_CORE_PLAN_CONFIGURATION_EXPLORATION_H_
#define PLACEMENT_CORE_PLAN_CONFIGURATION_EXPLORATION_H_

// A pool's configuration that its job measures. Once one configuration of
// a recipe is measured on a pool, every other one is read at its
// pessimistic edge against it, so a cheaper configuration that was never
// run (activation checkpointing off, where a deadline's job turned it on)
// is never run there, and never measured: a bake-off cannot measure it
// either, since its runs are other pools' candidates. Where measuring it is
// worth more to the recipe class's remaining demand than it may cost this
// job, the job runs it: its own run is the measurement, as a first choice's
// always is.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "core/plan/configuration_evaluation.h"
#include "core/plan/plan_types.h"

namespace placement::core {

// A job measures no configuration likelier to run out of memory than to
// run: its own run is the measurement, and a job that fails at its start is
// the team's delay, not only the attempt's cost. In the fleet replay's nine
// worlds every configuration explored at a risk of 78-88% ran out of memory
// (docs/DECISIONS.md, "A configuration the job measures").
inline constexpr double kMaxExplorationOomProbability = 0.5;

struct ExploredConfiguration {
  size_t index = 0;  // into the pool's outcomes
  ConfigurationExploration exploration;
};

// For the pool's `outcomes` and ChooseConfiguration's `chosen` under
// kLowestCost: when `chosen` is MEASURED, the viable configuration over no
// more GPUs that is not MEASURED whose measurement is worth the most, if
// any is worth kMeasurementHurdle times what it may cost this job. What it
// may cost: its value at its pessimistic edge, its risk of running out of
// memory priced against `fallback_value` (the plan's fallback; the measured
// configuration when not given), less the measured configuration's value.
// What it is expected to save: its chance to fit times E[max(0, measured -
// its cost)] over its cost belief (CostBeliefOf), for each job of the class
// still expected, `class_history_steps` / `total_steps` (a class asked for
// n times is likely to be asked for about as often again; its first job
// explores nothing). Never one that cannot beat the measured one at its
// optimistic edge, nor one whose risk of running out of memory is over
// kMaxExplorationOomProbability, nor one over more GPUs than the measured
// one: more GPUs ask more of the pool's queue and quota and, across PCIe,
// expose the job to collective timeouts (the guide's cautionary case);
// as many or fewer ask less.
std::optional<ExploredConfiguration> ExploreConfiguration(
    const std::vector<ConfigurationOutcome>& outcomes, size_t chosen,
    std::optional<double> fallback_value, int64_t total_steps,
    int64_t class_history_steps);

}  // namespace placement::core

#endif  // PLACEMENT_CORE_PLAN_CONFIGURATION_EXPLORATION_H_
