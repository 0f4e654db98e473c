#include "core/plan/standard.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace placement::core {
namespace {

// The candidate's expected cost for the job with the projection's band
// (core/plan/job_cost.h: the step-time band and the failure rate's
// p10-p90).
Band CostBand(const Candidate& c) {
  const double cost = static_cast<double>(c.expected_cost_micros);
  if (!(c.expected_gpu_hours > 0) || !(c.expected_gpu_hours_band.high > 0)) {
    return {cost, cost};
  }
  const double per_gpu_hour = cost / c.expected_gpu_hours;
  return {per_gpu_hour *
              std::min(c.expected_gpu_hours, c.expected_gpu_hours_band.low),
          per_gpu_hour *
              std::max(c.expected_gpu_hours, c.expected_gpu_hours_band.high)};
}

std::vector<std::string> Contradictions(const Standard& standard,
                                        const std::vector<Candidate>& ranked,
                                        const Candidate& chosen) {
  std::vector<std::string> found;
  const Band chosen_band = CostBand(chosen);
  for (const Candidate& other : ranked) {
    if (other.pool_name == chosen.pool_name) continue;
    if (other.basis != EvidenceBasis::kMeasured) continue;
    const Band band = CostBand(other);
    if (band.high < chosen_band.low) {
      found.push_back(absl::StrFormat(
          "%s measured cheaper beyond both bands: %.2f to %.2f against "
          "%.2f to %.2f on %s",
          other.pool_name, band.low / 1e6, band.high / 1e6,
          chosen_band.low / 1e6, chosen_band.high / 1e6, chosen.pool_name));
    }
  }
  const double p10 = chosen.failure_rate.per_hour_band.low;
  const double recorded_p90 = standard.failure_rate_per_hour_band.high;
  if (p10 > recorded_p90) {
    found.push_back(absl::StrFormat(
        "%s fails more often than when the standard was written: p10 %.4f "
        "failures an hour now, p90 %.4f then",
        chosen.pool_name, p10, recorded_p90));
  }
  return found;
}

}  // namespace

Recipe RecipeClassOf(const Recipe& recipe) {
  Recipe c;
  c.model = recipe.model;
  c.method = recipe.method;
  c.adapter = recipe.adapter;
  c.lora_rank = recipe.lora_rank;
  c.sequence_length = recipe.sequence_length;
  c.micro_batch_size = recipe.micro_batch_size;
  c.precision = recipe.precision;
  c.gpu_count = recipe.gpu_count;
  c.parallelism = recipe.parallelism;
  return c;
}

Recipe DefaultRecipeClass(const Recipe& recipe) {
  Recipe c;
  c.model = recipe.model;
  c.method = recipe.method;
  c.adapter = recipe.adapter;
  c.lora_rank = recipe.lora_rank;
  c.sequence_length = recipe.sequence_length;
  c.precision = recipe.precision;
  return c;
}

bool InRecipeClass(const Recipe& recipe, const Recipe& recipe_class) {
  const Recipe& c = recipe_class;
  return (c.model.empty() || c.model == recipe.model) &&
         (c.method == FineTuneMethod::kUnspecified ||
          c.method == recipe.method) &&
         (c.adapter == AdapterType::kUnspecified ||
          c.adapter == recipe.adapter) &&
         (c.lora_rank == 0 || c.lora_rank == recipe.lora_rank) &&
         (c.sequence_length == 0 ||
          c.sequence_length == recipe.sequence_length) &&
         (c.micro_batch_size == 0 ||
          c.micro_batch_size == recipe.micro_batch_size) &&
         (c.precision == Precision::kUnspecified ||
          c.precision == recipe.precision) &&
         (c.gpu_count == 0 || c.gpu_count == recipe.gpu_count) &&
         (c.parallelism == Parallelism::kUnspecified ||
          c.parallelism == recipe.parallelism);
}

int Specificity(const Recipe& c) {
  return !c.model.empty() + (c.method != FineTuneMethod::kUnspecified) +
         (c.adapter != AdapterType::kUnspecified) + (c.lora_rank != 0) +
         (c.sequence_length != 0) + (c.micro_batch_size != 0) +
         (c.precision != Precision::kUnspecified) + (c.gpu_count != 0) +
         (c.parallelism != Parallelism::kUnspecified);
}

const Standard* ChooseStandard(const std::vector<Standard>& standards,
                               const Recipe& recipe) {
  const Standard* best = nullptr;
  for (const Standard& s : standards) {
    if (!s.active() || !InRecipeClass(recipe, s.recipe_class)) continue;
    if (best == nullptr) {
      best = &s;
      continue;
    }
    const int a = Specificity(s.recipe_class);
    const int b = Specificity(best->recipe_class);
    if (a != b) {
      if (a > b) best = &s;
    } else if (s.created != best->created) {
      if (s.created > best->created) best = &s;
    } else if (s.standard_id < best->standard_id) {
      best = &s;
    }
  }
  return best;
}

void ApplyStandard(const std::vector<Standard>& standards, PlanResult* result) {
  const Standard* standard = ChooseStandard(standards, result->recipe);
  if (standard == nullptr) return;
  StandardApplication& applied = result->standard.emplace();
  applied.standard_id = standard->standard_id;
  applied.pool_name = standard->pool_name;
  std::vector<Candidate>& ranked = result->candidates;
  auto chosen = std::find_if(
      ranked.begin(), ranked.end(),
      [&](const Candidate& c) { return c.pool_name == standard->pool_name; });
  if (chosen == ranked.end()) {
    applied.reason = absl::StrCat("standard ", standard->standard_id, " puts ",
                                  standard->pool_name,
                                  " first, but it is not a candidate now");
    for (const Rejection& r : result->rejections) {
      if (r.pool_name == standard->pool_name) {
        absl::StrAppend(&applied.reason, ": ", r.rule, ": ", r.reason);
      }
    }
    return;
  }
  std::rotate(ranked.begin(), chosen, chosen + 1);
  for (size_t i = 0; i < ranked.size(); ++i) {
    ranked[i].rank = static_cast<int>(i) + 1;
  }
  // The plan's eval requirement is its first candidate's (PlanResult).
  result->eval_requirement = ranked.front().eval_requirement;
  result->eval_status = ranked.front().eval_status;
  applied.applied = true;
  applied.reason = absl::StrCat(
      "standard ", standard->standard_id, " (written by ", standard->written_by,
      ": ", standard->reason, ") ranks ", standard->pool_name, " first");
  applied.contradictions = Contradictions(*standard, ranked, ranked.front());
  applied.contradicted = !applied.contradictions.empty();
}

}  // namespace placement::core
