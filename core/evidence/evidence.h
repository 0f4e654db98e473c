#ifndef PLACEMENT_CORE_EVIDENCE_EVIDENCE_H_
#define PLACEMENT_CORE_EVIDENCE_EVIDENCE_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "core/evidence/eval_evidence.h"
#include "core/evidence/log_histogram.h"
#include "core/evidence/most_failed_run.h"
#include "core/evidence/pool_reliability.h"
#include "core/persistent_map.h"
#include "core/recipe.h"

namespace placement::core {

enum class Offload {
  kUnspecified = 0,
  kNone = 1,
  kCpu = 2,
  kNvme = 3,
};

// The link the run's collectives actually used.
enum class Interconnect {
  kUnspecified = 0,
  kNone = 1,  // no collective (single GPU)
  kNvlink = 2,
  kPcie = 3,
  kHostMemory = 4,  // staged through host RAM
};

enum class RunOutcome {
  kUnspecified = 0,
  kSucceeded = 1,
  kFailed = 2,
  kOom = 3,
  kCollectiveTimeout = 4,
  kPreempted = 5,
  kHardwareError = 6,
};

// The core view of one uploaded benchmark or production run. Its rules are
// core::ValidateMeasuredRun and its neighbours (core/evidence/measured_run.h).
struct MeasuredRun {
  std::string run_id;
  std::string recipe_key;  // RecipeKey of the recipe it ran
  std::string sku_id;
  std::string pool_name;
  std::string team;
  int gpu_count = 0;
  absl::Time started = absl::InfinitePast();
  absl::Time ended = absl::InfinitePast();
  int64_t steps_attempted = 0;
  int64_t steps_succeeded = 0;
  double step_time_mean_s = 0;
  double step_time_p50_s = 0;
  double step_time_p95_s = 0;
  double peak_memory_gb = 0;
  // The allocator's two peaks per GPU, when the run reported them (0: not
  // measured): torch.cuda.max_memory_allocated() / max_memory_reserved().
  double peak_memory_allocated_gb = 0;
  double peak_memory_reserved_gb = 0;
  Offload offload = Offload::kUnspecified;
  Interconnect interconnect = Interconnect::kUnspecified;
  bool collectives_opened = false;
  int retries = 0;  // restarts inside this run (each costs GPU time)
  // Why each attempt before the last failed, in order, when the run says
  // (empty: each retry took the run's outcome as its cause,
  // core/evidence/run_attempts.h).
  std::vector<RunOutcome> retry_outcomes;
  RunOutcome outcome = RunOutcome::kUnspecified;

  // GPU-hours consumed: gpu_count x wall time (0 if ended <= started).
  double GpuHours() const;
};

// Step time: 10 ms .. ~10 min, 19% wide buckets (2^(1/4)).
inline constexpr LogHistogramSpec kStepTimeHistogram{0.01, 1.189207115, 64};
// Peak memory: 0.5 GB .. ~800 GB, 12% wide buckets (2^(1/6)).
inline constexpr LogHistogramSpec kPeakMemoryHistogram{0.5, 1.12246204831, 64};
// Start-up per attempt: 1 s .. ~18 h, 19% wide buckets (2^(1/4)).
inline constexpr LogHistogramSpec kStartupHistogram{1, 1.189207115, 64};
// How far the mean start-up may sit from the median attempt's: one run of
// an odd start-up moves the mean by its share, never past this factor.
inline constexpr double kMaxStartupPullFromMedian = 1.25;

// Exact figures of one kind of peak memory over the runs that reported it:
// a count, a sum and a maximum, which merge by addition and max (so a SQL
// rollup row keeps them in the same transaction as the run insert), and
// which give back what the runs reported, not a histogram bucket's middle.
struct PeakMemorySums {
  int64_t runs = 0;  // runs counted (a peak of 0 or less is not counted)
  double sum_gb = 0;
  double max_gb = 0;

  void Add(double peak_gb);
  void Merge(const PeakMemorySums& other);
  // Multiplies every figure (a transfer to a nearby recipe).
  void Scale(double factor);
  // sum_gb / runs; 0 when no run was counted.
  double MeanGb() const;

  friend bool operator==(const PeakMemorySums&,
                         const PeakMemorySums&) = default;
};

// Mergeable sums for one (recipe key, SKU): what the storage rollup table
// keeps. Add() one run or Merge() two rollups; Summarize() derives the
// statistics. Step-time quantiles are over runs (each run contributes its
// own p50 and p95 step time), read from the histograms; peak memory is kept
// exactly (PeakMemorySums), its histogram only a fallback for old rows.
struct EvidenceRollup {
  std::string recipe_key;
  std::string sku_id;
  int64_t runs = 0;
  int64_t successful_runs = 0;
  int64_t offload_runs = 0;
  int64_t retries = 0;
  int64_t collective_runs = 0;
  int64_t nvlink_runs = 0;
  int64_t pcie_runs = 0;
  int64_t host_memory_runs = 0;
  int64_t steps_attempted = 0;
  int64_t steps_succeeded = 0;
  double gpu_hours = 0;  // all attempts, failures and retries included
  // GPU-hours spent in steps: gpu_count x steps_attempted x the run's mean
  // step time, over every run. gpu_hours less this is start-up and time
  // lost to failures (0 in rollups stored before it was kept).
  double busy_gpu_hours = 0;
  // The same two figures over the succeeded runs only: their difference is
  // the start-up (loading the model, compiling, warm-up) of runs that did
  // not fail.
  double succeeded_gpu_hours = 0;
  double succeeded_busy_gpu_hours = 0;
  double max_peak_memory_gb = 0;  // over every run, whatever its outcome
  // Exact peaks of the succeeded runs: peak_memory_gb (of the kind the
  // recipe reports), and the allocator's allocated and reserved peaks of
  // those that reported them. Rollups stored before these were kept carry
  // what migration 0012 could recompute from the stored runs.
  PeakMemorySums succeeded_peak;
  PeakMemorySums succeeded_allocated;
  PeakMemorySums succeeded_reserved;
  LogHistogram step_time_p50_hist;
  LogHistogram step_time_p95_hist;
  LogHistogram peak_memory_hist;  // every run
  // Per attempt (core/evidence/run_attempts.h; migration 0022), over every
  // run, in GPU-hours: the wall time counted (at most the steps' time plus
  // kMaxCountedOverheadSeconds an attempt) and, of it, the time lost to
  // failed attempts. The failed attempts themselves are runs -
  // successful_runs + retries.
  double counted_gpu_hours = 0;
  double lost_gpu_hours = 0;
  // Of the failed attempts, those of the pool's nodes (preempted, hardware
  // error) and of its fabric (collective timeout).
  int64_t node_failed_attempts = 0;
  int64_t fabric_failed_attempts = 0;
  // The succeeded runs' attempts and counted GPU-hours, and each succeeded
  // run's start-up per attempt in seconds (its counted time less its
  // steps' time, over its attempts), weighted by its attempts: the mean
  // start-up is what a projection uses, but never further than
  // kMaxStartupPullFromMedian from that histogram's median, so that one run
  // moves it by its share at most.
  int64_t succeeded_attempts = 0;
  double succeeded_counted_gpu_hours = 0;
  LogHistogram startup_hist;
  // Each run's mean step time, one count a run: its median bounds how far
  // one run can pull the step time a projection uses.
  LogHistogram step_time_mean_hist;
  // The run with the most failed attempts, whatever their cause, in
  // GPU-hours (MostFailedRun): its failures beyond twice the next run's
  // (and two) are left out of the per-attempt figures EvidenceStats reads.
  MostFailedRun most_failed_run;

  void Add(const MeasuredRun& run);
  void Merge(const EvidenceRollup& other);

  friend bool operator==(const EvidenceRollup&,
                         const EvidenceRollup&) = default;
};

// What the planner reads about one (recipe key, SKU).
struct EvidenceStats {
  std::string recipe_key;
  std::string sku_id;
  int64_t runs = 0;
  int64_t successful_runs = 0;
  double gpu_hours = 0;
  int64_t steps_succeeded = 0;
  int64_t steps_attempted = 0;
  // gpu_hours / steps_succeeded; nullopt when no step ever succeeded. Steps
  // kept by a failed run's checkpoints count as succeeded.
  std::optional<double> gpu_hours_per_successful_step;
  // GPU-hours per step attempted, start-up and failures left out
  // (busy_gpu_hours / steps_attempted): what a longer run of the layout
  // pays per step. nullopt when the rollup has no busy time.
  std::optional<double> busy_gpu_hours_per_step;
  // GPU-hours of start-up per succeeded run ((succeeded_gpu_hours -
  // succeeded_busy_gpu_hours) / successful_runs, never below 0). nullopt
  // without a succeeded run that reported busy time.
  std::optional<double> startup_gpu_hours_per_run;
  double median_step_time_s = 0;
  double p95_step_time_s = 0;
  // Per attempt (core/evidence/run_attempts.h): attempts made (runs +
  // retries), those that failed, whatever the cause, and the GPU-hours the
  // runs held the SKU as counted, with the GPU-hours of them lost to the
  // failed attempts (0 in rollups that do not keep them).
  int64_t attempts = 0;
  int64_t failed_attempts = 0;
  int64_t node_failed_attempts = 0;    // preempted, hardware error
  int64_t fabric_failed_attempts = 0;  // collective timeout
  double exposure_gpu_hours = 0;
  double lost_gpu_hours = 0;
  // A succeeded run's attempt outside its steps (start-up): the median in
  // wall hours (within the histogram's 19% bucket) and the mean in
  // GPU-hours; nullopt / 0 without a succeeded run that kept them. A
  // projection uses the mean within kMaxStartupPullFromMedian of the median.
  //
  // A succeeded run that retried spent its failures' detection and relaunch
  // outside its steps too, so its start-up per attempt is larger than an
  // attempt's that did not fail. When some did (retried_succeeded_attempts
  // > 0), the median is taken over the lowest start-ups, as many attempts'
  // worth as there are succeeded runs that cannot have retried
  // (successful_runs - retried_succeeded_attempts: those are the attempts
  // that did not fail), and startup_of_unretried_runs says so: the mean,
  // which holds the failures' overhead, is then not used. When every
  // succeeded run may have retried, the figures stay those of all of them,
  // an upper bound, and startup_holds_retries says so (a projection may
  // take the model's start-up measured elsewhere when it is lower).
  std::optional<double> median_startup_hours_per_attempt;
  double mean_startup_gpu_hours_per_attempt = 0;
  int64_t retried_succeeded_attempts = 0;  // failed attempts of succeeded runs
  bool startup_of_unretried_runs = false;
  bool startup_holds_retries = false;
  // The median of the runs' mean step times, and their p10 and p90 (0 when
  // not kept; within the histogram's 19% buckets).
  double median_run_step_time_s = 0;
  double run_step_time_p10_s = 0;
  double run_step_time_p90_s = 0;
  // The peak memory per GPU that the planner fits with (basis MEASURED) and
  // carries to other SKUs and nearby recipes: the LARGEST peak of a
  // succeeded run, exactly as reported (the conservative figure for a fit
  // decision; with fewer than 20 runs it is also the p95 over runs). When no
  // run succeeded, the largest peak of any run (a run that ran out of memory
  // got at least that far). A rollup whose exact figures do not cover all
  // its succeeded runs (runs stored before they were kept, and no longer
  // stored) falls back to its histogram: the p95 over all runs capped at
  // the largest peak seen, within half a 12% bucket (peak_memory_exact
  // false), unless every run succeeded, where the largest peak is exact.
  double peak_memory_gb = 0;
  bool peak_memory_exact = false;
  double max_peak_memory_gb = 0;  // every run, whatever its outcome
  PeakMemorySums succeeded_peak;  // see EvidenceRollup
  PeakMemorySums succeeded_allocated;
  PeakMemorySums succeeded_reserved;
  double offload_share = 0;  // runs that needed CPU/NVMe offload / runs
  double retry_rate = 0;     // retries / runs
  double failure_share = 0;  // runs that did not succeed / runs
  bool any_collectives = false;
  std::vector<Interconnect> interconnects;  // distinct, in enum order

  friend bool operator==(const EvidenceStats&, const EvidenceStats&) = default;
};

EvidenceStats Summarize(const EvidenceRollup& rollup);

// Aggregates runs of ONE (recipe key, SKU) (the key and SKU are taken from
// the first run; runs of other keys are ignored).
EvidenceStats AggregateRuns(const std::vector<MeasuredRun>& runs);

// Statistics of a recipe close to the one asked for, with the recipe they
// were measured on.
struct KeyedEvidence {
  Recipe recipe;  // normalized
  EvidenceStats stats;

  friend bool operator==(const KeyedEvidence&, const KeyedEvidence&) = default;
};

// How the planner reads evidence. Implementations must be thread-compatible
// for concurrent const calls.
class EvidenceSource {
 public:
  virtual ~EvidenceSource() = default;
  // Statistics of the exact recipe key on the SKU, if any run exists.
  virtual std::optional<EvidenceStats> Find(absl::string_view recipe_key,
                                            absl::string_view sku_id) const = 0;
  // Every measured recipe of `model` trained with `method` on the SKU, in
  // recipe key order.
  virtual std::vector<KeyedEvidence> FindSimilar(
      absl::string_view model, FineTuneMethod method,
      absl::string_view sku_id) const = 0;
  // The exact recipe key as measured on every SKU that has a run of it, in
  // SKU order (what a transfer across SKUs starts from).
  virtual std::vector<KeyedEvidence> FindAcrossSkus(
      absl::string_view recipe_key) const = 0;
  // The pool's failure sums for runs with one GPU (multi_gpu false) or
  // several; an empty rollup when it has none.
  virtual PoolReliabilityRollup PoolReliability(absl::string_view pool_name,
                                                bool multi_gpu) const = 0;
  // The evals of weights trained with `recipe_key`, on the serving SKU in
  // the serving precision (what serve_what_you_evaluated asks for).
  virtual std::vector<EvalEvidence> FindEvals(
      absl::string_view recipe_key, absl::string_view serving_sku_id,
      Precision serving_precision) const = 0;
  // The declared eval pass criteria (CatalogService.SetEvalCriterion), in
  // name order; none by default.
  virtual const std::vector<EvalCriterion>& EvalCriteria() const;
};

// An EvidenceSource kept in memory (tests; the service keeps one refreshed
// from the rollup table). Lookups go through ordered indexes, so their cost
// grows with what they return (and the log of the number of entries), never
// with the whole history: Find by (recipe key, SKU), FindAcrossSkus by recipe
// key, FindSimilar by (model, method, SKU). Copies share structure (see
// PersistentMap): copying is O(1) and a change to the copy costs O(log n),
// so a snapshot is rebuilt from the previous one without copying history.
class InMemoryEvidence : public EvidenceSource {
 public:
  // Adds a run of `recipe` (normalized here; the run's recipe_key is
  // overwritten with RecipeKey(recipe)).
  void AddRun(const Recipe& recipe, MeasuredRun run);
  // Merges a stored rollup of `recipe`.
  void AddRollup(const Recipe& recipe, const EvidenceRollup& rollup);
  // Makes `rollup` the whole evidence of (RecipeKey(recipe), rollup.sku_id),
  // replacing what was there (a stored rollup row read again).
  void SetRollup(const Recipe& recipe, const EvidenceRollup& rollup);
  // Makes `rollup` the whole failure record of (pool, GPU scope), replacing
  // what was there (a stored pool_reliability_rollups row read again).
  void SetPoolReliability(const PoolReliabilityRollup& rollup);
  // Adds an eval of a stored run (eval_results, migration 0019); adding the
  // same (run id, metric, SKU, precision) again replaces it. O(log n) in
  // the evals held, whatever number share its recipe key and target.
  void AddEval(const EvalEvidence& eval);
  // Makes `other`'s evals this evidence's (O(1): the trees are shared), so
  // that a full read of the rollups need not read every eval again.
  void ShareEvalsOf(const InMemoryEvidence& other);
  // How many evals are held.
  std::size_t eval_count() const { return evals_.size(); }
  // Makes `criteria` the whole set of declared eval criteria.
  void SetEvalCriteria(std::vector<EvalCriterion> criteria);
  // Removes the evidence of (recipe key, SKU); false if there was none.
  bool Remove(absl::string_view recipe_key, absl::string_view sku_id);
  // How many stored rollups AddRollup/SetRollup merged into (recipe key,
  // SKU): 1 when it is one row's image, 0 when absent or made of runs only.
  int MergedRollups(absl::string_view recipe_key,
                    absl::string_view sku_id) const;
  // Distinct (recipe key, SKU) entries.
  std::size_t size() const { return by_key_.size(); }
  // Every entry in (recipe key, SKU) order.
  std::vector<KeyedEvidence> All() const;
  // Whether `other` holds the same (recipe key, SKU) entries with the same
  // sums: O(1) when one is an unchanged copy of the other, else one ordered
  // walk of both (what tells a re-read of unchanged rows from a change).
  bool SameRollups(const InMemoryEvidence& other) const;

  std::optional<EvidenceStats> Find(absl::string_view recipe_key,
                                    absl::string_view sku_id) const override;
  std::vector<KeyedEvidence> FindSimilar(
      absl::string_view model, FineTuneMethod method,
      absl::string_view sku_id) const override;
  std::vector<KeyedEvidence> FindAcrossSkus(
      absl::string_view recipe_key) const override;
  PoolReliabilityRollup PoolReliability(absl::string_view pool_name,
                                        bool multi_gpu) const override;
  std::vector<EvalEvidence> FindEvals(
      absl::string_view recipe_key, absl::string_view serving_sku_id,
      Precision serving_precision) const override;
  const std::vector<EvalCriterion>& EvalCriteria() const override;

 private:
  struct Entry {
    Recipe recipe;  // normalized
    EvidenceRollup rollup;
    EvidenceStats stats;
    int merged_rollups = 0;
  };
  using EntryPtr = std::shared_ptr<const Entry>;
  // (recipe key, SKU id)
  using Key = std::pair<std::string, std::string>;
  // (model, method, SKU id, recipe key)
  using SimilarKey = std::tuple<std::string, int, std::string, std::string>;
  static SimilarKey SimilarKeyOf(const Entry& entry);
  bool SamePoolReliability(const InMemoryEvidence& other) const;

  // The entry of `recipe` on `sku_id` after `change`, stored in both
  // indexes.
  template <typename Change>
  void Update(const Recipe& recipe, const std::string& sku_id, Change change);

  PersistentMap<Key, EntryPtr> by_key_;
  PersistentMap<SimilarKey, EntryPtr> by_similar_;
  // (pool name, multi GPU): one small row per pool and scope.
  PersistentMap<std::pair<std::string, bool>, PoolReliabilityRollup>
      pool_reliability_;
  // (recipe key, serving SKU, serving precision, run id, metric) -> the
  // eval: a node per eval, so that adding one copies O(log n) nodes, never
  // the list of its (recipe key, serving SKU, precision); FindEvals reads
  // that list as one key range.
  using EvalKey =
      std::tuple<std::string, std::string, int, std::string, std::string>;
  PersistentMap<EvalKey, EvalEvidence> evals_;
  // Shared by copies, replaced whole.
  std::shared_ptr<const std::vector<EvalCriterion>> eval_criteria_;
};

// Evidence of a nearby recipe carried over to `target` (TRANSFERRED).
struct TransferredEvidence {
  KeyedEvidence source;
  double step_time_scale = 1;  // target / source
  double memory_scale = 1;     // target / source
  EvidenceStats stats;         // scaled statistics for the target
};

// Whether evidence of `source` may be carried over to `target`: same model,
// method, adapter type, precision, optimizer, parallel layout and GPU count;
// only the sequence length, LoRA rank and targets, micro-batch, gradient
// accumulation, checkpointing and flash attention may differ.
bool IsTransferable(const Recipe& source, const Recipe& target);

// Scales `source` statistics to `target` (both normalized, valid):
//  - step times and GPU-hours per successful step by the ratio of training
//    FLOPs per optimizer step (~ tokens; attention adds the s^2 part);
//  - peak memory by the ratio of the memory model's predictions;
//  - counts, failure, retry and offload shares unchanged (a recipe that
//    needed offload at a shorter length will need it at a longer one).
// Returns nullopt if not IsTransferable.
std::optional<TransferredEvidence> TransferEvidence(const KeyedEvidence& source,
                                                    const Recipe& target);

// Among `candidates`, the transferable one nearest to `target` (smallest
// |log tokens-per-step ratio|, then most successful runs, then recipe key).
std::optional<TransferredEvidence> BestTransfer(
    const std::vector<KeyedEvidence>& candidates, const Recipe& target);

// The one textual form of each enum (core/enum_names.h), and its inverse:
// nullopt for a name that is not one of them.
const char* OffloadName(Offload offload);
std::optional<Offload> ParseOffload(absl::string_view name);
const char* InterconnectName(Interconnect interconnect);
std::optional<Interconnect> ParseInterconnect(absl::string_view name);
const char* RunOutcomeName(RunOutcome outcome);
std::optional<RunOutcome> ParseRunOutcome(absl::string_view name);

}  // namespace placement::core

#endif  // PLACEMENT_CORE_EVIDENCE_EVIDENCE_H_
