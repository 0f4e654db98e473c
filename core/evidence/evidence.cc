#include "core/evidence/evidence.h"

#include <algorithm>
#include <cmath>
#include <tuple>

#include "core/enum_names.h"
#include "core/evidence/run_attempts.h"
#include "core/models/memory_model.h"
#include "core/models/step_time_model.h"

namespace placement::core {

double MeasuredRun::GpuHours() const {
  if (ended <= started || started == absl::InfinitePast()) return 0;
  return gpu_count * absl::ToDoubleHours(ended - started);
}

void PeakMemorySums::Add(double peak_gb) {
  if (!(peak_gb > 0) || !std::isfinite(peak_gb)) return;
  ++runs;
  sum_gb += peak_gb;
  max_gb = std::max(max_gb, peak_gb);
}

void PeakMemorySums::Merge(const PeakMemorySums& o) {
  runs += o.runs;
  sum_gb += o.sum_gb;
  max_gb = std::max(max_gb, o.max_gb);
}

void PeakMemorySums::Scale(double factor) {
  sum_gb *= factor;
  max_gb *= factor;
}

double PeakMemorySums::MeanGb() const {
  return runs > 0 ? sum_gb / static_cast<double>(runs) : 0;
}

namespace {

// The per-attempt figures of EvidenceRollup::Add (migration 0022).
void AddAttempts(const MeasuredRun& run, EvidenceRollup* r) {
  const RunAttempts a = AttemptsOf(run);
  const double gpus = std::max(0, run.gpu_count);
  r->counted_gpu_hours += gpus * a.counted_hours;
  r->lost_gpu_hours += gpus * a.lost_hours;
  MostFailedRun failures_of_run;
  failures_of_run.failed_attempts = a.failed_attempts;
  failures_of_run.node_failed_attempts =
      a.failures_by_cause[static_cast<int>(AttemptFailureCause::kPreempted)] +
      a.failures_by_cause[static_cast<int>(
          AttemptFailureCause::kHardwareError)];
  failures_of_run.fabric_failed_attempts = a.failures_by_cause[static_cast<int>(
      AttemptFailureCause::kCollectiveTimeout)];
  failures_of_run.attempts = a.attempts;
  failures_of_run.counted_hours = gpus * a.counted_hours;
  failures_of_run.lost_hours = gpus * a.lost_hours;
  auto failures = [&](AttemptFailureCause cause) {
    return a.failures_by_cause[static_cast<int>(cause)];
  };
  r->node_failed_attempts += failures(AttemptFailureCause::kPreempted) +
                             failures(AttemptFailureCause::kHardwareError);
  r->fabric_failed_attempts +=
      failures(AttemptFailureCause::kCollectiveTimeout);
  if (run.outcome == RunOutcome::kSucceeded) {
    r->succeeded_attempts += a.attempts;
    r->succeeded_counted_gpu_hours += gpus * a.counted_hours;
    // Whole seconds, as the database keeps them; under a second counts in
    // the first bucket.
    const double startup_s =
        std::max(0.5, std::round(a.overhead_hours_per_attempt * 3600));
    r->startup_hist.Add(kStartupHistogram, startup_s, a.attempts);
    failures_of_run.startup_bucket =
        LogHistogram::BucketOf(kStartupHistogram, startup_s);
  }
  r->most_failed_run.Merge(failures_of_run);
  if (run.steps_attempted > 0) {
    r->step_time_mean_hist.Add(kStepTimeHistogram, run.step_time_mean_s);
  }
}

}  // namespace

void EvidenceRollup::Add(const MeasuredRun& run) {
  if (recipe_key.empty()) recipe_key = run.recipe_key;
  if (sku_id.empty()) sku_id = run.sku_id;
  ++runs;
  if (run.outcome == RunOutcome::kSucceeded) ++successful_runs;
  if (run.offload == Offload::kCpu || run.offload == Offload::kNvme) {
    ++offload_runs;
  }
  retries += std::max(0, run.retries);
  if (run.collectives_opened) ++collective_runs;
  if (run.interconnect == Interconnect::kNvlink) ++nvlink_runs;
  if (run.interconnect == Interconnect::kPcie) ++pcie_runs;
  if (run.interconnect == Interconnect::kHostMemory) ++host_memory_runs;
  steps_attempted += std::max<int64_t>(0, run.steps_attempted);
  steps_succeeded += std::max<int64_t>(0, run.steps_succeeded);
  const double run_gpu_hours = run.GpuHours();
  gpu_hours += run_gpu_hours;
  const double run_busy_gpu_hours = std::min(
      run_gpu_hours, run.gpu_count * std::max<int64_t>(0, run.steps_attempted) *
                         std::max(0.0, run.step_time_mean_s) / 3600);
  busy_gpu_hours += run_busy_gpu_hours;
  max_peak_memory_gb = std::max(max_peak_memory_gb, run.peak_memory_gb);
  if (run.outcome == RunOutcome::kSucceeded) {
    succeeded_gpu_hours += run_gpu_hours;
    succeeded_busy_gpu_hours += run_busy_gpu_hours;
    succeeded_peak.Add(run.peak_memory_gb);
    succeeded_allocated.Add(run.peak_memory_allocated_gb);
    succeeded_reserved.Add(run.peak_memory_reserved_gb);
  }
  if (run.steps_succeeded > 0) {
    step_time_p50_hist.Add(kStepTimeHistogram, run.step_time_p50_s);
    step_time_p95_hist.Add(kStepTimeHistogram, run.step_time_p95_s);
  }
  peak_memory_hist.Add(kPeakMemoryHistogram, run.peak_memory_gb);
  AddAttempts(run, this);
}

void EvidenceRollup::Merge(const EvidenceRollup& o) {
  if (recipe_key.empty()) recipe_key = o.recipe_key;
  if (sku_id.empty()) sku_id = o.sku_id;
  runs += o.runs;
  successful_runs += o.successful_runs;
  offload_runs += o.offload_runs;
  retries += o.retries;
  collective_runs += o.collective_runs;
  nvlink_runs += o.nvlink_runs;
  pcie_runs += o.pcie_runs;
  host_memory_runs += o.host_memory_runs;
  steps_attempted += o.steps_attempted;
  steps_succeeded += o.steps_succeeded;
  gpu_hours += o.gpu_hours;
  busy_gpu_hours += o.busy_gpu_hours;
  succeeded_gpu_hours += o.succeeded_gpu_hours;
  succeeded_busy_gpu_hours += o.succeeded_busy_gpu_hours;
  max_peak_memory_gb = std::max(max_peak_memory_gb, o.max_peak_memory_gb);
  succeeded_peak.Merge(o.succeeded_peak);
  succeeded_allocated.Merge(o.succeeded_allocated);
  succeeded_reserved.Merge(o.succeeded_reserved);
  step_time_p50_hist.Merge(o.step_time_p50_hist);
  step_time_p95_hist.Merge(o.step_time_p95_hist);
  peak_memory_hist.Merge(o.peak_memory_hist);
  counted_gpu_hours += o.counted_gpu_hours;
  lost_gpu_hours += o.lost_gpu_hours;
  node_failed_attempts += o.node_failed_attempts;
  fabric_failed_attempts += o.fabric_failed_attempts;
  succeeded_attempts += o.succeeded_attempts;
  succeeded_counted_gpu_hours += o.succeeded_counted_gpu_hours;
  startup_hist.Merge(o.startup_hist);
  step_time_mean_hist.Merge(o.step_time_mean_hist);
  most_failed_run.Merge(o.most_failed_run);
}

namespace {

// The per-attempt figures of Summarize (core/evidence/run_attempts.h).
// `r` as if its most-failed run had failed at most twice as often as the
// next run, and at least twice (MostFailedRun): its other failed attempts
// left out, as retries, with their share of its counted and lost hours,
// of its node and fabric failures and, when it succeeded, of its start-up
// counts.
EvidenceRollup WithoutExcessFailures(EvidenceRollup r) {
  const MostFailedRun& top = r.most_failed_run;
  const int64_t excess =
      std::clamp<int64_t>(top.ExcessFailedAttempts(r.runs), 0, r.retries);
  if (excess <= 0) return r;
  const double share = top.ExcessShare(r.runs);
  r.retries -= excess;
  r.node_failed_attempts = std::max<int64_t>(
      0,
      r.node_failed_attempts -
          std::llround(static_cast<double>(top.node_failed_attempts) * share));
  r.fabric_failed_attempts = std::max<int64_t>(
      0, r.fabric_failed_attempts -
             std::llround(static_cast<double>(top.fabric_failed_attempts) *
                          share));
  const double held = top.ExcessCountedHours(r.runs);
  r.counted_gpu_hours = std::max(0.0, r.counted_gpu_hours - held);
  r.lost_gpu_hours =
      std::max(0.0, r.lost_gpu_hours - top.ExcessLostHours(r.runs));
  if (top.startup_bucket >= 0 && top.startup_bucket < kHistogramBuckets) {
    r.succeeded_attempts = std::max<int64_t>(0, r.succeeded_attempts - excess);
    r.succeeded_counted_gpu_hours =
        std::max(0.0, r.succeeded_counted_gpu_hours - held);
    int64_t& count = r.startup_hist.counts[top.startup_bucket];
    count = std::max<int64_t>(0, count - excess);
  }
  return r;
}

void SummarizeAttempts(const EvidenceRollup& rollup, EvidenceStats* s) {
  const EvidenceRollup r = WithoutExcessFailures(rollup);
  s->attempts = r.runs + r.retries;
  s->failed_attempts = r.runs - r.successful_runs + r.retries;
  s->node_failed_attempts = r.node_failed_attempts;
  s->fabric_failed_attempts = r.fabric_failed_attempts;
  s->exposure_gpu_hours = r.counted_gpu_hours;
  s->lost_gpu_hours = r.lost_gpu_hours;
  if (r.succeeded_attempts > 0 && r.startup_hist.Total() > 0) {
    s->retried_succeeded_attempts =
        std::max<int64_t>(0, r.succeeded_attempts - r.successful_runs);
    // The histogram counts each succeeded run's start-up per attempt once
    // an attempt; a run that retried sits above those that did not by its
    // failures' overhead, so the unretried runs' median is the median of
    // the lowest `unretried` counts.
    const int64_t unretried = r.successful_runs - s->retried_succeeded_attempts;
    double q = 0.5;
    if (s->retried_succeeded_attempts > 0 && unretried > 0) {
      q = 0.5 * static_cast<double>(unretried) /
          static_cast<double>(r.startup_hist.Total());
      s->startup_of_unretried_runs = true;
    } else if (s->retried_succeeded_attempts > 0) {
      s->startup_holds_retries = true;
    }
    s->median_startup_hours_per_attempt =
        r.startup_hist.Quantile(kStartupHistogram, q) / 3600;
    s->mean_startup_gpu_hours_per_attempt =
        std::max(0.0,
                 r.succeeded_counted_gpu_hours - r.succeeded_busy_gpu_hours) /
        static_cast<double>(r.succeeded_attempts);
  }
  s->median_run_step_time_s =
      r.step_time_mean_hist.Quantile(kStepTimeHistogram, 0.5);
  s->run_step_time_p10_s =
      r.step_time_mean_hist.Quantile(kStepTimeHistogram, 0.1);
  s->run_step_time_p90_s =
      r.step_time_mean_hist.Quantile(kStepTimeHistogram, 0.9);
}

}  // namespace

EvidenceStats Summarize(const EvidenceRollup& r) {
  EvidenceStats s;
  s.recipe_key = r.recipe_key;
  s.sku_id = r.sku_id;
  s.runs = r.runs;
  s.successful_runs = r.successful_runs;
  s.gpu_hours = r.gpu_hours;
  s.steps_succeeded = r.steps_succeeded;
  s.steps_attempted = r.steps_attempted;
  if (r.steps_succeeded > 0) {
    s.gpu_hours_per_successful_step = r.gpu_hours / r.steps_succeeded;
  }
  if (r.busy_gpu_hours > 0 && r.steps_attempted > 0) {
    s.busy_gpu_hours_per_step = r.busy_gpu_hours / r.steps_attempted;
  }
  if (r.succeeded_busy_gpu_hours > 0 && r.successful_runs > 0) {
    s.startup_gpu_hours_per_run =
        std::max(0.0, r.succeeded_gpu_hours - r.succeeded_busy_gpu_hours) /
        r.successful_runs;
  }
  s.median_step_time_s = r.step_time_p50_hist.Quantile(kStepTimeHistogram, 0.5);
  s.p95_step_time_s = r.step_time_p95_hist.Quantile(kStepTimeHistogram, 0.95);
  SummarizeAttempts(r, &s);
  s.max_peak_memory_gb = r.max_peak_memory_gb;
  s.succeeded_peak = r.succeeded_peak;
  s.succeeded_allocated = r.succeeded_allocated;
  s.succeeded_reserved = r.succeeded_reserved;
  if (r.successful_runs > 0 && r.succeeded_peak.runs == r.successful_runs) {
    s.peak_memory_gb = r.succeeded_peak.max_gb;
    s.peak_memory_exact = true;
  } else if (r.successful_runs == r.runs || r.successful_runs == 0) {
    // Every run succeeded, or none did: the largest peak of any run is the
    // figure, and it has always been kept exactly.
    s.peak_memory_gb = r.max_peak_memory_gb;
    s.peak_memory_exact = true;
  } else {
    // Exact figures missing for some succeeded run: the histogram, which
    // rounds to its bucket middle, never above the largest peak seen.
    s.peak_memory_gb =
        std::min(r.max_peak_memory_gb,
                 r.peak_memory_hist.Quantile(kPeakMemoryHistogram, 0.95));
  }
  if (r.runs > 0) {
    s.offload_share = static_cast<double>(r.offload_runs) / r.runs;
    s.retry_rate = static_cast<double>(r.retries) / r.runs;
    s.failure_share = static_cast<double>(r.runs - r.successful_runs) / r.runs;
  }
  s.any_collectives = r.collective_runs > 0;
  if (r.nvlink_runs > 0) s.interconnects.push_back(Interconnect::kNvlink);
  if (r.pcie_runs > 0) s.interconnects.push_back(Interconnect::kPcie);
  if (r.host_memory_runs > 0) {
    s.interconnects.push_back(Interconnect::kHostMemory);
  }
  return s;
}

EvidenceStats AggregateRuns(const std::vector<MeasuredRun>& runs) {
  EvidenceRollup rollup;
  for (const MeasuredRun& run : runs) {
    if (!rollup.recipe_key.empty() &&
        (run.recipe_key != rollup.recipe_key || run.sku_id != rollup.sku_id)) {
      continue;
    }
    rollup.Add(run);
  }
  return Summarize(rollup);
}

InMemoryEvidence::SimilarKey InMemoryEvidence::SimilarKeyOf(
    const Entry& entry) {
  return {entry.recipe.model, static_cast<int>(entry.recipe.method),
          entry.rollup.sku_id, entry.rollup.recipe_key};
}

template <typename Change>
void InMemoryEvidence::Update(const Recipe& recipe, const std::string& sku_id,
                              Change change) {
  auto entry = std::make_shared<Entry>();
  entry->recipe = NormalizeRecipe(recipe);
  Key key{RecipeKey(entry->recipe), sku_id};
  if (const EntryPtr* existing = by_key_.Find(key); existing != nullptr) {
    entry->rollup = (*existing)->rollup;
    entry->merged_rollups = (*existing)->merged_rollups;
  }
  entry->rollup.recipe_key = key.first;
  entry->rollup.sku_id = sku_id;
  change(*entry);
  entry->stats = Summarize(entry->rollup);
  // The similar-recipe key depends on the recipe, which a key determines:
  // putting it again replaces the old pointer.
  by_similar_.Put(SimilarKeyOf(*entry), entry);
  by_key_.Put(std::move(key), std::move(entry));
}

void InMemoryEvidence::AddRun(const Recipe& recipe, MeasuredRun run) {
  if (!run.pool_name.empty()) {
    const std::pair<std::string, bool> key{run.pool_name, run.gpu_count > 1};
    PoolReliabilityRollup pool;
    if (const PoolReliabilityRollup* existing = pool_reliability_.Find(key)) {
      pool = *existing;
    }
    pool.Add(run);
    pool_reliability_.Put(key, std::move(pool));
  }
  Update(recipe, run.sku_id, [&](Entry& entry) {
    run.recipe_key = entry.rollup.recipe_key;
    entry.rollup.Add(run);
  });
}

void InMemoryEvidence::AddRollup(const Recipe& recipe,
                                 const EvidenceRollup& rollup) {
  Update(recipe, rollup.sku_id, [&](Entry& entry) {
    entry.rollup.Merge(rollup);
    ++entry.merged_rollups;
  });
}

void InMemoryEvidence::SetRollup(const Recipe& recipe,
                                 const EvidenceRollup& rollup) {
  Update(recipe, rollup.sku_id, [&](Entry& entry) {
    const std::string key = entry.rollup.recipe_key;
    entry.rollup = rollup;
    entry.rollup.recipe_key = key;
    entry.merged_rollups = 1;
  });
}

void InMemoryEvidence::SetPoolReliability(const PoolReliabilityRollup& rollup) {
  pool_reliability_.Put({rollup.pool_name, rollup.multi_gpu}, rollup);
}

void InMemoryEvidence::AddEval(const EvalEvidence& eval) {
  evals_.Put(
      {eval.recipe_key, eval.serving_sku_id,
       static_cast<int>(eval.serving_precision), eval.run_id, eval.metric},
      eval);
}

void InMemoryEvidence::ShareEvalsOf(const InMemoryEvidence& other) {
  evals_ = other.evals_;
}

const std::vector<EvalCriterion>& EvidenceSource::EvalCriteria() const {
  static const std::vector<EvalCriterion>* const kNone =
      new std::vector<EvalCriterion>();
  return *kNone;
}

void InMemoryEvidence::SetEvalCriteria(std::vector<EvalCriterion> criteria) {
  std::sort(criteria.begin(), criteria.end(),
            [](const EvalCriterion& a, const EvalCriterion& b) {
              return a.name < b.name;
            });
  eval_criteria_ =
      std::make_shared<const std::vector<EvalCriterion>>(std::move(criteria));
}

const std::vector<EvalCriterion>& InMemoryEvidence::EvalCriteria() const {
  return eval_criteria_ ? *eval_criteria_ : EvidenceSource::EvalCriteria();
}

std::vector<EvalEvidence> InMemoryEvidence::FindEvals(
    absl::string_view recipe_key, absl::string_view serving_sku_id,
    Precision serving_precision) const {
  std::vector<EvalEvidence> out;
  const int precision = static_cast<int>(serving_precision);
  evals_.VisitFrom(
      {std::string(recipe_key), std::string(serving_sku_id), precision, "", ""},
      [&](const EvalKey& key, const EvalEvidence& eval) {
        if (std::get<0>(key) != recipe_key ||
            std::get<1>(key) != serving_sku_id ||
            std::get<2>(key) != precision) {
          return false;
        }
        out.push_back(eval);
        return true;
      });
  return out;
}

PoolReliabilityRollup InMemoryEvidence::PoolReliability(
    absl::string_view pool_name, bool multi_gpu) const {
  const PoolReliabilityRollup* found =
      pool_reliability_.Find({std::string(pool_name), multi_gpu});
  if (found != nullptr) return *found;
  PoolReliabilityRollup empty;
  empty.pool_name = std::string(pool_name);
  empty.multi_gpu = multi_gpu;
  return empty;
}

bool InMemoryEvidence::Remove(absl::string_view recipe_key,
                              absl::string_view sku_id) {
  const Key key{std::string(recipe_key), std::string(sku_id)};
  const EntryPtr* existing = by_key_.Find(key);
  if (existing == nullptr) return false;
  by_similar_.Erase(SimilarKeyOf(**existing));
  by_key_.Erase(key);
  return true;
}

int InMemoryEvidence::MergedRollups(absl::string_view recipe_key,
                                    absl::string_view sku_id) const {
  const EntryPtr* entry =
      by_key_.Find({std::string(recipe_key), std::string(sku_id)});
  return entry == nullptr ? 0 : (*entry)->merged_rollups;
}

std::vector<KeyedEvidence> InMemoryEvidence::All() const {
  std::vector<KeyedEvidence> out;
  out.reserve(by_key_.size());
  by_key_.ForEach([&](const Key&, const EntryPtr& entry) {
    out.push_back({entry->recipe, entry->stats});
  });
  return out;
}

bool InMemoryEvidence::SameRollups(const InMemoryEvidence& other) const {
  if (!SamePoolReliability(other)) return false;
  if (by_key_.SharesTreeWith(other.by_key_)) return true;
  if (by_key_.size() != other.by_key_.size()) return false;
  std::vector<const Entry*> mine;
  mine.reserve(by_key_.size());
  by_key_.ForEach(
      [&](const Key&, const EntryPtr& entry) { mine.push_back(entry.get()); });
  size_t i = 0;
  bool same = true;
  // The key is the normalized recipe's key, so equal keys mean equal
  // recipes; the sums are compared field by field.
  other.by_key_.ForEach([&](const Key&, const EntryPtr& entry) {
    same = same && (mine[i] == entry.get() || mine[i]->rollup == entry->rollup);
    ++i;
  });
  return same;
}

bool InMemoryEvidence::SamePoolReliability(
    const InMemoryEvidence& other) const {
  if (pool_reliability_.SharesTreeWith(other.pool_reliability_)) return true;
  if (pool_reliability_.size() != other.pool_reliability_.size()) return false;
  bool same = true;
  pool_reliability_.ForEach([&](const std::pair<std::string, bool>& key,
                                const PoolReliabilityRollup& mine) {
    const PoolReliabilityRollup* theirs = other.pool_reliability_.Find(key);
    same = same && theirs != nullptr && *theirs == mine;
  });
  return same;
}

std::optional<EvidenceStats> InMemoryEvidence::Find(
    absl::string_view recipe_key, absl::string_view sku_id) const {
  const EntryPtr* entry =
      by_key_.Find({std::string(recipe_key), std::string(sku_id)});
  if (entry == nullptr) return std::nullopt;
  return (*entry)->stats;
}

std::vector<KeyedEvidence> InMemoryEvidence::FindSimilar(
    absl::string_view model, FineTuneMethod method,
    absl::string_view sku_id) const {
  std::vector<KeyedEvidence> out;
  const SimilarKey from{std::string(model), static_cast<int>(method),
                        std::string(sku_id), ""};
  by_similar_.VisitFrom(from, [&](const SimilarKey& key,
                                  const EntryPtr& entry) {
    if (std::get<0>(key) != model || std::get<1>(key) != std::get<1>(from) ||
        std::get<2>(key) != sku_id) {
      return false;
    }
    out.push_back({entry->recipe, entry->stats});
    return true;
  });
  return out;
}

std::vector<KeyedEvidence> InMemoryEvidence::FindAcrossSkus(
    absl::string_view recipe_key) const {
  std::vector<KeyedEvidence> out;
  by_key_.VisitFrom({std::string(recipe_key), ""},
                    [&](const Key& key, const EntryPtr& entry) {
                      if (key.first != recipe_key) return false;
                      out.push_back({entry->recipe, entry->stats});
                      return true;
                    });
  return out;
}

namespace {

// A recipe stored before adapter_type existed says UNSPECIFIED: LORA.
AdapterType AdapterOf(const Recipe& r) {
  return r.adapter == AdapterType::kUnspecified ? AdapterType::kLora
                                                : r.adapter;
}

}  // namespace

bool IsTransferable(const Recipe& s, const Recipe& t) {
  // Adapter types differ in activations the memory model does not size, so
  // the model's ratio could not carry one's peak to another.
  return s.model == t.model && s.custom_architecture == t.custom_architecture &&
         s.method == t.method && AdapterOf(s) == AdapterOf(t) &&
         s.precision == t.precision &&
         s.fp32_master_weights == t.fp32_master_weights &&
         s.double_quantization == t.double_quantization &&
         s.optimizer == t.optimizer && s.gpu_count == t.gpu_count &&
         s.parallelism == t.parallelism &&
         s.tensor_parallel_degree == t.tensor_parallel_degree &&
         s.pipeline_parallel_degree == t.pipeline_parallel_degree &&
         s.data_parallel_degree == t.data_parallel_degree;
}

namespace {

double FlopsPerStep(const Recipe& r, const ModelArchitecture& a) {
  return TrainingFlopsPerToken(r, a) * r.sequence_length * r.micro_batch_size *
         r.gradient_accumulation_steps;
}

double TokensPerStep(const Recipe& r) {
  return static_cast<double>(r.sequence_length) * r.micro_batch_size *
         r.gradient_accumulation_steps;
}

}  // namespace

std::optional<TransferredEvidence> TransferEvidence(const KeyedEvidence& source,
                                                    const Recipe& target) {
  if (!IsTransferable(source.recipe, target)) return std::nullopt;
  absl::StatusOr<ModelArchitecture> arch = ResolveArchitecture(target);
  if (!arch.ok()) return std::nullopt;
  TransferredEvidence t;
  t.source = source;
  const double from_flops = FlopsPerStep(source.recipe, *arch);
  t.step_time_scale =
      from_flops > 0 ? FlopsPerStep(target, *arch) / from_flops : 1;
  const MemoryModelConstants& c = DefaultMemoryModelConstants();
  const double from_mem = PredictPeakMemory(source.recipe, *arch, c).total_gb;
  t.memory_scale = from_mem > 0
                       ? PredictPeakMemory(target, *arch, c).total_gb / from_mem
                       : 1;
  EvidenceStats s = source.stats;
  s.recipe_key = RecipeKey(target);
  if (s.gpu_hours_per_successful_step) {
    *s.gpu_hours_per_successful_step *= t.step_time_scale;
  }
  if (s.busy_gpu_hours_per_step) {
    *s.busy_gpu_hours_per_step *= t.step_time_scale;
  }
  s.median_step_time_s *= t.step_time_scale;
  s.p95_step_time_s *= t.step_time_scale;
  s.median_run_step_time_s *= t.step_time_scale;
  s.run_step_time_p10_s *= t.step_time_scale;
  s.run_step_time_p90_s *= t.step_time_scale;
  s.peak_memory_gb *= t.memory_scale;
  s.max_peak_memory_gb *= t.memory_scale;
  s.succeeded_peak.Scale(t.memory_scale);
  s.succeeded_allocated.Scale(t.memory_scale);
  s.succeeded_reserved.Scale(t.memory_scale);
  t.stats = std::move(s);
  return t;
}

std::optional<TransferredEvidence> BestTransfer(
    const std::vector<KeyedEvidence>& candidates, const Recipe& target) {
  const KeyedEvidence* best = nullptr;
  std::tuple<double, int64_t, std::string> best_rank;
  for (const KeyedEvidence& c : candidates) {
    if (!IsTransferable(c.recipe, target) || c.stats.steps_succeeded == 0) {
      continue;
    }
    const double distance =
        std::fabs(std::log(TokensPerStep(target) / TokensPerStep(c.recipe)));
    auto rank =
        std::make_tuple(distance, -c.stats.successful_runs, c.stats.recipe_key);
    if (best == nullptr || rank < best_rank) {
      best = &c;
      best_rank = std::move(rank);
    }
  }
  if (best == nullptr) return std::nullopt;
  return TransferEvidence(*best, target);
}

const char* OffloadName(Offload offload) {
  switch (offload) {
    case Offload::kNone:
      return "NONE";
    case Offload::kCpu:
      return "CPU";
    case Offload::kNvme:
      return "NVME";
    case Offload::kUnspecified:
      break;
  }
  return "UNSPECIFIED";
}

const char* InterconnectName(Interconnect interconnect) {
  switch (interconnect) {
    case Interconnect::kNone:
      return "NONE";
    case Interconnect::kNvlink:
      return "NVLINK";
    case Interconnect::kPcie:
      return "PCIE";
    case Interconnect::kHostMemory:
      return "HOST_MEMORY";
    case Interconnect::kUnspecified:
      break;
  }
  return "UNSPECIFIED";
}

const char* RunOutcomeName(RunOutcome outcome) {
  switch (outcome) {
    case RunOutcome::kSucceeded:
      return "SUCCEEDED";
    case RunOutcome::kFailed:
      return "FAILED";
    case RunOutcome::kOom:
      return "OUT_OF_MEMORY";
    case RunOutcome::kCollectiveTimeout:
      return "COLLECTIVE_TIMEOUT";
    case RunOutcome::kPreempted:
      return "PREEMPTED";
    case RunOutcome::kHardwareError:
      return "HARDWARE_ERROR";
    case RunOutcome::kUnspecified:
      break;
  }
  return "UNSPECIFIED";
}

std::optional<Offload> ParseOffload(absl::string_view name) {
  return ParseEnumName<Offload, Offload::kNvme>(name, OffloadName);
}

std::optional<Interconnect> ParseInterconnect(absl::string_view name) {
  return ParseEnumName<Interconnect, Interconnect::kHostMemory>(
      name, InterconnectName);
}

std::optional<RunOutcome> ParseRunOutcome(absl::string_view name) {
  return ParseEnumName<RunOutcome, RunOutcome::kHardwareError>(name,
                                                               RunOutcomeName);
}

}  // namespace placement::core
