#ifndef PLACEMENT_CORE_PLAN_RANKING_H_
#define PLACEMENT_CORE_PLAN_RANKING_H_

#include <optional>
#include <vector>

#include "core/plan/plan_types.h"

namespace placement::core {

// Ranking currency: GPU-hours per successful step (failures and retries
// included) x the pool's internal rate for kLowestCost, expected wall time
// for kShortestTime. For kLowestCost a BORDERLINE candidate ranks by its
// value with its risk of running out of memory priced in (RiskPricedValue,
// against the candidate the job would fall back to: RiskFallback), so it
// goes first only where that risk is worth taking, and at equal value FITS
// goes first. Where the same configuration is BORDERLINE on a card with
// more memory (the same recipe key and peak band: its risk nested in this
// one's), the job would go there first, and the risk counts against that
// route where it is cheaper than the fallback alone; for the other objectives
// FITS ranks before BORDERLINE. An ESTIMATED or TRANSFERRED candidate is ranked
// at its pessimistic edge (the upper step-time band), a MEASURED one at its
// measured figure; a candidate whose job measures another configuration of
// a pool with a measured one (Candidate::exploration) at the measured one's
// value, what the pool is worth without it. Ties broken by the other
// objective's figure, then by pool name, so the result is deterministic.
// List price is reported, never ranked on.

// The ranking value of a candidate for `objective`: cost or wall time,
// at the upper step-time band unless MEASURED. Lower is better.
double RankingValue(const Candidate& candidate, Objective objective);

// What `candidate`'s pool is worth to a plan: where its job explores another
// configuration (Candidate::exploration), the measured one's value, what the
// pool is known to cost (the explored estimate is not yet evidence);
// otherwise `own_value`, the candidate's own figure. The ranking and the
// bake-off's first choice both read a pool through it.
double PoolValue(const Candidate& candidate, double own_value);

// The value of a BORDERLINE candidate with its risk priced in: with its
// oom_probability p the job does not run there and goes to the fallback
// (RiskFallback), whose value is `fallback_value`, after the attempt the
// out-of-memory lost (a start-up and a step, startup_gpu_hours +
// step_gpu_hours at its rate: a); so (1 - p) x its own value + p x
// fallback_value + p^2 x a (its own value counts the attempt at p x a,
// which the mix pays only on the runs that fit). Its own value for a FITS
// candidate, or when there is no fallback (nullopt).
double RiskPricedValue(const Candidate& candidate, double value,
                       std::optional<double> fallback_value);

// Whether `objective` prices a BORDERLINE candidate's risk of running out
// of memory (RiskPricedValue) instead of ranking it after every FITS one:
// kLowestCost, whose currency is money. Under the objectives of time an
// attempt lost costs the time they are about, and FITS comes first.
bool PricesOutOfMemoryRisk(Objective objective);

// Where a job goes when a BORDERLINE candidate of `candidates` runs out of
// memory, the one its risk is priced against: the FITS one of the lowest
// RankingValue; with none FITS, the one least likely to run out of memory
// (lowest oom_probability, then lowest value), whose own risk is then the
// floor every other one is held to. nullptr when `candidates` is empty.
const Candidate* RiskFallback(const std::vector<const Candidate*>& candidates,
                              Objective objective);

// Whether `a` and `b` are the same configuration of the same pool.
bool SameConfiguration(const Candidate& a, const Candidate& b);

// Sorts (see above), sets rank, and says in the reasons when an unmeasured
// candidate ranks above a measured one (it still wins at its pessimistic
// edge) or after one it would beat on its optimistic estimate, and when a
// BORDERLINE one ranks above its fallback. `fallback` is where a job goes
// should a BORDERLINE candidate run out of memory (the plan's RiskFallback
// over every configuration of every pool); when null, RiskFallback of
// `candidates`.
void RankCandidates(Objective objective, std::vector<Candidate>* candidates,
                    const Candidate* fallback = nullptr);

}  // namespace placement::core

#endif  // PLACEMENT_CORE_PLAN_RANKING_H_
