#include "core/plan/plan_with_time.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <tuple>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "core/plan/planner.h"
#include "core/plan/ranking.h"
#include "core/queue/run_time_model.h"

namespace placement::core {
namespace {

constexpr double kZ90 = 1.2815515655446004;  // the standard normal's p90
// Points of the run's distribution added to each start draw.
constexpr int kRunPoints = 16;
constexpr double kInfinity = std::numeric_limits<double>::infinity();

bool IsTimeObjective(Objective objective) {
  return objective == Objective::kFinishByDeadline ||
         objective == Objective::kCostOfDelay;
}

std::string Span(double seconds) {
  if (!std::isfinite(seconds)) return "unknown";
  return absl::FormatDuration(absl::Seconds(std::round(seconds / 60) * 60));
}

// The run's points: a lognormal on each side of the median, its p10 and p90
// at the band's edges.
std::vector<double> RunPoints(const CandidateTiming& t) {
  std::vector<double> points;
  const double median = t.run_p50_s;
  const double low_sigma = t.run_p10_s > 0 && t.run_p10_s < median
                               ? std::log(median / t.run_p10_s) / kZ90
                               : 0;
  const double high_sigma =
      t.run_p90_s > median ? std::log(t.run_p90_s / median) / kZ90 : 0;
  for (int j = 0; j < kRunPoints; ++j) {
    const double z = InverseNormalCdf((j + 0.5) / kRunPoints);
    points.push_back(median * std::exp((z < 0 ? low_sigma : high_sigma) * z));
  }
  return points;
}

}  // namespace

FieldViolations ValidateTimeObjective(const PlanConstraints& c) {
  FieldViolations v;
  if (c.objective == Objective::kFinishByDeadline && !c.deadline.has_value()) {
    v.push_back({"constraints.deadline",
                 "is required with OBJECTIVE_FINISH_BY_DEADLINE"});
  }
  if (c.objective == Objective::kCostOfDelay) {
    if (c.delay_cost_micros_per_hour <= 0) {
      v.push_back({"constraints.delay_cost_micros_per_hour",
                   "must be positive with OBJECTIVE_COST_OF_DELAY"});
    } else if (c.delay_cost_micros_per_hour > kMaxDelayCostMicrosPerHour) {
      v.push_back({"constraints.delay_cost_micros_per_hour",
                   absl::StrCat("at most ", kMaxDelayCostMicrosPerHour)});
    }
  } else if (c.delay_cost_micros_per_hour != 0) {
    v.push_back({"constraints.delay_cost_micros_per_hour",
                 "is read only with OBJECTIVE_COST_OF_DELAY; leave it 0"});
  }
  return v;
}

CandidateTiming TimeCandidate(const Candidate& c, const PoolQueue* queue,
                              absl::Time now, absl::Duration max_age) {
  CandidateTiming t;
  const absl::Duration age =
      queue != nullptr ? now - queue->received : absl::ZeroDuration();
  const StartEstimate start = EstimateStart(queue, c.gpu_count, age, max_age);
  t.status = start.status;
  t.reason = start.reason;
  t.calibrated = start.calibrated;
  t.calibration_pits = start.calibration_pits;
  t.state_observed = start.observed;
  t.state_age = start.age;
  t.jobs_ahead = start.jobs_ahead;
  t.gpus_ahead = start.gpus_ahead;
  t.run_p50_s = absl::ToDoubleSeconds(c.expected_wall_time);
  t.run_p10_s = t.run_p90_s = t.run_p50_s;
  if (c.step_time_s > 0) {
    t.run_p10_s =
        t.run_p50_s * std::min(1.0, c.step_time_s_band.low / c.step_time_s);
    t.run_p90_s =
        t.run_p50_s * std::max(1.0, c.step_time_s_band.high / c.step_time_s);
  }
  if (!start.known()) return t;
  for (double p : kShownStartLevels) {
    t.start_quantiles.emplace_back(p, start.Quantile(p));
  }
  t.start_p10_s = start.Quantile(0.1);
  t.start_p50_s = start.Quantile(0.5);
  t.start_p90_s = start.Quantile(0.9);
  t.start_mean_s = start.mean_s;
  t.uncalibrated_start_levels_s = start.uncalibrated_levels_s;
  const std::vector<double> run = RunPoints(t);
  std::vector<double> finish;
  finish.reserve(start.delay_s.size() * run.size());
  double run_mean = 0;
  for (double r : run) run_mean += r / static_cast<double>(run.size());
  for (double s : start.delay_s) {
    for (double r : run) finish.push_back(s + r);
  }
  std::sort(finish.begin(), finish.end());
  t.finish_p10_s = QuantileOfSorted(finish, 0.1);
  t.finish_p50_s = QuantileOfSorted(finish, 0.5);
  t.finish_p90_s = QuantileOfSorted(finish, 0.9);
  t.finish_mean_s = t.start_mean_s + run_mean;
  t.finish_draws_s = std::move(finish);
  return t;
}

double CandidateTiming::ChanceToFinishWithin(double seconds) const {
  if (!known() || finish_draws_s.empty()) return 0;
  const auto within =
      std::upper_bound(finish_draws_s.begin(), finish_draws_s.end(), seconds) -
      finish_draws_s.begin();
  return static_cast<double>(within) /
         static_cast<double>(finish_draws_s.size());
}

namespace {

double DeadlineSeconds(const PlanRequest& request) {
  return absl::ToDoubleSeconds(*request.constraints.deadline);
}

bool MeetsDeadline(const Candidate& c, double deadline_s) {
  return c.timing.has_value() && c.timing->known() &&
         c.timing->finish_p90_s <= deadline_s;
}

// Lower is better: what the objective ranks by.
using TimeKey = std::tuple<bool, bool, double, double, double>;

TimeKey KeyOf(const PlanRequest& request, const Candidate& c) {
  const bool fits = c.fit == Fit::kFits;
  const bool known = c.timing.has_value() && c.timing->known();
  const double cost = RankingValue(c, Objective::kLowestCost);
  if (request.constraints.objective == Objective::kFinishByDeadline) {
    const bool meets = MeetsDeadline(c, DeadlineSeconds(request));
    // FITS before BORDERLINE, as the planner ranks them for time (a
    // BORDERLINE one may run out of memory: its finish is not one to
    // promise); then those that meet it by cost; the others by their chance
    // to meet it all the same (the share of their forecast finishes within
    // it), then by how early they finish. A pool whose forecast has a long tail
    // may still be the likelier bet than one that is sure to be a little late.
    if (meets) return {!fits, false, cost, cost, cost};
    const double chance =
        known ? c.timing->ChanceToFinishWithin(DeadlineSeconds(request)) : 0;
    return {!fits, true, -chance, known ? c.timing->finish_p90_s : kInfinity,
            cost};
  }
  const double delay_cost =
      known ? static_cast<double>(
                  request.constraints.delay_cost_micros_per_hour) *
                  c.timing->finish_mean_s / 3600
            : 0;
  return {!fits, !known, cost + delay_cost, cost, 0};
}

void ExplainDeadline(double deadline_s, Candidate* c) {
  const CandidateTiming& t = *c->timing;
  if (!t.known()) {
    c->warnings.push_back(
        absl::StrCat("deadline: cannot be shown to finish within ",
                     Span(deadline_s), ": ", t.reason));
    return;
  }
  const std::string finish =
      absl::StrCat("finishes within ", Span(t.finish_p90_s),
                   " at p90 (start p90 ", Span(t.start_p90_s), " + run ",
                   Span(t.run_p50_s), ", p90 ", Span(t.run_p90_s), ")");
  if (t.finish_p90_s <= deadline_s) {
    c->reasons.push_back(
        absl::StrCat("deadline: ", finish, ", within ", Span(deadline_s)));
  } else {
    c->warnings.push_back(absl::StrCat(
        "deadline: ", finish, ", after the deadline of ", Span(deadline_s)));
  }
}

// The verdict when no candidate finishes within the deadline at p90: the
// likeliest to all the same (rank 1, whose forecast finishes fall within it
// `chance` of the time), and the earliest finish there is.
std::string NoneMeetsReason(const std::vector<Candidate>& ranked,
                            double deadline_s, double chance) {
  const Candidate& first = ranked.front();
  const Candidate* earliest = &first;
  for (const Candidate& c : ranked) {
    if (c.timing.has_value() && c.timing->known() &&
        c.timing->finish_p90_s < earliest->timing->finish_p90_s) {
      earliest = &c;
    }
  }
  const std::string earliest_text = absl::StrCat(
      "the earliest finish is ", earliest->pool_name, "'s, within ",
      Span(earliest->timing->finish_p90_s), " at p90 (median ",
      Span(earliest->timing->finish_p50_s), ")");
  if (chance <= 0) {
    return absl::StrCat("no candidate finishes within ", Span(deadline_s),
                        " at p90; ", earliest_text);
  }
  return absl::StrFormat(
      "no candidate finishes within %s at p90; %s is the likeliest to, %.0f%% "
      "of its forecast finishes within it (p90 %s, median %s); %s",
      Span(deadline_s), first.pool_name, 100 * chance,
      Span(first.timing->finish_p90_s), Span(first.timing->finish_p50_s),
      earliest_text);
}

DeadlineVerdict JudgeDeadline(const PlanRequest& request,
                              const std::vector<Candidate>& ranked) {
  DeadlineVerdict v;
  v.deadline = *request.constraints.deadline;
  const double deadline_s = DeadlineSeconds(request);
  for (const Candidate& c : ranked)
    v.candidates_meeting += MeetsDeadline(c, deadline_s);
  if (ranked.empty()) {
    v.reason = "no pool can take the recipe (each rejection says why)";
    return v;
  }
  const Candidate& first = ranked.front();
  v.pool_name = first.pool_name;
  v.met = MeetsDeadline(first, deadline_s);
  const bool known = first.timing.has_value() && first.timing->known();
  v.finish_p90_s = known ? first.timing->finish_p90_s : 0;
  v.chance_met = known ? first.timing->ChanceToFinishWithin(deadline_s) : 0;
  if (v.met) {
    v.reason = absl::StrCat(
        first.pool_name, " is the cheapest of ", v.candidates_meeting,
        " candidate(s) that finish within ", Span(deadline_s), " at p90 (by ",
        Span(v.finish_p90_s), ")");
  } else if (known) {
    v.reason = NoneMeetsReason(ranked, deadline_s, v.chance_met);
  } else {
    v.reason = absl::StrCat("no candidate can be shown to finish within ",
                            Span(deadline_s),
                            ": no pool's wait is known (report pool state: "
                            "PoolStateService.ReportPoolState)");
  }
  return v;
}

void ExplainCostOfDelay(const PlanRequest& request, Candidate* c) {
  const CandidateTiming& t = *c->timing;
  if (!t.known()) {
    c->warnings.push_back(absl::StrCat(
        "cost_of_delay: ranked after the candidates whose wait is known: ",
        t.reason));
    return;
  }
  const double delay_micros =
      static_cast<double>(request.constraints.delay_cost_micros_per_hour) *
      t.finish_mean_s / 3600;
  c->reasons.push_back(absl::StrFormat(
      "cost_of_delay: cost %.2f + %.2f per hour x %.2f h expected to finish "
      "(start %s + run %s) = %.2f",
      static_cast<double>(c->expected_cost_micros) / 1e6,
      static_cast<double>(request.constraints.delay_cost_micros_per_hour) / 1e6,
      t.finish_mean_s / 3600, Span(t.start_mean_s), Span(t.run_p50_s),
      (static_cast<double>(c->expected_cost_micros) + delay_micros) / 1e6));
}

// Candidates ranked by cost and time alike say when a deadline on the run
// alone still leaves the finish, wait counted, past it.
void WarnDeadlineWithWait(const PlanRequest& request, PlanResult* result) {
  if (!request.constraints.deadline.has_value()) return;
  const double deadline_s = DeadlineSeconds(request);
  for (Candidate& c : result->candidates) {
    if (!c.timing.has_value() || !c.timing->known() ||
        c.timing->finish_p90_s <= deadline_s) {
      continue;
    }
    c.warnings.push_back(absl::StrCat(
        "deadline: the run fits the deadline of ", Span(deadline_s),
        ", but with the wait it finishes within ", Span(c.timing->finish_p90_s),
        " at p90 (start p90 ", Span(c.timing->start_p90_s),
        "); OBJECTIVE_FINISH_BY_DEADLINE counts the wait"));
  }
}

}  // namespace

void RankByTime(const PlanRequest& request, const PlanResult* faster,
                PlanResult* result) {
  const Objective objective = request.constraints.objective;
  if (!IsTimeObjective(objective)) {
    WarnDeadlineWithWait(request, result);
    return;
  }
  std::vector<Candidate>& ranked = result->candidates;
  if (faster != nullptr) {
    for (Candidate& c : ranked) {
      for (const Candidate& f : faster->candidates) {
        if (f.pool_name == c.pool_name && f.recipe_key != c.recipe_key &&
            KeyOf(request, f) < KeyOf(request, c)) {
          c = f;
          c.reasons.insert(
              c.reasons.begin(),
              "configuration: the faster layout the planner chose for this "
              "pool serves the objective better than the cheaper one");
        }
      }
    }
  }
  const std::string previous_first =
      ranked.empty() ? "" : ranked.front().pool_name;
  std::stable_sort(ranked.begin(), ranked.end(),
                   [&](const Candidate& a, const Candidate& b) {
                     return std::make_tuple(KeyOf(request, a), a.pool_name) <
                            std::make_tuple(KeyOf(request, b), b.pool_name);
                   });
  for (size_t i = 0; i < ranked.size(); ++i) {
    Candidate& c = ranked[i];
    c.rank = static_cast<int>(i) + 1;
    if (!c.timing.has_value()) continue;
    if (objective == Objective::kFinishByDeadline) {
      ExplainDeadline(DeadlineSeconds(request), &c);
    } else {
      ExplainCostOfDelay(request, &c);
    }
  }
  if (objective == Objective::kFinishByDeadline) {
    result->deadline = JudgeDeadline(request, ranked);
  }
  if (ranked.empty()) return;
  result->eval_requirement = ranked.front().eval_requirement;
  result->eval_status = ranked.front().eval_status;
  if (result->standard.has_value() && result->standard->applied &&
      ranked.front().pool_name != result->standard->pool_name) {
    result->standard->applied = false;
    absl::StrAppend(
        &result->standard->reason, "; not first under the ",
        objective == Objective::kFinishByDeadline
            ? "deadline: another pool finishes in time at less cost, or earlier"
            : "cost of delay: another pool's cost and finish are worth more",
        " (first was ", previous_first, ")");
  }
}

absl::StatusOr<PlanResult> PlanWithTime(const PlanRequest& request,
                                        const std::vector<Pool>& pools,
                                        const std::vector<GpuSku>& skus,
                                        const EvidenceSource& evidence,
                                        const FleetModel* fleet,
                                        const std::vector<Standard>& standards,
                                        const QueueView& queues) {
  const Objective objective = request.constraints.objective;
  // The planner proper bounds the run alone by a deadline; under the
  // deadline objective the wait counts too, so the bound is this file's.
  PlanRequest planned = request;
  if (objective == Objective::kFinishByDeadline) {
    planned.constraints.deadline.reset();
  }
  absl::StatusOr<PlanResult> result =
      PlanValidatedRequest(planned, pools, skus, evidence, fleet);
  if (!result.ok()) return result.status();
  ApplyStandard(standards, &*result);
  auto time_all = [&](std::vector<Candidate>& candidates) {
    for (Candidate& c : candidates) {
      c.timing = TimeCandidate(
          c, queues.queue_of ? queues.queue_of(c.pool_name) : nullptr,
          queues.now, queues.max_age);
    }
  };
  time_all(result->candidates);
  std::optional<PlanResult> faster;
  if (IsTimeObjective(objective)) {
    PlanRequest fastest = planned;
    fastest.constraints.objective = Objective::kShortestTime;
    absl::StatusOr<PlanResult> alternative =
        PlanValidatedRequest(fastest, pools, skus, evidence, fleet);
    if (alternative.ok()) {
      faster = *std::move(alternative);
      time_all(faster->candidates);
    }
  }
  RankByTime(request, faster ? &*faster : nullptr, &*result);
  // The draws served the ranking; a plan kept (the plan cache) keeps only
  // its quantiles.
  for (Candidate& c : result->candidates) {
    if (c.timing.has_value())
      std::vector<double>().swap(c.timing->finish_draws_s);
  }
  return result;
}

}  // namespace placement::core
