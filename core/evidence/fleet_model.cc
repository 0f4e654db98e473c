#include "core/evidence/fleet_model.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>

#include "core/models/band_calibration.h"
#include "core/models/memory_model.h"
#include "core/models/step_time_model.h"
#include "core/pool.h"

namespace placement::core {
namespace {

// The p90 of a standard normal: the band is p10..p90, as the prior's is.
constexpr double kP90Z = 1.2815515655;

double Median(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

// One closed-form ridge update of a scalar parameter: the sum of
// (residual without it) x slope over its cells / (sum of slope^2 + penalty).
struct Sums {
  double num = 0;
  double den = 0;
};

// One block of offsets in closed form, the other terms held: each offset
// (offset_of(o); nullptr where an observation has no term of the block)
// becomes the sum of its observations' residuals without it over their
// count + `penalty`. Every sum is taken before any offset moves.
template <typename Observation, typename OffsetOf, typename FittedOf>
void UpdateOffsetBlock(const std::vector<Observation>& obs, double penalty,
                       OffsetOf offset_of, FittedOf fitted) {
  std::map<double*, Sums> by_offset;
  for (const Observation& o : obs) {
    double* offset = offset_of(o);
    if (offset == nullptr) continue;
    Sums& s = by_offset[offset];
    s.num += o.log_ratio - (fitted(o) - *offset);
    s.den += 1;
  }
  for (auto& [offset, s] : by_offset) *offset = s.num / (s.den + penalty);
}

}  // namespace

std::vector<FleetModel::StepTimeObservation>
FleetModel::CollectStepTimeObservations(const std::vector<FleetCell>& cells) {
  std::vector<StepTimeObservation> obs;
  for (const FleetCell& c : cells) {
    if (!(c.measured_step_time_s > 0) || !(c.prior_step_time_s > 0)) continue;
    RecipeTerm& recipe = recipes_[c.recipe_key];
    recipe.skus.push_back(c.sku_id);
    skus_[c.sku_id].factor = 0.1;  // breaks the rank-1 symmetry
    if (c.method != FineTuneMethod::kUnspecified) {
      method_skus_.try_emplace({c.method, c.sku_id}, 0.0);
    }
    obs.push_back({nullptr, nullptr, nullptr,
                   std::log(c.measured_step_time_s / c.prior_step_time_s)});
  }
  // The terms' addresses are stable once every term exists.
  size_t i = 0;
  for (const FleetCell& c : cells) {
    if (!(c.measured_step_time_s > 0) || !(c.prior_step_time_s > 0)) {
      continue;
    }
    obs[i].recipe = &recipes_.find(c.recipe_key)->second;
    obs[i].sku = &skus_.find(c.sku_id)->second;
    if (c.method != FineTuneMethod::kUnspecified) {
      obs[i].method_sku = &method_skus_.find({c.method, c.sku_id})->second;
    }
    ++i;
  }
  return obs;
}

double FleetModel::Fitted(const StepTimeObservation& o) const {
  return global_ + o.recipe->offset + o.sku->offset +
         (o.method_sku != nullptr ? *o.method_sku : 0) +
         o.recipe->factor * o.sku->factor;
}

void FleetModel::UpdateOffsets(const std::vector<StepTimeObservation>& obs,
                               const FleetModelOptions& options) {
  auto fitted = [this](const StepTimeObservation& o) { return Fitted(o); };
  UpdateOffsetBlock(
      obs, options.global_penalty,
      [this](const StepTimeObservation&) { return &global_; }, fitted);
  UpdateOffsetBlock(
      obs, options.recipe_penalty,
      [](const StepTimeObservation& o) { return &o.recipe->offset; }, fitted);
  UpdateOffsetBlock(
      obs, options.sku_penalty,
      [](const StepTimeObservation& o) { return &o.sku->offset; }, fitted);
  UpdateOffsetBlock(
      obs, options.method_sku_penalty,
      [](const StepTimeObservation& o) { return o.method_sku; }, fitted);
}

void FleetModel::UpdateInteraction(const std::vector<StepTimeObservation>& obs,
                                   const FleetModelOptions& options) {
  std::map<RecipeTerm*, Sums> recipe_factor;
  for (const StepTimeObservation& o : obs) {
    Sums& s = recipe_factor[o.recipe];
    const double rest =
        o.log_ratio - (Fitted(o) - o.recipe->factor * o.sku->factor);
    s.num += rest * o.sku->factor;
    s.den += o.sku->factor * o.sku->factor;
  }
  for (auto& [term, s] : recipe_factor) {
    term->factor = s.num / (s.den + options.interaction_penalty);
  }
  std::map<SkuTerm*, Sums> sku_factor;
  for (const StepTimeObservation& o : obs) {
    Sums& s = sku_factor[o.sku];
    const double rest =
        o.log_ratio - (Fitted(o) - o.recipe->factor * o.sku->factor);
    s.num += rest * o.recipe->factor;
    s.den += o.recipe->factor * o.recipe->factor;
  }
  for (auto& [term, s] : sku_factor) {
    // Kept away from exactly 0, where the interaction could never move.
    term->factor = s.num / (s.den + options.interaction_penalty);
  }
}

void FleetModel::FitSpreads(const std::vector<StepTimeObservation>& obs,
                            const FleetModelOptions& options) {
  double squared = 0;
  for (const StepTimeObservation& o : obs) {
    const double e = o.log_ratio - Fitted(o);
    squared += e * e;
  }
  const double w = options.prior_sd_weight;
  residual_log_sd_ =
      std::sqrt((squared + w * options.prior_log_sd * options.prior_log_sd) /
                (static_cast<double>(obs.size()) + w));
  double offsets = 0;
  for (const auto& [key, term] : recipes_) offsets += term.offset * term.offset;
  recipe_offset_sd_ =
      std::sqrt((offsets + w * options.prior_log_sd * options.prior_log_sd) /
                (static_cast<double>(recipes_.size()) + w));
}

void FleetModel::FitMemoryScales(const std::vector<FleetCell>& cells,
                                 const FleetModelOptions& options) {
  std::map<TrainingFramework, std::vector<double>> memory_ratios;
  for (const FleetCell& c : cells) {
    if (!(c.measured_peak_gb > 0) || !(c.predicted_peak_gb > 0)) continue;
    memory_ratios[c.framework].push_back(
        std::log(c.measured_peak_gb / c.predicted_peak_gb));
  }
  for (auto& [framework, ratios] : memory_ratios) {
    const double n = static_cast<double>(ratios.size());
    MemoryTerm& term = memory_[framework];
    term.cells = static_cast<int>(ratios.size());
    // The median resists outliers (a run that reports a spike); the
    // shrinkage keeps a few cells from overturning the published fit.
    term.scale = std::exp(Median(std::move(ratios)) * n /
                          (n + options.memory_prior_weight));
  }
}

FleetModel FleetModel::Fit(std::vector<FleetCell> cells,
                           const FleetModelOptions& options) {
  // Order the cells so that the fit does not depend on the order given.
  std::sort(cells.begin(), cells.end(),
            [](const FleetCell& a, const FleetCell& b) {
              return std::tie(a.recipe_key, a.sku_id) <
                     std::tie(b.recipe_key, b.sku_id);
            });
  FleetModel model;
  model.prior_log_sd_ = options.prior_log_sd;
  model.prior_sd_weight_ = options.prior_sd_weight;
  model.apply_memory_scale_ = options.apply_memory_scale;

  // Step time: the low-rank model of log(measured / prior).
  const std::vector<StepTimeObservation> obs =
      model.CollectStepTimeObservations(cells);
  model.step_time_cells_ = static_cast<int>(obs.size());
  for (int iter = 0; iter < options.iterations && !obs.empty(); ++iter) {
    model.UpdateOffsets(obs, options);
    model.UpdateInteraction(obs, options);
  }
  model.FitSpreads(obs, options);
  // Memory: a robust per-framework scale on the analytic prediction.
  model.FitMemoryScales(cells, options);
  model.FitStartups(cells);
  model.FitMethodMemoryFloors(cells);
  return model;
}

void FleetModel::FitMethodMemoryFloors(const std::vector<FleetCell>& cells) {
  // The largest exact ratio (measured / predicted) of a method's succeeded
  // recipes on each card.
  std::map<std::pair<FineTuneMethod, std::string>, double> exact;
  for (const FleetCell& c : cells) {
    if (c.measured_peak_gb > 0 && c.predicted_peak_gb > 0) {
      double& largest = exact[{c.method, c.sku_id}];
      largest = std::max(largest, c.measured_peak_gb / c.predicted_peak_gb);
    }
  }
  // The cells are in (recipe key, SKU) order: a tie keeps the first key.
  for (const FleetCell& c : cells) {
    if (c.method == FineTuneMethod::kUnspecified || !(c.failed_peak_gb > 0) ||
        !(c.predicted_total_gb > 0)) {
      continue;
    }
    MethodMemoryFloor floor{c.failed_peak_gb / c.predicted_total_gb,
                            c.recipe_key, c.model, c.failed_peak_gb,
                            c.predicted_total_gb};
    // Where recipes of the method succeeded on the card, one that failed
    // far beyond them is the odd recipe (or the odd run), not the method:
    // its floor is held within the method's spread of theirs.
    if (auto it = exact.find({c.method, c.sku_id}); it != exact.end()) {
      const double held =
          std::max(1.0, it->second) * kMemoryBandMethodCarried.high;
      if (floor.scale > held) {
        floor.scale = held;
        floor.succeeded_ratio = it->second;
      }
    }
    if (!(floor.scale > 1)) continue;
    auto [it, fresh] = method_memory_floors_.try_emplace({c.method, c.sku_id});
    if (fresh || floor.scale > it->second.scale) it->second = std::move(floor);
  }
}

std::optional<MethodMemoryFloor> FleetModel::MethodMemory(
    FineTuneMethod method, absl::string_view sku_id) const {
  auto it = method_memory_floors_.find({method, std::string(sku_id)});
  if (it == method_memory_floors_.end()) return std::nullopt;
  return it->second;
}

void FleetModel::FitStartups(const std::vector<FleetCell>& cells) {
  std::map<std::string, std::vector<const FleetCell*>, std::less<>> by_model;
  for (const FleetCell& cell : cells) {
    if (cell.model.empty() || !(cell.startup_hours_per_attempt > 0)) continue;
    by_model[cell.model].push_back(&cell);
  }
  for (auto& [name, of_model] : by_model) {
    std::vector<double> hours;
    ModelStartup startup;
    startup.cells = static_cast<int>(of_model.size());
    for (const FleetCell* cell : of_model) {
      hours.push_back(cell->startup_hours_per_attempt);
      startup.skus.push_back(cell->sku_id);
    }
    std::sort(hours.begin(), hours.end());
    const size_t n = hours.size();
    startup.hours_per_attempt =
        n % 2 == 1 ? hours[n / 2] : (hours[n / 2 - 1] + hours[n / 2]) / 2;
    std::sort(startup.skus.begin(), startup.skus.end());
    startup.skus.erase(std::unique(startup.skus.begin(), startup.skus.end()),
                       startup.skus.end());
    startups_.emplace(name, std::move(startup));
  }
}

std::optional<ModelStartup> FleetModel::Startup(absl::string_view model) const {
  auto it = startups_.find(model);
  if (it == startups_.end()) return std::nullopt;
  return it->second;
}

std::optional<FleetStepTime> FleetModel::StepTime(absl::string_view recipe_key,
                                                  absl::string_view sku_id,
                                                  FineTuneMethod method) const {
  if (step_time_cells_ == 0) return std::nullopt;
  FleetStepTime out;
  out.cells = step_time_cells_;
  double log_factor = global_;
  double recipe_factor = 0;
  double sku_factor = 0;
  if (auto it = recipes_.find(recipe_key); it != recipes_.end()) {
    out.recipe_measured = true;
    out.recipe_skus = it->second.skus;
    log_factor += it->second.offset;
    recipe_factor = it->second.factor;
  }
  if (auto it = skus_.find(sku_id); it != skus_.end()) {
    out.sku_measured = true;
    log_factor += it->second.offset;
    sku_factor = it->second.factor;
  }
  if (method != FineTuneMethod::kUnspecified) {
    auto it = method_skus_.find({method, std::string(sku_id)});
    if (it != method_skus_.end()) {
      out.method_measured = true;
      out.method_factor = std::exp(it->second);
      log_factor += it->second;
    }
  }
  log_factor += recipe_factor * sku_factor;
  out.factor = std::exp(log_factor);
  // A recipe never measured keeps the spread of recipes around the fit;
  // one measured somewhere has the residual spread of the fit alone.
  double sd = residual_log_sd_;
  if (!out.recipe_measured) {
    sd = std::sqrt(sd * sd + recipe_offset_sd_ * recipe_offset_sd_);
  }
  out.band_low = std::exp(-kP90Z * sd);
  out.band_high = std::exp(kP90Z * sd);
  return out;
}

double FleetModel::MemoryScale(TrainingFramework framework) const {
  auto it = memory_.find(framework);
  return it == memory_.end() ? 1 : it->second.scale;
}

double FleetModel::PlanMemoryScale(TrainingFramework framework) const {
  return apply_memory_scale_ ? MemoryScale(framework) : 1;
}

int FleetModel::MemoryCells(TrainingFramework framework) const {
  auto it = memory_.find(framework);
  return it == memory_.end() ? 0 : it->second.cells;
}

double FleetModel::SkuLogOffset(absl::string_view sku_id) const {
  auto it = skus_.find(sku_id);
  return it == skus_.end() ? 0 : it->second.offset;
}

double PriorStepTimeS(const Recipe& recipe, const GpuSku& sku) {
  absl::StatusOr<ModelArchitecture> arch = ResolveArchitecture(recipe);
  if (!arch.ok()) return 0;
  Pool pool;
  pool.name = "fleet-model";
  pool.sku_id = sku.id;
  pool.gpus_per_node = 8;
  pool.node_count = std::max(1, (recipe.gpu_count + 7) / 8);
  pool.gpu_quota = pool.gpus_per_node * pool.node_count;
  pool.fabric = sku.HasNvlink() ? Fabric::kNvlink : Fabric::kPcie;
  if (pool.node_count > 1)
    pool.inter_node_fabric = InterNodeFabric::kInfiniband;
  return EstimateStepTime(recipe, *arch, sku, pool).step_time_s;
}

std::vector<FleetCell> FleetCellsFromEvidence(
    const std::vector<KeyedEvidence>& evidence,
    const std::vector<GpuSku>& skus) {
  std::vector<FleetCell> cells;
  for (const KeyedEvidence& e : evidence) {
    const GpuSku* sku = nullptr;
    for (const GpuSku& s : skus) {
      if (s.id == e.stats.sku_id) sku = &s;
    }
    if (sku == nullptr) continue;
    absl::StatusOr<ModelArchitecture> arch = ResolveArchitecture(e.recipe);
    if (!arch.ok()) continue;
    FleetCell cell;
    cell.recipe_key = e.stats.recipe_key;
    cell.sku_id = sku->id;
    cell.framework = e.recipe.framework;
    cell.method = e.recipe.method;
    cell.successful_runs = e.stats.successful_runs;
    cell.model = e.recipe.model;
    // A start-up every succeeded run's retries may have inflated does not
    // inform the model's.
    cell.startup_hours_per_attempt =
        e.stats.startup_holds_retries
            ? 0
            : e.stats.median_startup_hours_per_attempt.value_or(0);
    if (e.stats.steps_succeeded > 0 && e.stats.median_step_time_s > 0) {
      cell.measured_step_time_s = e.stats.median_step_time_s;
      cell.prior_step_time_s = PriorStepTimeS(e.recipe, *sku);
    }
    if (e.stats.successful_runs > 0 &&
        e.stats.successful_runs == e.stats.runs && e.stats.offload_share == 0 &&
        e.stats.peak_memory_gb > 0) {
      // The largest peak of the succeeded runs (here every run), exact as
      // the runs reported it (EvidenceStats::peak_memory_gb).
      cell.measured_peak_gb = e.stats.peak_memory_gb;
      cell.predicted_peak_gb =
          PredictPeakMemory(e.recipe, *arch, DefaultMemoryModelConstants())
              .reported_gb;
    }
    // A run that did not succeed got as far as the largest peak when no
    // succeeded run reached it (EvidenceStats::max_peak_memory_gb).
    if (e.stats.offload_share == 0 && e.stats.max_peak_memory_gb > 0 &&
        (e.stats.successful_runs == 0 ||
         e.stats.max_peak_memory_gb > e.stats.peak_memory_gb)) {
      cell.failed_peak_gb = e.stats.max_peak_memory_gb;
      cell.predicted_total_gb =
          PredictPeakMemory(e.recipe, *arch, DefaultMemoryModelConstants())
              .total_gb;
    }
    cells.push_back(std::move(cell));
  }
  return cells;
}

double CardContextGb(const GpuSku& /*sku*/) {
  return DefaultMemoryModelConstants().cuda_context_gb;
}

std::optional<CrossSkuMemory> CrossSkuMemoryTransfer(
    const std::vector<std::pair<const GpuSku*, EvidenceStats>>& measured,
    const GpuSku& target) {
  const std::pair<const GpuSku*, EvidenceStats>* best = nullptr;
  // Each qualifying card proves the peak fits its memory: the smallest
  // proves the most.
  const std::pair<const GpuSku*, EvidenceStats>* smallest = nullptr;
  auto room = [&](const GpuSku& sku) {
    return sku.UsableMemoryGb() + CardContextGb(target) - CardContextGb(sku);
  };
  for (const auto& entry : measured) {
    const EvidenceStats& s = entry.second;
    if (entry.first == nullptr || entry.first->id == target.id) continue;
    if (s.successful_runs <= 0 || s.successful_runs != s.runs ||
        s.offload_share > 0 || !(s.peak_memory_gb > 0)) {
      continue;
    }
    if (smallest == nullptr ||
        std::make_tuple(room(*entry.first), entry.first->id) <
            std::make_tuple(room(*smallest->first), smallest->first->id)) {
      smallest = &entry;
    }
    if (best == nullptr ||
        std::make_tuple(-s.successful_runs, entry.first->id) <
            std::make_tuple(-best->second.successful_runs, best->first->id)) {
      best = &entry;
    }
  }
  if (best == nullptr) return std::nullopt;
  CrossSkuMemory out;
  out.from_sku_id = best->first->id;
  out.recipe_key = best->second.recipe_key;
  out.source_peak_gb = best->second.peak_memory_gb;
  out.context_adjustment_gb =
      CardContextGb(target) - CardContextGb(*best->first);
  out.peak_gb = out.source_peak_gb + out.context_adjustment_gb;
  out.ceiling_gb = room(*smallest->first);
  out.ceiling_sku_id = smallest->first->id;
  out.source = best->second;
  return out;
}

}  // namespace placement::core
