#ifndef PLACEMENT_SERVICES_PLAN_EVIDENCE_CACHE_H_
#define PLACEMENT_SERVICES_PLAN_EVIDENCE_CACHE_H_

#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "core/evidence.h"
#include "core/pool.h"
#include "core/sku.h"
#include "services/auth/auth.h"
#include "storage/db_session.h"

namespace placement::services {

// Everything PlacePlan reads, as of one moment: the catalog, the pools and the
// evidence rollups. Immutable once published.
class CatalogSnapshot : public core::EvidenceSource {
 public:
  std::vector<core::GpuSku> skus;
  std::vector<core::Pool> pools;
  core::InMemoryEvidence evidence;
  // Unrevoked API tokens by the SHA-256 of their secret.
  absl::flat_hash_map<std::string, Principal> tokens;
  // When the read that made this snapshot began.
  absl::Time loaded_at = absl::InfinitePast();

  std::optional<core::EvidenceStats> Find(
      absl::string_view recipe_key, absl::string_view sku_id) const override {
    return evidence.Find(recipe_key, sku_id);
  }
  std::vector<core::KeyedEvidence> FindSimilar(
      absl::string_view model, core::FineTuneMethod method,
      absl::string_view sku_id) const override {
    return evidence.FindSimilar(model, method, sku_id);
  }
};

// Each replica's in-memory copy of pools and evidence, so that PlacePlan
// makes no database round trip. A background thread LISTENs for the
// notifications replicas send after they change pools or rollups (see
// NoteLocalChange) and re-reads at once (at most every 50 ms); it also
// re-reads every `reread_interval` as a safety net (changes made behind the
// service's back), and after every reconnection. When the database is away the
// last snapshot keeps serving, and Age() says since when it may have missed
// a change.
class EvidenceCache {
 public:
  EvidenceCache(std::string database_url, absl::Duration reread_interval);
  ~EvidenceCache();

  EvidenceCache(const EvidenceCache&) = delete;
  EvidenceCache& operator=(const EvidenceCache&) = delete;

  // The latest snapshot; null until the first successful read.
  std::shared_ptr<const CatalogSnapshot> Current() const;

  // Until when the current snapshot is known to match the database: the
  // start of its read, then the start of each wait on the change listener's
  // live connection that brought no change (less the 50 ms a replica may
  // hold back its notification). It stops advancing while the database is
  // away. InfinitePast before the first read.
  absl::Time CurrentAsOf() const;

  // Time since CurrentAsOf() (infinite before the first read).
  absl::Duration Age() const;

  // Asks the thread to re-read now.
  void RefreshSoon();

  // This replica committed a change to pools or evidence: every replica
  // (this one included) is notified, at most every 50 ms.
  void NoteLocalChange();

  // Re-reads on the caller's session and publishes the result, so that a
  // change this replica just committed (a new pool) is in the very next
  // plan. A snapshot is only ever replaced by one read after it.
  absl::Status ReloadWith(storage::DbSession& session);

 private:
  void Loop();
  void ConfirmCurrentAsOf(absl::Time as_of);
  // Publishes `snapshot` unless a snapshot read later is already current.
  void Publish(std::shared_ptr<const CatalogSnapshot> snapshot);

  const std::string database_url_;
  const absl::Duration reread_interval_;
  mutable absl::Mutex mu_;
  std::shared_ptr<const CatalogSnapshot> current_ ABSL_GUARDED_BY(mu_);
  absl::Time current_as_of_ ABSL_GUARDED_BY(mu_) = absl::InfinitePast();
  std::atomic<bool> refresh_requested_{false};
  std::atomic<bool> notify_pending_{false};
  absl::Notification stop_;
  std::thread thread_;
};

}  // namespace placement::services

#endif  // PLACEMENT_SERVICES_PLAN_EVIDENCE_CACHE_H_
