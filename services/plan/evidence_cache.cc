#include "services/plan/evidence_cache.h"

#include <algorithm>
#include <iostream>
#include <iterator>
#include <tuple>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "core/check.h"
#include "core/recipe.h"
#include "placement/v1/pool_state.pb.h"
#include "placement/v1/recipe.pb.h"
#include "services/api/pool_state_convert.h"
#include "services/api/recipe_convert.h"
#include "storage/session/change_listener.h"
#include "storage/session/db_session.h"
#include "storage/stores/catalog_read.h"

namespace placement::services {
namespace {

// How long one wait for notifications lasts: the bound on how late a stop
// request, a RefreshSoon() or a NoteLocalChange() is noticed.
constexpr absl::Duration kWaitSlice = absl::Milliseconds(100);
// Re-reads and notifications are coalesced to at most one per this interval:
// a burst of uploads costs a few re-reads, not one each.
constexpr absl::Duration kCoalesce = absl::Milliseconds(50);
// An incremental read at least this often, notified or not: what a change
// whose notification was lost waits at most. Its cost is that of the
// changes, unlike the full re-read's.
constexpr absl::Duration kPollInterval = absl::Seconds(30);

void PutToken(const storage::TokenRecord& token, CatalogSnapshot& snapshot) {
  Principal principal{token.token_id, token.name, Role::kAgent, token.teams};
  if (token.revoked_at.has_value() || !ParseRole(token.role, &principal.role)) {
    snapshot.tokens.erase(token.secret_hash);
    return;
  }
  snapshot.tokens.insert_or_assign(token.secret_hash, std::move(principal));
}

// Inserts or replaces `item` in `sorted` (ordered by `id`).
template <typename T, typename Id>
void PutSorted(std::vector<T>& sorted, T item, Id id) {
  auto it = std::lower_bound(
      sorted.begin(), sorted.end(), id(item),
      [&](const T& a, const std::string& b) { return id(a) < b; });
  if (it != sorted.end() && id(*it) == id(item)) {
    *it = std::move(item);
  } else {
    sorted.insert(it, std::move(item));
  }
}

template <typename T, typename Id>
void EraseSorted(std::vector<T>& sorted, const std::string& key, Id id) {
  auto it = std::lower_bound(
      sorted.begin(), sorted.end(), key,
      [&](const T& a, const std::string& b) { return id(a) < b; });
  if (it != sorted.end() && id(*it) == key) sorted.erase(it);
}

const std::string& SkuId(const core::GpuSku& sku) { return sku.id; }
const std::string& PoolName(const core::Pool& pool) { return pool.name; }

std::optional<core::Recipe> ParseStoredRecipe(
    const storage::StoredRollup& stored) {
  v1::Recipe recipe;
  if (!recipe.ParseFromString(stored.recipe_proto)) {
    std::cerr << "placementd: skipping rollup " << stored.rollup.recipe_key
              << ": its recipe does not parse\n";
    return std::nullopt;
  }
  return RecipeFromProto(recipe);
}

absl::Status NotExact(absl::string_view recipe_key) {
  return absl::FailedPreconditionError(
      absl::StrCat("rollup ", recipe_key,
                   " is not the only image of its evidence; read in full"));
}

// Applies one changed rollup row: exact only when the row is the whole of
// its entry (its key is its recipe's key, and no other row merged into it).
absl::Status ApplyRollup(const storage::StoredRollup& stored,
                         core::InMemoryEvidence& evidence) {
  const std::string& key = stored.rollup.recipe_key;
  const std::string& sku = stored.rollup.sku_id;
  if (evidence.MergedRollups(key, sku) > 1) return NotExact(key);
  std::optional<core::Recipe> recipe = ParseStoredRecipe(stored);
  if (!recipe.has_value()) {
    evidence.Remove(key, sku);  // as a full read would skip it
    return absl::OkStatus();
  }
  if (core::RecipeKey(core::NormalizeRecipe(*recipe)) != key) {
    return NotExact(key);
  }
  evidence.SetRollup(*recipe, stored.rollup);
  return absl::OkStatus();
}

bool SamePoolScope(const core::PoolReliabilityRollup& a,
                   const core::PoolReliabilityRollup& b) {
  return a.pool_name == b.pool_name && a.multi_gpu == b.multi_gpu;
}

// Applies the pool failure rows read whole (`read`, by pool and scope) to
// `snapshot`, whose rows are its base's: how many rows changed or appeared.
// FAILED_PRECONDITION when a row of the base is gone (nothing deletes them;
// evidence has no removal of a pool's row, so only a full read is exact).
absl::StatusOr<int64_t> ApplyPoolReliability(
    std::vector<core::PoolReliabilityRollup> read, CatalogSnapshot& snapshot) {
  if (read == snapshot.pool_reliability) return 0;
  auto gone = [](const core::PoolReliabilityRollup& row) {
    return absl::FailedPreconditionError(
        absl::StrCat("the failure record of pool ", row.pool_name,
                     " is gone; read in full"));
  };
  // Both lists are ordered by (pool name, multi_gpu): one merge walk.
  auto before = snapshot.pool_reliability.begin();
  const auto end = snapshot.pool_reliability.end();
  int64_t changed = 0;
  for (const core::PoolReliabilityRollup& row : read) {
    if (before != end && std::tie(before->pool_name, before->multi_gpu) <
                             std::tie(row.pool_name, row.multi_gpu)) {
      return gone(*before);
    }
    if (before != end && SamePoolScope(*before, row)) {
      const bool same = *before == row;
      ++before;
      if (same) continue;
    }
    snapshot.evidence.SetPoolReliability(row);
    ++changed;
  }
  if (before != end) return gone(*before);
  snapshot.pool_reliability = std::move(read);
  return changed;
}

// The active standards as the planner reads them; one whose recipe class
// does not parse is skipped (and said so).
std::vector<core::Standard> StandardsFrom(
    std::vector<storage::StandardRecord> records) {
  std::vector<core::Standard> standards;
  standards.reserve(records.size());
  for (storage::StandardRecord& record : records) {
    v1::Recipe recipe_class;
    if (!recipe_class.ParseFromString(record.recipe_class_proto)) {
      std::cerr << "placementd: skipping standard "
                << record.standard.standard_id
                << ": its recipe class does not parse\n";
      continue;
    }
    record.standard.recipe_class =
        core::RecipeClassOf(RecipeFromProto(recipe_class));
    standards.push_back(std::move(record.standard));
  }
  return standards;
}

// Whether two lists of active standards (by id) are the same: a standard's
// row changes only when it is retired, which removes it from the list.
bool SameStandards(const std::vector<core::Standard>& a,
                   const std::vector<core::Standard>& b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end(),
                    [](const core::Standard& x, const core::Standard& y) {
                      return x.standard_id == y.standard_id;
                    });
}

// A pool's queue from its row: the report parsed and forecast once.
std::shared_ptr<const core::PoolQueue> QueueFromRecord(
    storage::PoolStateRecord record) {
  auto queue = std::make_shared<core::PoolQueue>();
  queue->history = std::move(record.history);
  queue->planned = std::move(record.planned);
  if (!record.observed.has_value()) return queue;  // uploaded waits only
  v1::PoolState report;
  if (!report.ParseFromString(record.report)) {
    std::cerr << "placementd: skipping the state of pool " << record.pool_name
              << ": its report does not parse\n";
    return queue;
  }
  *queue = core::MakePoolQueue(PoolStateFromProto(report), record.received,
                               std::move(queue->history),
                               std::move(queue->planned), record.predictions);
  return queue;
}

// A pool's report replaces its whole row: its queue is forecast again.
void ApplyPoolStateChanges(storage::CatalogChanges& changes,
                           CatalogSnapshot& snapshot) {
  for (const std::string& name : changes.removed_pool_states) {
    snapshot.pool_queues.erase(name);
    ++snapshot.changes_applied;
  }
  for (storage::PoolStateRecord& record : changes.pool_states) {
    std::string name = record.pool_name;
    snapshot.pool_queues[std::move(name)] = QueueFromRecord(std::move(record));
    ++snapshot.changes_applied;
  }
}

// The rows removed since the base's read, taken out of the snapshot.
absl::Status ApplyRemovals(const storage::CatalogChanges& changes,
                           CatalogSnapshot& snapshot) {
  for (const std::string& id : changes.removed_skus) {
    EraseSorted(snapshot.skus, id, SkuId);
  }
  for (const std::string& name : changes.removed_pools) {
    EraseSorted(snapshot.pools, name, PoolName);
  }
  for (const auto& [key, sku] : changes.removed_rollups) {
    if (snapshot.evidence.MergedRollups(key, sku) > 1) return NotExact(key);
    snapshot.evidence.Remove(key, sku);
  }
  for (const std::string& token_id : changes.removed_tokens) {
    absl::erase_if(snapshot.tokens, [&](const auto& entry) {
      return entry.second.token_id == token_id;
    });
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::shared_ptr<CatalogSnapshot>> ReadFullSnapshot(
    storage::DbSession& session, int64_t local_writes_included,
    const CatalogSnapshot* evals_from) {
  auto snapshot = std::make_shared<CatalogSnapshot>();
  snapshot->loaded_at = absl::Now();
  // Counted before the read: the local writes it counts committed before the
  // read's transaction began, so the read sees them.
  snapshot->local_writes_included = local_writes_included;
  std::optional<storage::EvalsHeld> evals_held;
  if (evals_from != nullptr) {
    evals_held =
        storage::EvalsHeld{evals_from->horizon, evals_from->eval_table_id};
  }
  absl::StatusOr<storage::CatalogRows> rows =
      storage::ReadCatalog(session, evals_held);
  if (!rows.ok()) return rows.status();
  snapshot->horizon = std::move(rows->horizon);
  for (const storage::TokenRecord& token : rows->tokens) {
    PutToken(token, *snapshot);
  }
  snapshot->skus = std::move(rows->skus);
  std::sort(
      snapshot->skus.begin(), snapshot->skus.end(),
      [](const core::GpuSku& a, const core::GpuSku& b) { return a.id < b.id; });
  for (storage::PoolRecord& record : rows->pools) {
    snapshot->pools.push_back(std::move(record.pool));
  }
  std::sort(
      snapshot->pools.begin(), snapshot->pools.end(),
      [](const core::Pool& a, const core::Pool& b) { return a.name < b.name; });
  for (const storage::StoredRollup& stored : rows->rollups) {
    std::optional<core::Recipe> recipe = ParseStoredRecipe(stored);
    if (recipe.has_value())
      snapshot->evidence.AddRollup(*recipe, stored.rollup);
  }
  for (const core::PoolReliabilityRollup& row : rows->pool_reliability) {
    snapshot->evidence.SetPoolReliability(row);
  }
  snapshot->pool_reliability = std::move(rows->pool_reliability);
  // The evals `evals_from` holds stay exact (rows are never updated nor
  // deleted, and the table is the same one): only the new ones were read.
  if (rows->evals_since_held) {
    snapshot->evidence.ShareEvalsOf(evals_from->evidence);
  }
  snapshot->eval_table_id = rows->eval_table_id;
  snapshot->evals_read = static_cast<int64_t>(rows->evals.size());
  for (const core::EvalEvidence& eval : rows->evals) {
    snapshot->evidence.AddEval(eval);
  }
  snapshot->evidence.SetEvalCriteria(std::move(rows->eval_criteria));
  snapshot->standards = StandardsFrom(std::move(rows->standards));
  for (storage::PoolStateRecord& record : rows->pool_states) {
    std::string name = record.pool_name;
    snapshot->pool_queues[std::move(name)] = QueueFromRecord(std::move(record));
  }
  return snapshot;
}

absl::StatusOr<std::shared_ptr<CatalogSnapshot>> ReadSnapshotChanges(
    storage::DbSession& session, const CatalogSnapshot& base,
    int64_t local_writes_included) {
  const absl::Time loaded_at = absl::Now();
  absl::StatusOr<storage::CatalogChanges> changes =
      storage::ReadCatalogChanges(session, base.horizon);
  if (!changes.ok()) return changes.status();
  if (changes->eval_table_id != base.eval_table_id) {
    // Emptied (TRUNCATE) or made again: the evals held are not its rows.
    return absl::FailedPreconditionError(
        "eval_results is not the table the previous read saw; read in full");
  }
  // Everything is carried over; what changed is replaced below.
  auto snapshot = std::make_shared<CatalogSnapshot>(base);
  snapshot->loaded_at = loaded_at;
  snapshot->local_writes_included = local_writes_included;
  snapshot->horizon = std::move(changes->horizon);
  snapshot->incremental = true;
  snapshot->changes_applied = static_cast<int64_t>(
      changes->removed_skus.size() + changes->removed_pools.size() +
      changes->removed_rollups.size() + changes->removed_tokens.size() +
      changes->skus.size() + changes->pools.size() + changes->rollups.size() +
      changes->tokens.size() + changes->evals.size());

  // Removals first: a key removed and written again is among the rows.
  if (absl::Status status = ApplyRemovals(*changes, *snapshot); !status.ok()) {
    return status;
  }
  for (core::GpuSku& sku : changes->skus) {
    PutSorted(snapshot->skus, std::move(sku), SkuId);
  }
  for (storage::PoolRecord& record : changes->pools) {
    PutSorted(snapshot->pools, std::move(record.pool), PoolName);
  }
  for (const storage::StoredRollup& stored : changes->rollups) {
    if (absl::Status status = ApplyRollup(stored, snapshot->evidence);
        !status.ok()) {
      return status;
    }
  }
  for (const storage::TokenRecord& token : changes->tokens) {
    PutToken(token, *snapshot);
  }
  snapshot->evals_read = static_cast<int64_t>(changes->evals.size());
  for (const core::EvalEvidence& eval : changes->evals) {
    snapshot->evidence.AddEval(eval);
  }
  // Read whole (tens of rows): a change is a difference from the base.
  if (changes->eval_criteria != snapshot->evidence.EvalCriteria()) {
    snapshot->evidence.SetEvalCriteria(std::move(changes->eval_criteria));
    ++snapshot->changes_applied;
  }
  // Counted as changes, so that a refresh that changed no other row still
  // publishes a changed pool row.
  absl::StatusOr<int64_t> pool_rows_changed =
      ApplyPoolReliability(std::move(changes->pool_reliability), *snapshot);
  if (!pool_rows_changed.ok()) return pool_rows_changed.status();
  snapshot->changes_applied += *pool_rows_changed;
  // A standard written or retired is a change too: plans cached against
  // the base must not be served (PlanCache is per snapshot).
  std::vector<core::Standard> standards =
      StandardsFrom(std::move(changes->standards));
  if (!SameStandards(standards, snapshot->standards)) {
    snapshot->standards = std::move(standards);
    ++snapshot->changes_applied;
  }
  ApplyPoolStateChanges(*changes, *snapshot);
  return snapshot;
}

bool HorizonAtOrAfter(const storage::TransactionHorizon& a,
                      const storage::TransactionHorizon& b) {
  if (a.xmax != b.xmax) return a.xmax > b.xmax;
  return a.in_progress.size() <= b.in_progress.size();
}

EvidenceCache::CallbackThreads::CallbackThreads(int threads) {
  for (int i = 0; i < threads; ++i) threads_.emplace_back([this] { Work(); });
}

EvidenceCache::CallbackThreads::~CallbackThreads() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
  }
  for (std::thread& thread : threads_) thread.join();
}

void EvidenceCache::CallbackThreads::Run(std::function<void()> task) {
  absl::MutexLock lock(&mu_);
  queue_.push_back(std::move(task));
}

void EvidenceCache::CallbackThreads::Work() {
  while (true) {
    std::function<void()> task;
    {
      absl::MutexLock lock(&mu_);
      mu_.Await(absl::Condition(
          +[](CallbackThreads* self) ABSL_EXCLUSIVE_LOCKS_REQUIRED(self->mu_) {
            return self->stopping_ || !self->queue_.empty();
          },
          this));
      if (queue_.empty()) return;  // stopping, and nothing left to run
      task = std::move(queue_.front());
      queue_.pop_front();
    }
    task();
  }
}

EvidenceCache::EvidenceCache(std::string database_url,
                             absl::Duration reread_interval,
                             absl::Duration refit_interval,
                             std::function<absl::Time()> wall_clock)
    : database_url_(std::move(database_url)),
      reread_interval_(reread_interval),
      wall_clock_(wall_clock != nullptr ? std::move(wall_clock)
                                        : std::function<absl::Time()>(
                                              [] { return absl::Now(); })),
      refit_interval_(refit_interval),
      thread_([this] { Loop(); }) {}

EvidenceCache::~EvidenceCache() {
  stop_.Notify();
  thread_.join();
  ServeWaiters(/*all=*/true);
}

void EvidenceCache::NoteLocalWriteCommitted() { local_writes_.fetch_add(1); }

bool EvidenceCache::IncludesLocked(const CatalogSnapshot& snapshot,
                                   const Waiter& waiter) const {
  // What a read that found no change confirmed counts for the current
  // snapshot too.
  const bool is_current = &snapshot == current_.get();
  const int64_t local_writes =
      is_current ? std::max(snapshot.local_writes_included, known_local_writes_)
                 : snapshot.local_writes_included;
  return local_writes >= waiter.local_writes &&
         (waiter.min_version <= 0 ||
          snapshot.horizon.Includes(waiter.min_version) ||
          (is_current && known_horizon_.Includes(waiter.min_version)));
}

bool EvidenceCache::Includes(const CatalogSnapshot& snapshot,
                             int64_t min_version) const {
  absl::MutexLock lock(&mu_);
  return IncludesLocked(snapshot,
                        Waiter{local_writes_.load(), min_version, {}, {}});
}

void EvidenceCache::WhenCurrent(int64_t min_version, absl::Duration timeout,
                                ReadyCallback ready) {
  Waiter waiter{
      local_writes_.load(), min_version,
      std::chrono::steady_clock::now() +
          absl::ToChronoNanoseconds(std::max(timeout, absl::ZeroDuration())),
      std::move(ready)};
  std::shared_ptr<const CatalogSnapshot> current;
  {
    absl::MutexLock lock(&mu_);
    current = current_;
    if (current == nullptr || !IncludesLocked(*current, waiter)) {
      waiters_.push_back(std::move(waiter));
      current = nullptr;
    }
  }
  if (current != nullptr) {
    waiter.ready(std::move(current), true);
    return;
  }
  RefreshSoon();
}

void EvidenceCache::ServeWaiters(bool all) {
  const SteadyTime now = std::chrono::steady_clock::now();
  std::shared_ptr<const CatalogSnapshot> current;
  absl::MutexLock lock(&mu_);
  if (waiters_.empty()) return;
  current = current_;
  std::vector<Waiter> waiting;
  for (Waiter& waiter : waiters_) {
    const bool reached = current != nullptr && IncludesLocked(*current, waiter);
    if (reached || all || waiter.deadline <= now) {
      // Planned off this thread: the next read must not wait for it.
      callbacks_.Run([ready = std::move(waiter.ready), current, reached] {
        ready(current, reached);
      });
    } else {
      waiting.push_back(std::move(waiter));
    }
  }
  waiters_ = std::move(waiting);
}

std::shared_ptr<const CatalogSnapshot> EvidenceCache::Current() const {
  absl::MutexLock lock(&mu_);
  return current_;
}

std::vector<core::Standard> CatalogSnapshot::StandardsFor(
    absl::string_view team) const {
  std::vector<core::Standard> applying;
  for (const core::Standard& standard : standards) {
    if (standard.team.empty() || standard.team == team) {
      applying.push_back(standard);
    }
  }
  return applying;
}

bool CatalogSnapshot::HasTeamStandards() const {
  return std::any_of(
      standards.begin(), standards.end(),
      [](const core::Standard& standard) { return !standard.team.empty(); });
}

absl::StatusOr<Principal> EvidenceCache::FindToken(
    absl::string_view secret_hash) const {
  const std::shared_ptr<const CatalogSnapshot> snapshot = Current();
  if (snapshot == nullptr) {
    return absl::UnavailableError("tokens are not loaded yet");
  }
  auto it = snapshot->tokens.find(secret_hash);
  if (it == snapshot->tokens.end()) {
    return absl::NotFoundError("unknown or revoked token");
  }
  return it->second;
}

absl::Duration EvidenceCache::Age() const {
  absl::MutexLock lock(&mu_);
  if (current_ == nullptr) return absl::InfiniteDuration();
  return absl::FromChrono(std::chrono::steady_clock::now() - current_as_of_);
}

storage::TransactionHorizon EvidenceCache::KnownHorizon() const {
  absl::MutexLock lock(&mu_);
  return known_horizon_;
}

void EvidenceCache::ConfirmCurrent(const CatalogSnapshot* base,
                                   SteadyTime as_of,
                                   const CatalogSnapshot* read) {
  absl::MutexLock lock(&mu_);
  if (current_ == nullptr) return;
  if (base != nullptr && current_.get() != base) return;  // replaced since
  current_as_of_ = std::max(current_as_of_, as_of);
  if (read != nullptr && HorizonAtOrAfter(read->horizon, known_horizon_)) {
    known_horizon_ = read->horizon;
    known_local_writes_ =
        std::max(known_local_writes_, read->local_writes_included);
  }
}

void EvidenceCache::RefreshSoon() { refresh_requested_.store(true); }

void EvidenceCache::NoteLocalChange() { notify_pending_.store(true); }

void EvidenceCache::Publish(std::shared_ptr<CatalogSnapshot> snapshot) {
  absl::MutexLock lock(&mu_);
  if (current_ != nullptr &&
      !HorizonAtOrAfter(snapshot->horizon, known_horizon_)) {
    return;  // a read that began later is current, or confirmed it
  }
  // It saw every transaction the current one saw, so every local write the
  // current one counted too.
  if (current_ != nullptr) {
    snapshot->local_writes_included =
        std::max({snapshot->local_writes_included,
                  current_->local_writes_included, known_local_writes_});
  }
  snapshot->version = ++published_;
  PLACEMENT_DCHECK(current_ == nullptr || snapshot->version > current_->version,
                   "published snapshot versions only increase");
  PLACEMENT_DCHECK(
      current_ == nullptr || snapshot->horizon.xmax >= current_->horizon.xmax,
      "a published snapshot saw every transaction its predecessor saw");
  current_as_of_ = std::max(current_as_of_, snapshot->read_started);
  known_horizon_ = snapshot->horizon;
  known_local_writes_ = snapshot->local_writes_included;
  if (current_ != nullptr) retired_.push_back(std::move(current_));
  current_ = std::move(snapshot);
}

void EvidenceCache::FreeRetired() {
  std::vector<std::shared_ptr<const CatalogSnapshot>> unused;
  {
    absl::MutexLock lock(&mu_);
    // use_count() == 1: only this list holds it, and nothing can take a
    // new reference to it any more.
    auto unheld = std::partition(
        retired_.begin(), retired_.end(),
        [](const auto& snapshot) { return snapshot.use_count() > 1; });
    std::move(unheld, retired_.end(), std::back_inserter(unused));
    retired_.erase(unheld, retired_.end());
  }
  // Freed here, outside the lock.
}

absl::Status EvidenceCache::ReloadWith(storage::DbSession& session) {
  return Reload(session, /*full=*/false, RefitsOnEveryChange());
}

absl::Status EvidenceCache::FullReloadWith(storage::DbSession& session) {
  return Reload(session, /*full=*/true, RefitsOnEveryChange());
}

absl::Status EvidenceCache::Reload(storage::DbSession& session, bool full,
                                   bool refit) {
  const int64_t local_writes = local_writes_.load();
  const SteadyTime read_started = std::chrono::steady_clock::now();
  const absl::Time loaded_at = wall_clock_();
  // A full read still takes the current snapshot's evals as they are
  // (ReadFullSnapshot) and reads only the new ones.
  std::shared_ptr<const CatalogSnapshot> held = Current();
  std::shared_ptr<const CatalogSnapshot> base = full ? nullptr : held;
  absl::StatusOr<std::shared_ptr<CatalogSnapshot>> loaded =
      base == nullptr ? ReadFullSnapshot(session, local_writes, held.get())
                      : ReadSnapshotChanges(session, *base, local_writes);
  if (base != nullptr && absl::IsFailedPrecondition(loaded.status())) {
    loaded = ReadFullSnapshot(session, local_writes, held.get());
  }
  if (!loaded.ok()) return loaded.status();
  (*loaded)->loaded_at = loaded_at;
  (*loaded)->read_started = read_started;
  // The fleet model: re-fitted here when due and its inputs changed, else
  // the last fit carried.
  std::shared_ptr<const core::FleetModel> fleet;
  if (refit) {
    absl::MutexLock fit_lock(&fit_mu_);
    bool fitted_before;
    {
      absl::MutexLock lock(&mu_);
      fitted_before = fleet_ != nullptr;
    }
    // O(1) after an incremental read that changed no rollup (the trees are
    // shared); one walk of both after a full read.
    if (fitted_before && (*loaded)->skus == fit_skus_ &&
        (*loaded)->evidence.SameRollups(fit_evidence_)) {
      refit = false;
      ++fleet_refits_skipped_;
    } else {
      fleet = std::make_shared<const core::FleetModel>(
          core::FleetModel::Fit(core::FleetCellsFromEvidence(
              (*loaded)->evidence.All(), (*loaded)->skus)));
      fit_skus_ = (*loaded)->skus;
      ++fleet_fits_;
    }
    // The snapshot's own tree from now on, so that the next check is O(1)
    // until a rollup changes.
    fit_evidence_ = (*loaded)->evidence;
  }
  if (!refit && base != nullptr && (*loaded)->incremental &&
      (*loaded)->changes_applied == 0) {
    // Nothing changed: the same snapshot, confirmed at the new horizon.
    ConfirmCurrent(base.get(), read_started, loaded->get());
    return absl::OkStatus();
  }
  {
    absl::MutexLock lock(&mu_);
    if (refit) fleet_ = fleet;
    (*loaded)->fleet = fleet_;
  }
  Publish(*std::move(loaded));
  return absl::OkStatus();
}

void EvidenceCache::Loop() {
  storage::DbSession session(database_url_);
  storage::ChangeListener listener(database_url_);
  using Clock = std::chrono::steady_clock;
  // Time since `when` by the monotonic clock (infinite for never).
  auto since = [](const std::optional<SteadyTime>& when) {
    return when.has_value() ? absl::FromChrono(Clock::now() - *when)
                            : absl::InfiniteDuration();
  };
  bool stale = true;
  // Whether the next read must be a full one: at start, after the database
  // was away or the listener reconnected (notifications may be lost, and
  // with them nothing: the changes are read by transaction, but a full read
  // also resets what a bug or a hand edit could have left behind), and every
  // reread_interval_.
  bool full_due = true;
  std::optional<SteadyTime> last_load;
  std::optional<SteadyTime> last_full_load;
  std::optional<SteadyTime> last_notify;
  std::optional<SteadyTime> last_fit;
  while (!stop_.HasBeenNotified()) {
    ServeWaiters(/*all=*/false);  // those whose deadline passed
    FreeRetired();
    bool waiting;
    {
      absl::MutexLock lock(&mu_);
      waiting = !waiters_.empty();
    }
    const SteadyTime wait_start = Clock::now();
    absl::StatusOr<int> notified = listener.Wait(
        stale || notify_pending_ || waiting ? kCoalesce / 2 : kWaitSlice);
    if (!notified.ok()) {
      // The database is away: keep serving the last snapshot and try again.
      stale = true;
      full_due = true;
      stop_.WaitForNotificationWithTimeout(absl::Milliseconds(500));
      continue;
    }
    if (listener.Reconnected() || since(last_full_load) >= reread_interval_) {
      full_due = true;
    }
    if (full_due || *notified > 0 || refresh_requested_.exchange(false) ||
        (!stale && !waiting && since(last_load) >= kPollInterval)) {
      stale = true;
    }
    if (notify_pending_.load() && since(last_notify) >= kCoalesce) {
      notify_pending_.store(false);
      if (storage::NotifyChange(session).ok()) {
        last_notify = Clock::now();
      } else {
        notify_pending_.store(true);  // retried on the next turn
      }
    }
    if (!stale) {
      // Nothing changed: a commit before the wait would have been notified
      // by now (replicas hold notifications back at most kCoalesce).
      ConfirmCurrent(nullptr, wait_start - absl::ToChronoNanoseconds(kCoalesce),
                     nullptr);
      continue;
    }
    if (since(last_load) < kCoalesce) continue;
    const bool refit = since(last_fit) >= refit_interval_;
    if (!Reload(session, full_due, refit).ok()) {
      continue;  // retried next turn
    }
    last_load = Clock::now();
    if (refit) last_fit = last_load;
    if (full_due) last_full_load = last_load;
    full_due = false;
    stale = false;
    ServeWaiters(/*all=*/false);  // those the new snapshot includes
  }
}

}  // namespace placement::services
