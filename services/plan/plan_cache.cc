#include "services/plan/plan_cache.h"

namespace placement::services {

std::shared_ptr<const CachedPlan> PlanCache::Find(
    const std::shared_ptr<const void>& snapshot, const std::string& key) {
  absl::MutexLock lock(&mu_);
  if (snapshot != snapshot_) return nullptr;  // a newer snapshot
  auto it = plans_.find(key);
  return it == plans_.end() ? nullptr : it->second;
}

void PlanCache::Insert(const std::shared_ptr<const void>& snapshot,
                       const std::string& key,
                       std::shared_ptr<const CachedPlan> plan) {
  absl::MutexLock lock(&mu_);
  if (snapshot != snapshot_ || plans_.size() >= capacity_) {
    plans_.clear();
    snapshot_ = snapshot;
  }
  plans_[key] = std::move(plan);
}

}  // namespace placement::services
