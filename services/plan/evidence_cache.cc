#include "services/plan/evidence_cache.h"

#include <algorithm>
#include <iostream>

#include "absl/time/clock.h"
#include "placement/v1/recipe.pb.h"
#include "services/api/recipe_convert.h"
#include "storage/catalog_read.h"
#include "storage/change_listener.h"
#include "storage/db_session.h"

namespace placement::services {
namespace {

// How long one wait for notifications lasts: the bound on how late a stop
// request, a RefreshSoon() or a NoteLocalChange() is noticed.
constexpr absl::Duration kWaitSlice = absl::Milliseconds(100);
// Re-reads and notifications are coalesced to at most one per this interval:
// a burst of uploads costs a few re-reads, not one each.
constexpr absl::Duration kCoalesce = absl::Milliseconds(50);

absl::StatusOr<std::shared_ptr<CatalogSnapshot>> Load(
    storage::DbSession& session, const std::atomic<int64_t>& local_writes) {
  auto snapshot = std::make_shared<CatalogSnapshot>();
  snapshot->loaded_at = absl::Now();
  // Before the read: the local writes it counts committed before the read's
  // transaction began, so the read sees them.
  snapshot->local_writes_included = local_writes.load();
  absl::StatusOr<storage::CatalogRows> rows = storage::ReadCatalog(session);
  if (!rows.ok()) return rows.status();
  snapshot->horizon = std::move(rows->horizon);
  for (const storage::TokenRecord& token : rows->tokens) {
    Principal principal{token.token_id, token.name, Role::kAgent};
    if (token.revoked_at.has_value() ||
        !ParseRole(token.role, &principal.role)) {
      continue;
    }
    snapshot->tokens.emplace(token.secret_hash, std::move(principal));
  }

  snapshot->skus = std::move(rows->skus);
  for (storage::PoolRecord& record : rows->pools) {
    snapshot->pools.push_back(std::move(record.pool));
  }
  for (const storage::StoredRollup& stored : rows->rollups) {
    v1::Recipe recipe;
    if (!recipe.ParseFromString(stored.recipe_proto)) {
      std::cerr << "placementd: skipping rollup " << stored.rollup.recipe_key
                << ": its recipe does not parse\n";
      continue;
    }
    snapshot->evidence.AddRollup(RecipeFromProto(recipe), stored.rollup);
  }
  return snapshot;
}

}  // namespace

EvidenceCache::EvidenceCache(std::string database_url,
                             absl::Duration reread_interval,
                             absl::Duration refit_interval)
    : database_url_(std::move(database_url)),
      reread_interval_(reread_interval),
      refit_interval_(refit_interval),
      thread_([this] { Loop(); }) {}

EvidenceCache::~EvidenceCache() {
  stop_.Notify();
  thread_.join();
  ServeWaiters(/*all=*/true);
}

void EvidenceCache::NoteLocalWriteCommitted() { local_writes_.fetch_add(1); }

bool EvidenceCache::Includes(const CatalogSnapshot& snapshot,
                             const Waiter& waiter) {
  return snapshot.local_writes_included >= waiter.local_writes &&
         (waiter.min_version <= 0 ||
          snapshot.horizon.Includes(waiter.min_version));
}

bool EvidenceCache::Includes(const CatalogSnapshot& snapshot,
                             int64_t min_version) const {
  return Includes(snapshot, Waiter{local_writes_.load(), min_version, {}, {}});
}

void EvidenceCache::WhenCurrent(int64_t min_version, absl::Time deadline,
                                ReadyCallback ready) {
  Waiter waiter{local_writes_.load(), min_version, deadline, std::move(ready)};
  std::shared_ptr<const CatalogSnapshot> current;
  {
    absl::MutexLock lock(&mu_);
    current = current_;
    if (current == nullptr || !Includes(*current, waiter)) {
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
  const absl::Time now = absl::Now();
  std::vector<std::pair<Waiter, bool>> due;
  std::shared_ptr<const CatalogSnapshot> current;
  {
    absl::MutexLock lock(&mu_);
    if (waiters_.empty()) return;
    current = current_;
    std::vector<Waiter> waiting;
    for (Waiter& waiter : waiters_) {
      const bool reached = current != nullptr && Includes(*current, waiter);
      if (reached || all || waiter.deadline <= now) {
        due.emplace_back(std::move(waiter), reached);
      } else {
        waiting.push_back(std::move(waiter));
      }
    }
    waiters_ = std::move(waiting);
  }
  for (auto& [waiter, reached] : due) waiter.ready(current, reached);
}

std::shared_ptr<const CatalogSnapshot> EvidenceCache::Current() const {
  absl::MutexLock lock(&mu_);
  return current_;
}

absl::Time EvidenceCache::CurrentAsOf() const {
  absl::MutexLock lock(&mu_);
  return current_as_of_;
}

absl::Duration EvidenceCache::Age() const {
  return absl::Now() - CurrentAsOf();
}

void EvidenceCache::ConfirmCurrentAsOf(absl::Time as_of) {
  absl::MutexLock lock(&mu_);
  if (current_ != nullptr) current_as_of_ = std::max(current_as_of_, as_of);
}

void EvidenceCache::RefreshSoon() { refresh_requested_.store(true); }

void EvidenceCache::NoteLocalChange() { notify_pending_.store(true); }

void EvidenceCache::Publish(std::shared_ptr<const CatalogSnapshot> snapshot) {
  absl::MutexLock lock(&mu_);
  if (current_ == nullptr || current_->loaded_at <= snapshot->loaded_at) {
    current_as_of_ = std::max(current_as_of_, snapshot->loaded_at);
    current_ = std::move(snapshot);
  }
}

absl::Status EvidenceCache::ReloadWith(storage::DbSession& session) {
  return Reload(session, /*refit=*/false);
}

absl::Status EvidenceCache::Reload(storage::DbSession& session, bool refit) {
  absl::StatusOr<std::shared_ptr<CatalogSnapshot>> loaded =
      Load(session, local_writes_);
  if (!loaded.ok()) return loaded.status();
  // The fleet model: re-fitted here when due, else the last fit carried.
  std::shared_ptr<const core::FleetModel> fleet;
  if (refit) {
    fleet = std::make_shared<const core::FleetModel>(
        core::FleetModel::Fit(core::FleetCellsFromEvidence(
            (*loaded)->evidence.All(), (*loaded)->skus)));
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
  bool stale = true;
  absl::Time last_load = absl::InfinitePast();
  absl::Time last_notify = absl::InfinitePast();
  absl::Time last_fit = absl::InfinitePast();
  while (!stop_.HasBeenNotified()) {
    ServeWaiters(/*all=*/false);  // those whose deadline passed
    bool waiting;
    {
      absl::MutexLock lock(&mu_);
      waiting = !waiters_.empty();
    }
    const absl::Time wait_start = absl::Now();
    absl::StatusOr<int> notified = listener.Wait(
        stale || notify_pending_ || waiting ? kCoalesce / 2 : kWaitSlice);
    if (!notified.ok()) {
      // The database is away: keep serving the last snapshot and try again.
      stale = true;
      stop_.WaitForNotificationWithTimeout(absl::Milliseconds(500));
      continue;
    }
    if (listener.Reconnected() || *notified > 0 ||
        refresh_requested_.exchange(false) ||
        absl::Now() - last_load >= reread_interval_) {
      stale = true;
    }
    if (notify_pending_.load() && absl::Now() - last_notify >= kCoalesce) {
      notify_pending_.store(false);
      if (storage::NotifyChange(session).ok()) {
        last_notify = absl::Now();
      } else {
        notify_pending_.store(true);  // retried on the next turn
      }
    }
    if (!stale) {
      // Nothing changed: a commit before the wait would have been notified
      // by now (replicas hold notifications back at most kCoalesce).
      ConfirmCurrentAsOf(wait_start - kCoalesce);
      continue;
    }
    if (absl::Now() - last_load < kCoalesce) continue;
    const bool refit = absl::Now() - last_fit >= refit_interval_;
    if (!Reload(session, refit).ok()) continue;  // retried on the next turn
    if (refit) last_fit = absl::Now();
    last_load = absl::Now();
    stale = false;
    ServeWaiters(/*all=*/false);  // those the new snapshot includes
  }
}

}  // namespace placement::services
