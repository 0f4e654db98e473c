#include "services/plan/plan_audit_writer.h"

#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/time/clock.h"
#include "storage/session/db_session.h"

namespace placement::services {

PlanAuditWriter::PlanAuditWriter(std::string database_url,
                                 size_t queue_capacity, size_t max_batch,
                                 absl::Duration commit_interval)
    : database_url_(std::move(database_url)),
      queue_capacity_(queue_capacity),
      max_batch_(max_batch),
      commit_interval_(absl::ToChronoNanoseconds(commit_interval)),
      thread_([this] { Loop(); }) {}

PlanAuditWriter::~PlanAuditWriter() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

bool PlanAuditWriter::TrySubmit(storage::PlacementRecord&& plan,
                                absl::Time deadline, Done done) {
  return Queue(std::move(plan), deadline, std::move(done),
               /*past_capacity=*/false);
}

bool PlanAuditWriter::Submit(storage::PlacementRecord&& plan,
                             absl::Time deadline, Done done) {
  return Queue(std::move(plan), deadline, std::move(done),
               /*past_capacity=*/true);
}

bool PlanAuditWriter::Queue(storage::PlacementRecord&& plan,
                            absl::Time deadline, Done done,
                            bool past_capacity) {
  bool wake;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_ || (!past_capacity && queue_.size() >= queue_capacity_)) {
      return false;
    }
    pending_.try_emplace(plan.plan_id);
    queue_.push_back({std::move(plan), deadline, std::move(done)});
    // The writer waits for the first plan, then (with an interval) for a
    // full batch: a wake-up for any other would change nothing.
    wake = queue_.size() == 1 || queue_.size() == max_batch_;
  }
  if (wake) cv_.notify_one();
  return true;
}

bool PlanAuditWriter::WhenWritten(const std::string& plan_id,
                                  std::function<void()> then) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = pending_.find(plan_id);
  if (it == pending_.end()) return false;
  it->second.push_back(std::move(then));
  return true;
}

void PlanAuditWriter::Written(const std::vector<Pending>& batch) {
  std::vector<std::function<void()>> waiting;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (const Pending& p : batch) {
      auto it = pending_.find(p.plan.plan_id);
      if (it == pending_.end()) continue;
      for (auto& then : it->second) waiting.push_back(std::move(then));
      pending_.erase(it);
    }
  }
  for (const auto& then : waiting) then();
}

void PlanAuditWriter::Loop() {
  storage::DbSession session(database_url_);
  absl::flat_hash_set<std::string> known;
  // When the next transaction may start (monotonic): at once until the
  // first commit, and always without an interval.
  SteadyTime next_commit = SteadyTime::min();
  while (true) {
    std::vector<Pending> batch;
    std::vector<Pending> expired;
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
      // Gather what arrives until the interval is up.
      cv_.wait_until(lock, next_commit, [this] {
        return stopping_ || queue_.size() >= max_batch_;
      });
      if (queue_.empty()) return;          // stopping, everything written
      const absl::Time now = absl::Now();  // callers' deadlines are wall times
      while (!queue_.empty() && batch.size() < max_batch_) {
        // Under overload the queue holds calls whose callers gave up: writing
        // them would only delay the calls still waiting.
        (queue_.front().deadline < now ? expired : batch)
            .push_back(std::move(queue_.front()));
        queue_.pop_front();
      }
    }
    for (Pending& p : expired) {
      p.done(absl::DeadlineExceededError(
          "the deadline passed before the plan could be recorded"));
    }
    Written(expired);
    if (!batch.empty()) {
      next_commit = std::chrono::steady_clock::now() + commit_interval_;
      WriteBatch(session, known, batch);
    }
  }
}

void PlanAuditWriter::WriteBatch(storage::DbSession& session,
                                 absl::flat_hash_set<std::string>& known,
                                 std::vector<Pending>& batch) {
  // Results this writer has committed: most plans share one, and a result
  // (tens of kB) need not travel to the database again.
  constexpr size_t kMaxKnownResults = 16384;
  auto insert = [&](const std::vector<const storage::PlacementRecord*>& plans) {
    const absl::Status status = storage::InsertPlacements(
        session, plans,
        [&known](const std::string& hash) { return known.contains(hash); });
    if (status.ok()) {
      if (known.size() > kMaxKnownResults) known.clear();
      for (const auto* plan : plans) known.insert(plan->result->hash);
    } else {
      known.clear();  // in case a result it names is gone: send them again
    }
    return status;
  };
  std::vector<const storage::PlacementRecord*> plans;
  plans.reserve(batch.size());
  for (const Pending& p : batch) plans.push_back(&p.plan);
  const absl::Status status = insert(plans);
  if (status.ok() || batch.size() == 1 || absl::IsUnavailable(status)) {
    for (Pending& p : batch) p.done(status);
  } else {
    for (Pending& p : batch) p.done(insert({&p.plan}));
  }
  Written(batch);
}

}  // namespace placement::services
