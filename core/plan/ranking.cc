#include "core/plan/ranking.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/strings/str_format.h"
#include "absl/time/time.h"
#include "core/check.h"
#include "core/plan/configuration_search.h"
#include "core/plan/rules.h"

namespace placement::core {
namespace {

bool Measured(const Candidate& c) {
  return c.basis == EvidenceBasis::kMeasured;
}

double NominalValue(const Candidate& c, Objective objective) {
  return objective == Objective::kShortestTime
             ? absl::ToDoubleSeconds(c.expected_wall_time)
             : static_cast<double>(c.expected_cost_micros);
}

// What the attempt an out-of-memory loses (a start-up and a step) costs at
// the candidate's rate: 0 where its cost is not broken down.
double OutOfMemoryAttemptValue(const Candidate& c) {
  return (c.startup_gpu_hours + c.step_gpu_hours) * c.micros_per_gpu_hour();
}

std::string DescribeValue(double value, Objective objective) {
  if (objective == Objective::kShortestTime) {
    return absl::FormatDuration(absl::Seconds(std::round(value)));
  }
  return absl::StrFormat("%.2f", value / 1e6);
}

// Where a BORDERLINE candidate's job goes should it run out of memory, and
// what that is worth (OutOfMemoryFallbackValue).
struct OutOfMemoryFallback {
  double value = 0;
  // Another BORDERLINE candidate tried first (empty: straight to the plan's
  // fallback), its card, and the chance it fits given that the candidate
  // did not.
  std::string nested_pool;
  std::string nested_sku;
  double fits_given_oom = 0;
};

// Whether `wider`'s risk of running out of memory is nested in `c`'s: the
// same configuration (recipe key) with the same peak band, so the same
// peak, on a card with more usable memory (a lower risk). Then a run that
// does not fit on `wider` would not have fitted on `c` either, and
// P(out of memory on wider | out of memory on c) = p_wider / p_c.
bool RiskNestedIn(const Candidate& wider, const Candidate& c) {
  constexpr double kSameGb = 1e-6;
  return wider.fit == Fit::kBorderline && !SameConfiguration(wider, c) &&
         !c.recipe_key.empty() && wider.recipe_key == c.recipe_key &&
         c.peak_memory_gb_band.high > 0 &&
         std::abs(wider.peak_memory_gb_band.low - c.peak_memory_gb_band.low) <
             kSameGb &&
         std::abs(wider.peak_memory_gb_band.high - c.peak_memory_gb_band.high) <
             kSameGb &&
         wider.oom_probability < c.oom_probability;
}

// A BORDERLINE candidate that runs out of memory sends its job to the
// plan's fallback (`fallback_value`), unless the same configuration is
// BORDERLINE on a card with more memory: the job goes there first and fits
// with probability 1 - p_wider / p_c, else goes on to the fallback. The
// cheaper of the two routes (the candidates' ranking values).
OutOfMemoryFallback OutOfMemoryFallbackValue(
    const Candidate& c, const std::vector<Candidate>& candidates,
    double fallback_value, Objective objective) {
  OutOfMemoryFallback best;
  best.value = fallback_value;
  if (c.fit != Fit::kBorderline || !(c.oom_probability > 0)) return best;
  for (const Candidate& wider : candidates) {
    if (!RiskNestedIn(wider, c)) continue;
    const double q =
        std::clamp(wider.oom_probability / c.oom_probability, 0.0, 1.0);
    const double value =
        (1 - q) * RankingValue(wider, objective) + q * fallback_value;
    if (value < best.value) {
      best = {value, wider.pool_name, wider.sku_id, 1 - q};
    }
  }
  return best;
}

// Why a BORDERLINE candidate ranks above `fallback`, where the job would go
// should it run out of memory (by way of `route.nested_pool` where there
// is one): its risk, priced against it, leaves it cheaper. (With the risk
// priced as a mix of the two values, one that ranks after it is dearer on
// its own too, and needs no word.)
void ExplainRiskPricing(const Candidate& fallback,
                        const OutOfMemoryFallback& route, Objective objective,
                        Candidate* c) {
  const double own = RankingValue(*c, objective);
  const double fallback_value = RankingValue(fallback, objective);
  std::string via;
  if (!route.nested_pool.empty()) {
    via = absl::StrFormat(
        "first to pool %s, the same configuration on %s's larger memory, "
        "where it fits %.0f%% of the times it would not fit here; else ",
        route.nested_pool, route.nested_sku, 100 * route.fits_given_oom);
  }
  c->reasons.push_back(absl::StrFormat(
      "%s: BORDERLINE, ranks above %s pool %s: with its %.0f%% chance of "
      "running out of memory priced in (the job then goes %sto %s, %s) it "
      "counts at %s (%s on its own) against %s",
      kFitWithoutOffloadRule,
      fallback.fit == Fit::kFits ? "FITS" : "the likeliest to fit, BORDERLINE,",
      fallback.pool_name, 100 * c->oom_probability, via, fallback.pool_name,
      DescribeConfiguration(fallback.recipe),
      DescribeValue(RiskPricedValue(*c, own, route.value), objective),
      DescribeValue(own, objective), DescribeValue(fallback_value, objective)));
}

// Sorts `candidates` by the ranking's key (RankCandidates), a BORDERLINE
// one's risk priced against its route should it run out of memory
// (OutOfMemoryFallbackValue, where `fallback_value` is set: the objective
// prices that risk). Returns the routes, in the sorted order.
std::vector<OutOfMemoryFallback> SortByRankingKey(
    Objective objective, std::optional<double> fallback_value,
    std::vector<Candidate>* candidates) {
  const bool by_time = objective == Objective::kShortestTime;
  const bool risk_priced = PricesOutOfMemoryRisk(objective);
  const std::vector<Candidate>& given = *candidates;
  std::vector<OutOfMemoryFallback> routes(given.size());
  if (fallback_value.has_value()) {
    for (size_t i = 0; i < given.size(); ++i) {
      routes[i] =
          OutOfMemoryFallbackValue(given[i], given, *fallback_value, objective);
    }
  }
  auto key = [&](size_t i) {
    const Candidate& c = given[i];
    const std::optional<double> priced_against =
        fallback_value.has_value() ? std::optional<double>(routes[i].value)
                                   : std::nullopt;
    // A pool whose job measures a configuration ranks as its measured one.
    const bool fits = c.exploration.has_value() ? c.exploration->measured_fits
                                                : c.fit == Fit::kFits;
    return std::make_tuple(
        !risk_priced && !fits,
        PoolValue(
            c, RiskPricedValue(c, RankingValue(c, objective), priced_against)),
        !fits,
        by_time ? static_cast<double>(c.expected_cost_micros)
                : absl::ToDoubleSeconds(c.expected_wall_time),
        c.pool_name);
  };
  std::vector<size_t> order(given.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return key(a) < key(b); });
  std::vector<Candidate> sorted;
  std::vector<OutOfMemoryFallback> sorted_routes;
  sorted.reserve(order.size());
  sorted_routes.reserve(order.size());
  for (size_t i : order) {
    sorted.push_back(std::move((*candidates)[i]));
    sorted_routes.push_back(std::move(routes[i]));
  }
  *candidates = std::move(sorted);
  return sorted_routes;
}

}  // namespace

bool SameConfiguration(const Candidate& a, const Candidate& b) {
  return a.pool_name == b.pool_name && a.recipe_key == b.recipe_key;
}

double RankingValue(const Candidate& c, Objective objective) {
  PLACEMENT_DCHECK(c.step_time_s_band.low <= c.step_time_s_band.high,
                   "a step-time band's low edge is above its high edge");
  const double nominal = NominalValue(c, objective);
  if (Measured(c) || c.step_time_s <= 0) return nominal;
  return nominal * c.step_time_s_band.high / c.step_time_s;
}

double PoolValue(const Candidate& c, double own_value) {
  return c.exploration.has_value() ? c.exploration->measured_value_micros
                                   : own_value;
}

double RiskPricedValue(const Candidate& c, double value,
                       std::optional<double> fallback_value) {
  if (c.fit != Fit::kBorderline || !fallback_value.has_value()) return value;
  const double p = std::clamp(c.oom_probability, 0.0, 1.0);
  // Its own value counts the attempt an out-of-memory loses at p of its
  // price (rework_gpu_hours), and the mix below pays that share only on
  // the (1 - p) of runs that fit; a run that does not fit pays the attempt
  // whole before it moves: (1 - p) (own - p a) + p (a + fallback)
  // = (1 - p) own + p fallback + p^2 a. Without the last term a candidate
  // sure to run out of memory would rank first whenever it was cheaper
  // than its fallback on its own.
  return (1 - p) * value + p * *fallback_value +
         p * p * OutOfMemoryAttemptValue(c);
}

bool PricesOutOfMemoryRisk(Objective objective) {
  return objective == Objective::kLowestCost;
}

const Candidate* RiskFallback(const std::vector<const Candidate*>& candidates,
                              Objective objective) {
  // The key to minimize: FITS first by value; with none, the least risk.
  auto key = [&](const Candidate* c) {
    const bool fits = c->fit == Fit::kFits;
    return std::make_tuple(fits ? 0 : 1, fits ? 0.0 : c->oom_probability,
                           RankingValue(*c, objective));
  };
  const Candidate* best = nullptr;
  for (const Candidate* c : candidates) {
    if (best == nullptr || key(c) < key(best)) best = c;
  }
  return best;
}

void RankCandidates(Objective objective, std::vector<Candidate>* candidates,
                    const Candidate* fallback) {
  const bool by_time = objective == Objective::kShortestTime;
  const bool risk_priced = PricesOutOfMemoryRisk(objective);
  std::optional<Candidate> own_fallback;
  if (risk_priced && fallback == nullptr) {
    std::vector<const Candidate*> all;
    all.reserve(candidates->size());
    for (const Candidate& c : *candidates) all.push_back(&c);
    if (const Candidate* f = RiskFallback(all, objective)) own_fallback = *f;
    fallback = own_fallback ? &*own_fallback : nullptr;
  }
  std::optional<double> fallback_value;
  if (risk_priced && fallback != nullptr) {
    fallback_value = RankingValue(*fallback, objective);
  }
  const std::vector<OutOfMemoryFallback> routes =
      SortByRankingKey(objective, fallback_value, candidates);
  const char* what = by_time ? "wall time" : "cost";
  for (size_t i = 0; i < candidates->size(); ++i) {
    Candidate& c = (*candidates)[i];
    c.rank = static_cast<int>(i) + 1;
    // One whose job measures a configuration says why in its own reasons.
    if (c.exploration.has_value()) continue;
    // A BORDERLINE candidate cheaper on its own than its fallback ranks
    // above it, its risk priced in: it says so.
    if (fallback_value.has_value() && c.fit == Fit::kBorderline &&
        !SameConfiguration(c, *fallback) &&
        RankingValue(c, objective) < *fallback_value) {
      ExplainRiskPricing(*fallback, routes[i], objective, &c);
    }
    if (Measured(c)) continue;
    const double nominal = NominalValue(c, objective);
    const double pessimistic = RankingValue(c, objective);
    // The first measured candidate below it, and the last one above it that
    // it would beat on its optimistic estimate.
    for (size_t j = i + 1; j < candidates->size(); ++j) {
      const Candidate& m = (*candidates)[j];
      if (!Measured(m) || m.fit != c.fit) continue;
      c.reasons.push_back(absl::StrFormat(
          "%s: %s ranks above MEASURED pool %s because it still wins at its "
          "pessimistic edge (%s %s at the upper step-time band vs %s "
          "measured)",
          kEvidenceBeatsEstimatesRule, EvidenceBasisName(c.basis), m.pool_name,
          what, DescribeValue(pessimistic, objective),
          DescribeValue(NominalValue(m, objective), objective)));
      break;
    }
    // The measured candidate ranked just above it that its optimistic
    // estimate would beat, if any (one reason, not one per measured pool).
    for (size_t j = i; j-- > 0;) {
      const Candidate& m = (*candidates)[j];
      if (!Measured(m) || m.fit != c.fit) continue;
      const double measured = NominalValue(m, objective);
      if (nominal >= measured) break;
      c.reasons.push_back(absl::StrFormat(
          "%s: ranks after MEASURED pool %s: %s only by its optimistic "
          "estimate (%s %s vs %s measured; %s at the upper step-time band)",
          kEvidenceBeatsEstimatesRule, m.pool_name,
          by_time ? "faster" : "cheaper", what,
          DescribeValue(nominal, objective), DescribeValue(measured, objective),
          DescribeValue(pessimistic, objective)));
      break;
    }
  }
}

}  // namespace placement::core
