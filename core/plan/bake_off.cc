#include "core/plan/bake_off.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "core/plan/job_cost.h"
#include "core/plan/measurement_value.h"
#include "core/plan/ranking.h"
#include "core/plan/rules.h"
#include "core/recipe.h"

namespace placement::core {
namespace {

std::string Money(double micros) {
  return absl::StrFormat("%.2f", micros / 1e6);
}

// The cost at the pool's internal rate of `steps` steps of `cand`'s layout
// in one run (start-up and expected rework included).
double RunCostMicros(const Candidate& cand, int64_t steps) {
  if (!(cand.expected_gpu_hours > 0)) return 0;
  JobCostInputs inputs;
  inputs.gpus = cand.gpu_count;
  inputs.step_gpu_hours = cand.step_gpu_hours;
  inputs.startup_gpu_hours = cand.startup_gpu_hours;
  inputs.failure = cand.failure_rate;
  const JobCost run = ProjectJobCost(inputs, steps);
  return run.total_gpu_hours * cand.micros_per_gpu_hour();
}

BakeOffRun RunOf(const Candidate& cand) {
  BakeOffRun run;
  run.pool_name = cand.pool_name;
  run.sku_id = cand.sku_id;
  run.gpu_count = cand.gpu_count;
  run.recipe_key = cand.recipe_key;
  run.borderline = cand.fit == Fit::kBorderline;
  return run;
}

struct Proposal {
  size_t index = 0;
  BakeOffRun run;
  double net_micros = 0;
};

// What a runner-up must beat: the first choice's cost, or, where the first
// choice's job measures another configuration, the measured one's value
// the pool ranks at (what it is known to cost; the estimate it explores is
// not yet evidence).
double FirstChoiceValue(const Candidate& first) {
  return PoolValue(first, static_cast<double>(first.expected_cost_micros));
}

// The value of measuring candidate `cand` before the job, against the
// plan's first choice `first`; nullopt (with the reason added to the
// candidate) when it cannot pay.
std::optional<Proposal> ValueMeasurement(const Candidate& first,
                                         int64_t total_steps,
                                         int64_t demand_steps,
                                         Candidate* cand) {
  const double threshold = FirstChoiceValue(first);
  const CostBelief belief = CostBeliefOf(*cand);
  if (belief.optimistic >= threshold) {
    cand->reasons.push_back(absl::StrCat(
        kEvidenceBeatsEstimatesRule,
        ": not worth measuring: even at its optimistic edge it would cost ",
        Money(belief.optimistic), " against ", Money(threshold), " on ",
        first.pool_name));
    return std::nullopt;
  }
  // A BORDERLINE candidate pays off only if it fits: with its
  // oom_probability the run shows no more than that, at the price of a
  // start-up and a step.
  const double fits = ChanceToFit(*cand);
  const double per_job =
      fits * ExpectedShortfall(threshold, belief.median, belief.sigma);
  const double saving = per_job * static_cast<double>(demand_steps) /
                        static_cast<double>(std::max<int64_t>(1, total_steps));
  const int64_t steps =
      MeasurementSteps(belief.median, threshold, kAssumedStepTimeCv);
  const double cost =
      fits * RunCostMicros(*cand, steps) + (1 - fits) * RunCostMicros(*cand, 1);
  const double win =
      fits * ProbabilityBelow(threshold, belief.median, belief.sigma);
  if (saving <= kMeasurementHurdle * cost) {
    cand->reasons.push_back(absl::StrFormat(
        "%s: not worth measuring: a %d-step run would cost %s and is "
        "expected to save %s over the %d steps of this recipe class still "
        "expected (%.0f%% chance it is cheaper than %s), under the %.0fx "
        "its cost a measurement must save",
        kEvidenceBeatsEstimatesRule, steps, Money(cost), Money(saving),
        demand_steps, 100 * win, first.pool_name, kMeasurementHurdle));
    return std::nullopt;
  }
  Proposal p;
  p.net_micros = saving - cost;
  p.run = RunOf(*cand);
  p.run.steps = steps;
  p.run.cost_micros = static_cast<int64_t>(std::llround(cost));
  p.run.expected_saving_micros = static_cast<int64_t>(std::llround(saving));
  p.run.win_probability = win;
  p.run.reason = absl::StrFormat(
      "%s: measure %s (%s x%d) for %d steps: the run costs about %s and is "
      "expected to save %s over the %d steps of this recipe class still "
      "expected, since it has a %.0f%% chance of being cheaper than %s (its "
      "cost %s to %s against %s)",
      kEvidenceBeatsEstimatesRule, cand->pool_name, cand->sku_id,
      cand->gpu_count, steps, Money(cost), Money(saving), demand_steps,
      100 * win, first.pool_name, Money(belief.optimistic),
      Money(static_cast<double>(cand->expected_cost_micros) *
            cand->step_time_s_band.high / std::max(1e-9, cand->step_time_s)),
      Money(threshold));
  return p;
}

// The unmeasured runners-up worth a run, the most worth first, at most
// kMaxMeasurementRuns.
std::vector<Proposal> ValuedProposals(int64_t total_steps, int64_t demand_steps,
                                      std::vector<Candidate>* candidates) {
  const Candidate& first = candidates->front();
  std::vector<Proposal> proposals;
  std::set<std::pair<std::string, std::string>> valued;  // (SKU, key)
  for (size_t i = 1; i < candidates->size(); ++i) {
    Candidate& cand = (*candidates)[i];
    if (cand.basis == EvidenceBasis::kMeasured) continue;
    // Evidence is per (recipe key, SKU): a twin pool's run measures both.
    if (!valued.emplace(cand.sku_id, cand.recipe_key).second) continue;
    if (auto p = ValueMeasurement(first, total_steps, demand_steps, &cand)) {
      p->index = i;
      proposals.push_back(*std::move(p));
    }
  }
  std::stable_sort(proposals.begin(), proposals.end(),
                   [](const Proposal& a, const Proposal& b) {
                     return a.net_micros > b.net_micros;
                   });
  if (proposals.size() > static_cast<size_t>(kMaxMeasurementRuns)) {
    proposals.resize(kMaxMeasurementRuns);
  }
  return proposals;
}

std::string BakeOffReason(const BakeOff& bake_off) {
  int64_t saving = 0;
  int64_t cost = 0;
  for (const BakeOffRun& r : bake_off.runs) {
    saving = std::max(saving, r.expected_saving_micros);
    cost += r.cost_micros;
  }
  return absl::StrCat(
      kEvidenceBeatsEstimatesRule, ": measuring ",
      bake_off.runs.size() == 1 ? "one unmeasured candidate"
                                : "unmeasured candidates",
      " is expected to save up to ", Money(static_cast<double>(saving)),
      " over ", bake_off.expected_demand_steps,
      " steps of this recipe class for ", Money(static_cast<double>(cost)),
      " of runs; run recipe ", bake_off.recipe_key,
      " at equal sequence length, rank and precision");
}

}  // namespace

std::optional<BakeOff> ProposeBakeOff(const PlanRequest& request,
                                      int64_t demand_steps,
                                      std::vector<Candidate>* candidates) {
  if (candidates->empty()) return std::nullopt;
  BakeOff bake_off;
  bake_off.expected_demand_steps = std::max(demand_steps, request.total_steps);
  // The first choice is never in it, BORDERLINE or not: the job itself
  // measures it, and should it run out of memory at its first steps it
  // loses what a short run of it would have lost (a start-up and a step,
  // priced into its rank: RiskPricedValue) and goes to the plan's fallback.
  std::vector<Proposal> proposals = ValuedProposals(
      request.total_steps, bake_off.expected_demand_steps, candidates);
  if (proposals.empty()) return std::nullopt;
  for (Proposal& p : proposals) {
    (*candidates)[p.index].reasons.push_back(p.run.reason);
    // A twin pool of the same SKU is measured by the same run.
    for (Candidate& cand : *candidates) {
      if (cand.sku_id == p.run.sku_id && cand.recipe_key == p.run.recipe_key) {
        cand.measure_first = true;
      }
    }
    bake_off.runs.push_back(std::move(p.run));
  }
  const Candidate& lead = (*candidates)[proposals.front().index];
  bake_off.recipe_key = lead.recipe_key;
  bake_off.recipe = lead.recipe;
  bake_off.settings = DescribeSettings(lead.recipe);
  bake_off.measure = {"peak memory per GPU",
                      "step time (p50, p95)",
                      "steps attempted and succeeded, retries, failures",
                      "start and end of the run (its start-up is the wall "
                      "time its steps do not explain)",
                      "whether CPU/NVMe offload was needed",
                      "which link the collectives used (NVLink, PCIe, host "
                      "memory)"};
  bake_off.reason = BakeOffReason(bake_off);
  if (request.serving) {
    bake_off.eval_requirement = CheckServeWhatYouEvaluated(
        bake_off.recipe, bake_off.runs.front().sku_id, request.serving->sku_id,
        request.serving->precision);
  }
  return bake_off;
}

}  // namespace placement::core
