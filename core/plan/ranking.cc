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

}  // namespace

double RankingValue(const Candidate& c, Objective objective) {
  PLACEMENT_DCHECK(c.step_time_s_band.low <= c.step_time_s_band.high,
                   "a step-time band's low edge is above its high edge");
  const double nominal = NominalValue(c, objective);
  if (Measured(c) || c.step_time_s <= 0) return nominal;
  return nominal * c.step_time_s_band.high / c.step_time_s;
}

void RankCandidates(Objective objective, std::vector<Candidate>* candidates) {
  const bool by_time = objective == Objective::kShortestTime;
  auto key = [&](const Candidate& c) {
    return std::make_tuple(c.fit != Fit::kFits, RankingValue(c, objective),
                           by_time
                               ? static_cast<double>(c.expected_cost_micros)
                               : absl::ToDoubleSeconds(c.expected_wall_time),
                           c.pool_name);
  };
  std::stable_sort(
      candidates->begin(), candidates->end(),
      [&](const Candidate& a, const Candidate& b) { return key(a) < key(b); });
  const char* what = by_time ? "wall time" : "cost";
  for (size_t i = 0; i < candidates->size(); ++i) {
    Candidate& c = (*candidates)[i];
    c.rank = static_cast<int>(i) + 1;
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
