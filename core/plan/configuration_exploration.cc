#include "core/plan/configuration_exploration.h"

#include <algorithm>
#include <utility>

#include "core/plan/bake_off.h"
#include "core/plan/measurement_value.h"
#include "core/plan/ranking.h"

namespace placement::core {

std::optional<ExploredConfiguration> ExploreConfiguration(
    const std::vector<ConfigurationOutcome>& outcomes, size_t chosen,
    std::optional<double> fallback_value, int64_t total_steps,
    int64_t class_history_steps) {
  if (chosen >= outcomes.size() || outcomes[chosen].rejection ||
      total_steps <= 0 || class_history_steps <= 0) {
    return std::nullopt;
  }
  const Candidate& measured = outcomes[chosen].candidate;
  if (measured.basis != EvidenceBasis::kMeasured) return std::nullopt;
  constexpr Objective kCost = Objective::kLowestCost;
  const double measured_value =
      RiskPricedValue(measured, RankingValue(measured, kCost), fallback_value);
  const double fallback = fallback_value.value_or(measured_value);
  const double future_jobs = static_cast<double>(class_history_steps) /
                             static_cast<double>(total_steps);
  std::optional<ExploredConfiguration> best;
  double best_net = 0;
  for (size_t i = 0; i < outcomes.size(); ++i) {
    const ConfigurationOutcome& o = outcomes[i];
    if (i == chosen || o.rejection ||
        o.candidate.basis == EvidenceBasis::kMeasured) {
      continue;
    }
    const Candidate& cand = o.candidate;
    if (o.recipe.gpu_count > outcomes[chosen].recipe.gpu_count) continue;
    if (cand.fit == Fit::kBorderline &&
        cand.oom_probability > kMaxExplorationOomProbability) {
      continue;
    }
    const CostBelief belief = CostBeliefOf(cand);
    if (!(belief.optimistic < measured_value)) continue;
    const double fits = ChanceToFit(cand);
    const double premium =
        RiskPricedValue(cand, RankingValue(cand, kCost), fallback) -
        measured_value;
    const double saving =
        future_jobs * fits *
        ExpectedShortfall(measured_value, belief.median, belief.sigma);
    const double net = saving - kMeasurementHurdle * std::max(0.0, premium);
    if (!(net > best_net)) continue;
    best_net = net;
    ExploredConfiguration e;
    e.index = i;
    ConfigurationExploration& x = e.exploration;
    x.measured_recipe_key = outcomes[chosen].recipe_key;
    x.measured_value_micros = measured_value;
    x.measured_fits = measured.fit == Fit::kFits;
    x.premium_micros = premium;
    x.expected_saving_micros = saving;
    x.demand_steps = class_history_steps;
    x.win_probability =
        fits * ProbabilityBelow(measured_value, belief.median, belief.sigma);
    best = std::move(e);
  }
  return best;
}

}  // namespace placement::core
