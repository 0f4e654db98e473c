#include "storage/session/db_workers.h"

#include <iostream>

namespace placement::storage {

DbWorkers::DbWorkers(std::string url, int workers, size_t queue_capacity)
    : url_(std::move(url)), queue_capacity_(queue_capacity) {
  threads_.reserve(workers);
  for (int i = 0; i < workers; ++i) {
    threads_.emplace_back([this, i] { WorkerLoop(i); });
  }
}

DbWorkers::~DbWorkers() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
  }
  for (std::thread& thread : threads_) thread.join();
}

bool DbWorkers::TrySubmit(Task task) {
  absl::MutexLock lock(&mu_);
  if (stopping_ || queue_.size() >= queue_capacity_) {
    rejected_.fetch_add(1, std::memory_order_relaxed);
    return false;
  }
  queue_.push_back(std::move(task));
  return true;
}

DbWorkers::Stats DbWorkers::GetStats() const {
  Stats stats;
  stats.workers = static_cast<int>(threads_.size());
  stats.busy = busy_.load(std::memory_order_relaxed);
  stats.queue_capacity = queue_capacity_;
  stats.rejected = rejected_.load(std::memory_order_relaxed);
  absl::MutexLock lock(&mu_);
  stats.queued = queue_.size();
  return stats;
}

void DbWorkers::WorkerLoop(int /*index*/) {
  DbSession session(url_, SessionLimits::Worker());
  auto has_work_or_stopping = [this]() ABSL_SHARED_LOCKS_REQUIRED(mu_) {
    return stopping_ || !queue_.empty();
  };
  while (true) {
    Task task;
    {
      absl::MutexLock lock(&mu_);
      mu_.Await(absl::Condition(&has_work_or_stopping));
      if (queue_.empty()) break;  // stopping, and everything queued has run
      task = std::move(queue_.front());
      queue_.pop_front();
    }
    busy_.fetch_add(1, std::memory_order_relaxed);
    try {
      task(session);
    } catch (const std::exception& e) {
      // Tasks report errors as statuses; this is a last line of defence.
      std::cerr << "database task threw: " << e.what() << "\n";
    } catch (...) {
      std::cerr << "database task threw a non-standard exception\n";
    }
    busy_.fetch_sub(1, std::memory_order_relaxed);
  }
}

}  // namespace placement::storage
