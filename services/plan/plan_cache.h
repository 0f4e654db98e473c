#ifndef PLACEMENT_SERVICES_PLAN_PLAN_CACHE_H_
#define PLACEMENT_SERVICES_PLAN_PLAN_CACHE_H_

#include <grpcpp/support/slice.h>

#include <memory>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"
#include "core/plan/planner.h"
#include "storage/stores/plan_store.h"

namespace placement::services {

// A planner result ready to answer with: the planner's output, the
// serialized response without its per-plan fields (see PlanResponseBytes),
// and the record stored for audit.
struct CachedPlan {
  core::PlanResult result;
  grpc::Slice response_bytes;
  std::shared_ptr<const storage::PlanResultRecord> record;
};

// Planner results by request, valid for one snapshot of pools and evidence.
// The planner is deterministic, so the same request against the same
// snapshot has the same answer; a new snapshot empties the cache. Bounded:
// when full it starts over.
class PlanCache {
 public:
  explicit PlanCache(size_t capacity) : capacity_(capacity) {}

  // The plan for `key` made against `snapshot`, or null. The cache holds
  // its snapshot, so a snapshot's address is never reused while cached.
  std::shared_ptr<const CachedPlan> Find(
      const std::shared_ptr<const void>& snapshot, const std::string& key);
  void Insert(const std::shared_ptr<const void>& snapshot,
              const std::string& key, std::shared_ptr<const CachedPlan> plan);

 private:
  const size_t capacity_;
  absl::Mutex mu_;
  std::shared_ptr<const void> snapshot_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<std::string, std::shared_ptr<const CachedPlan>> plans_
      ABSL_GUARDED_BY(mu_);
};

}  // namespace placement::services

#endif  // PLACEMENT_SERVICES_PLAN_PLAN_CACHE_H_
