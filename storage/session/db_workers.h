#ifndef PLACEMENT_STORAGE_DB_WORKERS_H_
#define PLACEMENT_STORAGE_DB_WORKERS_H_

#include <atomic>
#include <cstddef>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "storage/session/db_session.h"

namespace placement::storage {

// A bounded pool of worker threads, each owning one DbSession, that runs
// database work off gRPC's callback threads. The queue is bounded too: a full
// queue is refused at once rather than buffered, so overload turns into
// RESOURCE_EXHAUSTED instead of unbounded memory and latency.
class DbWorkers {
 public:
  using Task = std::function<void(DbSession&)>;

  struct Stats {
    int workers = 0;
    int busy = 0;
    size_t queued = 0;
    size_t queue_capacity = 0;
    uint64_t rejected = 0;
  };

  // Starts `workers` threads connecting to `url`.
  DbWorkers(std::string url, int workers, size_t queue_capacity);
  // Runs what is queued, then joins the threads.
  ~DbWorkers();

  DbWorkers(const DbWorkers&) = delete;
  DbWorkers& operator=(const DbWorkers&) = delete;

  // Queues `task`. Returns false (and does not run it) when the queue is full
  // or the pool is shutting down; the caller answers RESOURCE_EXHAUSTED or
  // UNAVAILABLE. A task must not throw; if it does, the exception is caught
  // and the worker keeps running.
  bool TrySubmit(Task task);

  Stats GetStats() const;

 private:
  void WorkerLoop(int index);

  const std::string url_;
  const size_t queue_capacity_;
  mutable absl::Mutex mu_;
  std::deque<Task> queue_ ABSL_GUARDED_BY(mu_);
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::atomic<int> busy_{0};
  std::atomic<uint64_t> rejected_{0};
  std::vector<std::thread> threads_;
};

}  // namespace placement::storage

#endif  // PLACEMENT_STORAGE_DB_WORKERS_H_
