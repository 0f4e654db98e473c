#include "core/plan/ranking.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <tuple>

#include "absl/strings/str_format.h"
#include "absl/time/time.h"
#include "core/check.h"
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

std::string DescribeValue(double value, Objective objective) {
  if (objective == Objective::kShortestTime) {
    return absl::FormatDuration(absl::Seconds(std::round(value)));
  }
  return absl::StrFormat("%.2f", value / 1e6);
}

// Why a BORDERLINE candidate ranked above `fits`, the best FITS one: its
// risk of running out of memory, priced against it, leaves it cheaper.
// (With the risk priced as a mix of the two values, one that ranks after it
// is dearer on its own too, and needs no word.)
void ExplainRiskPricing(const Candidate& fits, double fits_value,
                        Objective objective, Candidate* c) {
  const double own = RankingValue(*c, objective);
  c->reasons.push_back(absl::StrFormat(
      "%s: BORDERLINE, ranks above FITS pool %s: with its %.0f%% chance of "
      "running out of memory priced in (the job then goes to %s) it counts "
      "at %s (%s on its own) against %s",
      kFitWithoutOffloadRule, fits.pool_name, 100 * c->oom_probability,
      fits.pool_name,
      DescribeValue(RiskPricedValue(*c, own, fits_value), objective),
      DescribeValue(own, objective), DescribeValue(fits_value, objective)));
}

}  // namespace

double RankingValue(const Candidate& c, Objective objective) {
  PLACEMENT_DCHECK(c.step_time_s_band.low <= c.step_time_s_band.high,
                   "a step-time band's low edge is above its high edge");
  const double nominal = NominalValue(c, objective);
  if (Measured(c) || c.step_time_s <= 0) return nominal;
  return nominal * c.step_time_s_band.high / c.step_time_s;
}

double RiskPricedValue(const Candidate& c, double value,
                       std::optional<double> fits_value) {
  if (c.fit != Fit::kBorderline || !fits_value.has_value()) return value;
  const double p = std::clamp(c.oom_probability, 0.0, 1.0);
  return (1 - p) * value + p * *fits_value;
}

bool PricesOutOfMemoryRisk(Objective objective) {
  return objective == Objective::kLowestCost;
}

std::optional<double> BestFitsValue(
    const std::vector<const Candidate*>& candidates, Objective objective) {
  std::optional<double> best;
  for (const Candidate* c : candidates) {
    if (c->fit != Fit::kFits) continue;
    const double v = RankingValue(*c, objective);
    if (!best.has_value() || v < *best) best = v;
  }
  return best;
}

void RankCandidates(Objective objective, std::vector<Candidate>* candidates) {
  const bool by_time = objective == Objective::kShortestTime;
  const bool risk_priced = PricesOutOfMemoryRisk(objective);
  std::optional<double> fits_value;
  if (risk_priced) {
    std::vector<const Candidate*> all;
    all.reserve(candidates->size());
    for (const Candidate& c : *candidates) all.push_back(&c);
    fits_value = BestFitsValue(all, objective);
  }
  auto key = [&](const Candidate& c) {
    return std::make_tuple(
        !risk_priced && c.fit != Fit::kFits,
        RiskPricedValue(c, RankingValue(c, objective), fits_value),
        c.fit != Fit::kFits,
        by_time ? static_cast<double>(c.expected_cost_micros)
                : absl::ToDoubleSeconds(c.expected_wall_time),
        c.pool_name);
  };
  std::stable_sort(
      candidates->begin(), candidates->end(),
      [&](const Candidate& a, const Candidate& b) { return key(a) < key(b); });
  const char* what = by_time ? "wall time" : "cost";
  // The best FITS candidate is the first FITS one ranked; the BORDERLINE
  // ones ranked before it say why.
  size_t first_fits = 0;
  while (first_fits < candidates->size() &&
         (*candidates)[first_fits].fit != Fit::kFits) {
    ++first_fits;
  }
  for (size_t i = 0; i < candidates->size(); ++i) {
    Candidate& c = (*candidates)[i];
    c.rank = static_cast<int>(i) + 1;
    if (fits_value.has_value() && i < first_fits &&
        first_fits < candidates->size()) {
      ExplainRiskPricing((*candidates)[first_fits], *fits_value, objective, &c);
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
