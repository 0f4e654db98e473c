#ifndef PLACEMENT_SERVICES_PLAN_PLAN_AUDIT_WRITER_H_
#define PLACEMENT_SERVICES_PLAN_PLAN_AUDIT_WRITER_H_

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/time/time.h"
#include "storage/stores/plan_store.h"

namespace placement::services {

// Records plans with group commit: one thread, one connection, and each
// transaction writes every plan queued while the previous one committed. A
// plan is answered only once its record is committed, yet under load the
// cost of a commit is shared by many plans.
//
// With a `commit_interval`, a transaction starts at most once an interval
// (or when `max_batch` plans are queued): fewer, larger commits, each plan
// waiting up to the interval. That suits plans answered before their record
// (PlacementService's deferred records), for whom nobody waits. The interval
// is paced by the monotonic clock: a step of the wall clock neither stalls
// the writer nor makes it commit early.
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
  // `done` and with `plan` left as it was, when the queue is full or the
  // writer is stopping.
  bool TrySubmit(storage::PlacementRecord&& plan, absl::Time deadline,
                 Done done);
  // The same past a full queue: false only when the writer is stopping. For
  // callers that bound how many records they queue so (PlacePlan: one per
  // admission slot), and wait for `done`.
  bool Submit(storage::PlacementRecord&& plan, absl::Time deadline, Done done);

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
  using SteadyTime = std::chrono::steady_clock::time_point;
  bool Queue(storage::PlacementRecord&& plan, absl::Time deadline, Done done,
             bool past_capacity);
  void Loop();
  // Inserts `batch` in one transaction and answers each plan. When that
  // fails for any reason but an unavailable database, each plan is tried
  // alone, so that one record PostgreSQL refuses fails only its own call,
  // not up to max_batch others. `known`: the results committed so far.
  void WriteBatch(storage::DbSession& session,
                  absl::flat_hash_set<std::string>& known,
                  std::vector<Pending>& batch);
  // Forgets `batch`'s plans as pending and runs what waited for them.
  void Written(const std::vector<Pending>& batch);  // without mu_ held

  const std::string database_url_;
  const size_t queue_capacity_;
  const size_t max_batch_;
  const std::chrono::steady_clock::duration commit_interval_;
  // A std::mutex and condition variable, not absl's: absl's timed waits
  // (this Abseil) are absolute wall times, and the interval is monotonic
  // (std::condition_variable waits on steady_clock with CLOCK_MONOTONIC).
  // mu_ guards the three members after cv_.
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Pending> queue_;
  // The plans queued or being written, with what waits for each.
  absl::flat_hash_map<std::string, std::vector<std::function<void()>>> pending_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace placement::services

#endif  // PLACEMENT_SERVICES_PLAN_PLAN_AUDIT_WRITER_H_
