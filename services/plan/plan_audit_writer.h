#ifndef PLACEMENT_SERVICES_PLAN_PLAN_AUDIT_WRITER_H_
#define PLACEMENT_SERVICES_PLAN_PLAN_AUDIT_WRITER_H_

#include <cstdint>
#include <deque>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "storage/plan_store.h"

namespace placement::services {

// Records plans with group commit: one thread, one connection, and each
// transaction writes every plan queued while the previous one committed. A
// plan is answered only once its record is committed, yet under load the
// cost of a commit is shared by many plans.
//
// With a `commit_interval`, a transaction starts at most once an interval
// (or when `max_batch` plans are queued): fewer, larger commits, each plan
// waiting up to the interval. That suits plans answered before their record
// (PlacementService's deferred records), for whom nobody waits.
class PlanAuditWriter {
 public:
  using Done = std::function<void(const absl::Status&)>;

  PlanAuditWriter(std::string database_url, size_t queue_capacity,
                  size_t max_batch,
                  absl::Duration commit_interval = absl::ZeroDuration());
  // Writes what is queued, then stops.
  ~PlanAuditWriter();

  PlanAuditWriter(const PlanAuditWriter&) = delete;
  PlanAuditWriter& operator=(const PlanAuditWriter&) = delete;

  // Queues `plan` (which must carry no request_id); `done` is called on the
  // writer's thread with the commit's status, or DEADLINE_EXCEEDED without
  // writing when `deadline` (the caller's) passed while the plan was queued:
  // nobody is waiting for it any more. Returns false, without calling
  // `done`, when the queue is full or the writer is stopping.
  bool TrySubmit(storage::PlacementRecord plan, absl::Time deadline, Done done);

  // When the plan `plan_id` is queued or being written, arranges for `then`
  // to run on the writer's thread once its record is committed (or failed
  // to be) and returns true. Otherwise returns false and never calls
  // `then`: any record of that id is committed already, or was never queued
  // here. Nobody waits for the writer: a caller finishes its work in `then`.
  bool WhenWritten(const std::string& plan_id, std::function<void()> then);

 private:
  struct Pending {
    storage::PlacementRecord plan;
    absl::Time deadline;
    Done done;
  };
  void Loop();
  // Inserts `batch` in one transaction and answers each plan. When that
  // fails for any reason but an unavailable database, each plan is tried
  // alone, so that one record PostgreSQL refuses fails only its own call,
  // not up to max_batch others. `known`: the results committed so far.
  void WriteBatch(storage::DbSession& session,
                  absl::flat_hash_set<std::string>& known,
                  std::vector<Pending>& batch);
  // Forgets `batch`'s plans as pending and runs what waited for them.
  void Written(const std::vector<Pending>& batch) ABSL_LOCKS_EXCLUDED(mu_);

  const std::string database_url_;
  const size_t queue_capacity_;
  const size_t max_batch_;
  const absl::Duration commit_interval_;
  absl::Mutex mu_;
  std::deque<Pending> queue_ ABSL_GUARDED_BY(mu_);
  // The plans queued or being written, with what waits for each.
  absl::flat_hash_map<std::string, std::vector<std::function<void()>>> pending_
      ABSL_GUARDED_BY(mu_);
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::thread thread_;
};

}  // namespace placement::services

#endif  // PLACEMENT_SERVICES_PLAN_PLAN_AUDIT_WRITER_H_
