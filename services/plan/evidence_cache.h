#ifndef PLACEMENT_SERVICES_PLAN_EVIDENCE_CACHE_H_
#define PLACEMENT_SERVICES_PLAN_EVIDENCE_CACHE_H_

#include <atomic>
#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "core/evidence/evidence.h"
#include "core/evidence/fleet_model.h"
#include "core/plan/standard.h"
#include "core/pool.h"
#include "core/queue/start_estimate.h"
#include "core/sku.h"
#include "services/auth/principal.h"
#include "services/auth/token_directory.h"
#include "storage/session/db_session.h"
#include "storage/session/transaction_horizon.h"

namespace placement::services {

// Everything PlacePlan reads, as of one moment: the catalog, the pools and the
// evidence rollups. Immutable once published. A refresh copies the previous
// snapshot and applies what changed: the evidence shares its structure with
// the previous snapshot's (core::InMemoryEvidence), so the copy is O(1) and
// each changed rollup costs O(log n). A member added here is carried over
// from the previous snapshot by that copy unless the refresh replaces it.
class CatalogSnapshot : public core::EvidenceSource {
 public:
  std::vector<core::GpuSku> skus;  // by id (byte order)
  std::vector<core::Pool> pools;   // by name (byte order)
  core::InMemoryEvidence evidence;
  // The pool_reliability_rollups rows as read, by (pool name, multi_gpu),
  // each also set in `evidence`: what the next incremental read compares
  // the table with (it is read whole each time).
  std::vector<core::PoolReliabilityRollup> pool_reliability;
  // The active standards, by id (read whole by every refresh).
  std::vector<core::Standard> standards;
  // The active standards that apply to a plan of `team`: the fleet-wide
  // ones (written with no team) and those written for that team.
  std::vector<core::Standard> StandardsFor(absl::string_view team) const;
  // Whether an active standard is written for a team (then two teams' plans
  // of one request may differ).
  bool HasTeamStandards() const;
  // Each pool's queue as its orchestrator last reported it, with what its
  // reports taught and the forecast made from it once per report (the rows
  // that changed are read and forecast again), by pool name. A pool with
  // only uploaded waits has an entry whose state was never observed.
  std::map<std::string, std::shared_ptr<const core::PoolQueue>> pool_queues;
  // Unrevoked API tokens by the SHA-256 of their secret.
  absl::flat_hash_map<std::string, Principal> tokens;
  // When the read that made this snapshot began, by the wall clock: shown
  // to users (a plan's evidence_time), never used to order or pace anything.
  absl::Time loaded_at = absl::InfinitePast();
  // The same moment by the monotonic clock (what staleness is measured by).
  std::chrono::steady_clock::time_point read_started;
  // The database transactions the read saw committed (evidence versions).
  // Snapshots are ordered by it: a read that began later sees at least what
  // an earlier one saw, whatever the wall clock says.
  storage::TransactionHorizon horizon;
  // 1 for the first snapshot this replica published, then one more for
  // each published after it (0 until published).
  int64_t version = 0;
  // How many writes this replica had committed when the read began: every
  // one of them is in this snapshot.
  int64_t local_writes_included = 0;
  // Whether this snapshot was made by applying changes to the previous one
  // (false: a full read).
  bool incremental = false;
  // How many changed rows and removed keys an incremental read applied (0
  // for a full read).
  int64_t changes_applied = 0;
  // Which eval_results the evals came from (storage::EvalTableId), and how
  // many eval rows this read took from the database: those inserted since
  // the snapshot it was made from, full reads included (only a first read,
  // or one of a table emptied or made again since, reads them all).
  int64_t eval_table_id = 0;
  int64_t evals_read = 0;
  // The fleet model fitted to the evidence of this or an earlier snapshot
  // (re-fitted at most every refit interval); null before the first fit.
  std::shared_ptr<const core::FleetModel> fleet;

  std::optional<core::EvidenceStats> Find(
      absl::string_view recipe_key, absl::string_view sku_id) const override {
    return evidence.Find(recipe_key, sku_id);
  }
  std::vector<core::KeyedEvidence> FindSimilar(
      absl::string_view model, core::FineTuneMethod method,
      absl::string_view sku_id) const override {
    return evidence.FindSimilar(model, method, sku_id);
  }
  // The queue of `pool_name` when its orchestrator has reported (null
  // otherwise).
  const core::PoolQueue* ReportedQueue(absl::string_view pool_name) const {
    auto it = pool_queues.find(std::string(pool_name));
    if (it == pool_queues.end() ||
        it->second->state.observed == absl::InfinitePast()) {
      return nullptr;
    }
    return it->second.get();
  }
  std::vector<core::KeyedEvidence> FindAcrossSkus(
      absl::string_view recipe_key) const override {
    return evidence.FindAcrossSkus(recipe_key);
  }
  core::PoolReliabilityRollup PoolReliability(absl::string_view pool_name,
                                              bool multi_gpu) const override {
    return evidence.PoolReliability(pool_name, multi_gpu);
  }
  std::vector<core::EvalEvidence> FindEvals(
      absl::string_view recipe_key, absl::string_view serving_sku_id,
      core::Precision serving_precision) const override {
    return evidence.FindEvals(recipe_key, serving_sku_id, serving_precision);
  }
  const std::vector<core::EvalCriterion>& EvalCriteria() const override {
    return evidence.EvalCriteria();
  }
};

// Reads a whole snapshot in one transaction. `local_writes_included`: how
// many local writes had committed before this call. `evals_from` (when
// given): a snapshot whose evals are taken as they are, only those inserted
// since it being read (eval rows are never updated nor deleted).
absl::StatusOr<std::shared_ptr<CatalogSnapshot>> ReadFullSnapshot(
    storage::DbSession& session, int64_t local_writes_included,
    const CatalogSnapshot* evals_from = nullptr);

// Reads only what changed since `base` was read (one transaction) and
// applies it to a copy of `base`: the result equals what ReadFullSnapshot
// would read at the same moment. FAILED_PRECONDITION when a change cannot
// be applied exactly (a stored rollup whose key differs from the key of its
// recipe, as after a change of the key's definition; a pool's failure row
// that is gone): read in full then.
absl::StatusOr<std::shared_ptr<CatalogSnapshot>> ReadSnapshotChanges(
    storage::DbSession& session, const CatalogSnapshot& base,
    int64_t local_writes_included);

// Whether a read at horizon `a` began no earlier than one at `b`: the
// database's own order (xmax never decreases; at equal xmax a later read
// sees fewer transactions in progress).
bool HorizonAtOrAfter(const storage::TransactionHorizon& a,
                      const storage::TransactionHorizon& b);

// Each replica's in-memory copy of pools and evidence, so that PlacePlan
// makes no database round trip. A background thread LISTENs for the
// notifications replicas send after they change pools or rollups (see
// NoteLocalChange) and reads what changed at once (at most every 50 ms),
// applying it to the current snapshot (ReadSnapshotChanges), and at least
// every 30 s without one (a notification lost with the process that was
// to send it then costs at most that long); it also re-reads everything
// every `reread_interval` as a safety net, and after every reconnection. When
// the database is away the last snapshot keeps serving, and Age() says since
// when it may have missed a change. Snapshots are ordered by their
// transaction horizon and the loop is paced by the monotonic clock: a step
// of the wall clock changes nothing but the evidence_time plans show.
class EvidenceCache : public TokenDirectory {
 public:
  // The fleet model is re-fitted on the cache's thread at most every
  // `refit_interval` (a fit reads every rollup of the snapshot; snapshots in
  // between carry the last fit), and only when the rollups or the SKUs
  // changed since the last fit: a fit of the same cells gives the same
  // model, and costs CPU that grows with the history.
  // `wall_clock`: what stamps a snapshot's loaded_at (absl::Now when null;
  // tests step it).
  EvidenceCache(std::string database_url, absl::Duration reread_interval,
                absl::Duration refit_interval = absl::Seconds(10),
                std::function<absl::Time()> wall_clock = nullptr);
  ~EvidenceCache() override;

  EvidenceCache(const EvidenceCache&) = delete;
  EvidenceCache& operator=(const EvidenceCache&) = delete;

  // The latest snapshot; null until the first successful read.
  std::shared_ptr<const CatalogSnapshot> Current() const;

  // Time since the current snapshot was last known to match the database
  // (by the monotonic clock): since the start of its read, then of each
  // wait on the change listener's live connection that brought no change
  // (less the 50 ms a replica may hold back its notification), or of each
  // read that found no change. It grows while the database is away.
  // Infinite before the first read.
  absl::Duration Age() const;

  // The newest transaction horizon the current snapshot is known to match
  // (a read that found no change confirms it at its own horizon): its xmax
  // bounds the evidence versions this replica has seen exist.
  storage::TransactionHorizon KnownHorizon() const;

  // TokenDirectory: the current snapshot's unrevoked tokens (UNAVAILABLE
  // until the first successful read).
  absl::StatusOr<Principal> FindToken(
      absl::string_view secret_hash) const override;

  // How many times the fleet model was fitted, and how many due refits
  // were skipped because nothing it is fitted to had changed.
  int64_t fleet_fits() const { return fleet_fits_.load(); }
  int64_t fleet_refits_skipped() const { return fleet_refits_skipped_.load(); }

  // Asks the thread to re-read now.
  void RefreshSoon();

  // This replica committed a change to pools or evidence: every replica
  // (this one included) is notified, at most every 50 ms.
  void NoteLocalChange();

  // Reads what changed on the caller's session and publishes the result, so
  // that a change this replica just committed (a new pool) is in the very
  // next plan. A snapshot is only ever replaced by one read after it; a
  // read that finds no change publishes nothing (plans stay cached). It
  // carries the last fleet fit, unless the fleet model is re-fitted on
  // every change (a `refit_interval` of zero): then it fits too, so that
  // every snapshot's fit is of its own evidence and a plan does not depend
  // on whether the cache's thread read a change before the caller did.
  absl::Status ReloadWith(storage::DbSession& session);

  // Reads everything on the caller's session and publishes it (the fleet
  // model as ReloadWith).
  absl::Status FullReloadWith(storage::DbSession& session);

  // This replica committed a change to evidence and is about to acknowledge
  // it: snapshots read from now on include it, and WhenCurrent waits for one.
  void NoteLocalWriteCommitted();

  // Calls `ready` with the first snapshot that includes every write this
  // replica had acknowledged before this call and, if `min_version` > 0,
  // the transaction `min_version` (an upload's evidence version, from any
  // replica). Calls it at once (on the caller's thread) when the current
  // snapshot does; otherwise asks for a re-read and, when a snapshot does or
  // `timeout` (monotonic) has passed (then with `reached` false), calls it
  // on the cache's callback threads, a few, so that waiters plan in
  // parallel and never on the thread that reads. `ready` must not block.
  // Whether `snapshot` includes what WhenCurrent(min_version, ...) would
  // wait for now.
  bool Includes(const CatalogSnapshot& snapshot, int64_t min_version) const;

  using ReadyCallback = std::function<void(
      std::shared_ptr<const CatalogSnapshot> snapshot, bool reached)>;
  void WhenCurrent(int64_t min_version, absl::Duration timeout,
                   ReadyCallback ready);

 private:
  using SteadyTime = std::chrono::steady_clock::time_point;
  struct Waiter {
    int64_t local_writes = 0;
    int64_t min_version = 0;
    SteadyTime deadline;
    ReadyCallback ready;
  };
  bool IncludesLocked(const CatalogSnapshot& snapshot,
                      const Waiter& waiter) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  bool RefitsOnEveryChange() const {
    return refit_interval_ <= absl::ZeroDuration();
  }
  // Runs the ready callbacks of served waiters, a few at a time.
  class CallbackThreads {
   public:
    explicit CallbackThreads(int threads);
    ~CallbackThreads();  // runs what is queued, then joins
    void Run(std::function<void()> task);

   private:
    void Work();
    absl::Mutex mu_;
    std::deque<std::function<void()>> queue_ ABSL_GUARDED_BY(mu_);
    bool stopping_ ABSL_GUARDED_BY(mu_) = false;
    std::vector<std::thread> threads_;
  };
  // Calls the waiters the current snapshot satisfies or whose deadline is
  // past (`all`: every waiter, as the cache stops).
  void ServeWaiters(bool all);

  void Loop();
  // Reads what changed since the current snapshot (everything when `full`,
  // when there is none yet, or when the changes cannot be applied exactly),
  // then (when `refit`) fits the fleet model, then publishes.
  // An incremental read that finds no change (and no refit that changes the
  // model) publishes nothing: the current snapshot stays (its plans stay
  // cached) and is only confirmed current as of the read.
  absl::Status Reload(storage::DbSession& session, bool full, bool refit);
  // The current snapshot `base` still matches the database as of `as_of`;
  // `read` (when given): a read that found no change since `base`.
  void ConfirmCurrent(const CatalogSnapshot* base, SteadyTime as_of,
                      const CatalogSnapshot* read);
  // Frees, on the cache's thread, the replaced snapshots nobody else holds
  // any more: a snapshot from a full read owns every node of its evidence,
  // and the last reader to drop it would otherwise free them all on a
  // request's thread.
  void FreeRetired();
  // Publishes `snapshot` unless a snapshot read later is already current.
  void Publish(std::shared_ptr<CatalogSnapshot> snapshot);

  const std::string database_url_;
  const absl::Duration reread_interval_;
  mutable absl::Mutex mu_;
  const std::function<absl::Time()> wall_clock_;
  std::shared_ptr<const CatalogSnapshot> current_ ABSL_GUARDED_BY(mu_);
  int64_t published_ ABSL_GUARDED_BY(mu_) = 0;
  // Since when (monotonic) and to which horizon and local writes the
  // current snapshot is known to match the database.
  SteadyTime current_as_of_ ABSL_GUARDED_BY(mu_);
  storage::TransactionHorizon known_horizon_ ABSL_GUARDED_BY(mu_);
  int64_t known_local_writes_ ABSL_GUARDED_BY(mu_) = 0;
  std::vector<Waiter> waiters_ ABSL_GUARDED_BY(mu_);
  // Snapshots replaced by a newer one, kept until only this holds them.
  std::vector<std::shared_ptr<const CatalogSnapshot>> retired_
      ABSL_GUARDED_BY(mu_);
  const absl::Duration refit_interval_;
  std::shared_ptr<const core::FleetModel> fleet_ ABSL_GUARDED_BY(mu_);
  // What the last fit was fitted to (copies share structure with the
  // snapshot's: O(1)), to tell whether a due refit would change anything.
  absl::Mutex fit_mu_;
  core::InMemoryEvidence fit_evidence_ ABSL_GUARDED_BY(fit_mu_);
  std::vector<core::GpuSku> fit_skus_ ABSL_GUARDED_BY(fit_mu_);
  std::atomic<int64_t> fleet_fits_{0};
  std::atomic<int64_t> fleet_refits_skipped_{0};
  std::atomic<int64_t> local_writes_{0};
  std::atomic<bool> refresh_requested_{false};
  std::atomic<bool> notify_pending_{false};
  absl::Notification stop_;
  // Before thread_: started first, joined (and drained) after it.
  CallbackThreads callbacks_{4};
  std::thread thread_;
};

}  // namespace placement::services

#endif  // PLACEMENT_SERVICES_PLAN_EVIDENCE_CACHE_H_
