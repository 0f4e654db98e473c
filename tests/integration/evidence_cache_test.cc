// The evidence cache against a real PostgreSQL: what it publishes does not
// depend on the wall clock, and a read that finds no change publishes
// nothing (plans cached against the current snapshot stay valid).
#include "services/plan/evidence_cache.h"

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "common/uuid.h"
#include "gtest/gtest.h"
#include "storage/session/db_session.h"
#include "storage/stores/pool_store.h"
#include "storage/stores/token_store.h"
#include "tests/support/test_database.h"

namespace placement::services {
namespace {

using ::placement::testing::TestDatabase;

// A wall clock a test steps by hand.
class FakeWallClock {
 public:
  absl::Time Now() {
    absl::MutexLock lock(&mu_);
    return absl::Now() + offset_;
  }
  void Step(absl::Duration by) {
    absl::MutexLock lock(&mu_);
    offset_ += by;
  }
  std::function<absl::Time()> AsFunction() {
    return [this] { return Now(); };
  }

 private:
  absl::Mutex mu_;
  absl::Duration offset_;
};

bool WaitUntil(const std::function<bool()>& done,
               absl::Duration timeout = absl::Seconds(10)) {
  const auto until =
      std::chrono::steady_clock::now() + absl::ToChronoNanoseconds(timeout);
  while (std::chrono::steady_clock::now() < until) {
    if (done()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return done();
}

core::Pool TrainingPool(const std::string& name) {
  core::Pool pool;
  pool.name = name;
  pool.sku_id = "A100-SXM4-80GB";
  pool.node_count = 1;
  pool.gpus_per_node = 8;
  pool.fabric = core::Fabric::kNvlink;
  pool.purpose = core::PoolPurpose::kTraining;
  pool.gpu_quota = 8;
  pool.internal_rate_micros_per_gpu_hour = 2'000'000;
  return pool;
}

bool HasPool(const CatalogSnapshot& snapshot, const std::string& name) {
  for (const core::Pool& pool : snapshot.pools) {
    if (pool.name == name) return true;
  }
  return false;
}

class EvidenceCacheTest : public ::testing::Test {
 protected:
  EvidenceCacheTest() : session_(db_.url()) { db_.Migrate(); }

  // A token's secret hash, after inserting it.
  std::string InsertToken(const std::string& token_id) {
    storage::TokenRecord token;
    token.token_id = token_id;
    token.name = token_id;
    token.role = "PLANNER";
    token.secret_hash = std::string(32, 'x');
    EXPECT_TRUE(storage::InsertToken(session_, token).ok());
    return token.secret_hash;
  }

  TestDatabase db_;
  storage::DbSession session_;
};

// A wall clock stepped back an hour, then forward a day: new pools and
// revocations still reach the replica, its evidence is not called stale,
// and a waiter is not expired before its (monotonic) timeout.
TEST_F(EvidenceCacheTest, ASteppedWallClockNeitherFreezesNorExpires) {
  FakeWallClock wall;
  EvidenceCache cache(db_.url(), /*reread_interval=*/absl::Hours(1),
                      /*refit_interval=*/absl::Seconds(10), wall.AsFunction());
  const std::string token_id = common::NewUuid();
  const std::string secret_hash = InsertToken(token_id);
  ASSERT_TRUE(WaitUntil([&] { return cache.FindToken(secret_hash).ok(); }));

  wall.Step(-absl::Hours(1));
  ASSERT_TRUE(
      storage::CreatePool(session_, TrainingPool("after-step-back"), "").ok());
  ASSERT_TRUE(storage::RevokeToken(session_, token_id).ok());
  cache.RefreshSoon();
  EXPECT_TRUE(WaitUntil([&] {
    return HasPool(*cache.Current(), "after-step-back") &&
           absl::IsNotFound(cache.FindToken(secret_hash).status());
  })) << "a wall clock stepped back froze the replica";
  EXPECT_LT(cache.Age(), absl::Seconds(5));

  wall.Step(absl::Hours(24));
  EXPECT_LT(cache.Age(), absl::Seconds(5)) << "a step forward is not staleness";
  std::atomic<bool> called{false};
  std::atomic<bool> reached{true};
  // A transaction that does not exist yet: only the timeout ends the wait.
  cache.WhenCurrent(cache.Current()->horizon.xmax + 1'000'000, absl::Seconds(3),
                    [&](std::shared_ptr<const CatalogSnapshot>, bool r) {
                      reached = r;
                      called = true;
                    });
  std::this_thread::sleep_for(std::chrono::milliseconds(1000));
  EXPECT_FALSE(called.load()) << "the waiter expired before its timeout";
  ASSERT_TRUE(
      storage::CreatePool(session_, TrainingPool("after-step-on"), "").ok());
  cache.RefreshSoon();
  EXPECT_TRUE(
      WaitUntil([&] { return HasPool(*cache.Current(), "after-step-on"); }));
  EXPECT_TRUE(WaitUntil([&] { return called.load(); }));
  EXPECT_FALSE(reached.load());
}

// A reload that finds no change keeps the very snapshot (the plan cache is
// keyed by it); a change brings a new one, with a higher version.
TEST_F(EvidenceCacheTest, AReloadThatFindsNoChangePublishesNothing) {
  EvidenceCache cache(db_.url(), /*reread_interval=*/absl::Hours(1));
  ASSERT_TRUE(WaitUntil([&] { return cache.Current() != nullptr; }));
  std::shared_ptr<const CatalogSnapshot> before = cache.Current();
  for (int i = 0; i < 5; ++i) {
    ASSERT_TRUE(cache.ReloadWith(session_).ok());
    cache.RefreshSoon();
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT_EQ(cache.Current(), before);
  // The forced reads confirmed it at their own horizons: what they saw
  // committed counts as included.
  storage::TransactionHorizon known = cache.KnownHorizon();
  EXPECT_GE(known.xmax, before->horizon.xmax);

  ASSERT_TRUE(storage::CreatePool(session_, TrainingPool("a-change"), "").ok());
  ASSERT_TRUE(cache.ReloadWith(session_).ok());
  std::shared_ptr<const CatalogSnapshot> after = cache.Current();
  EXPECT_NE(after, before);
  EXPECT_TRUE(HasPool(*after, "a-change"));
  EXPECT_GT(after->version, before->version);
}

// A pool's failure row that changes while no evidence rollup does (its
// table has no change stamps: it is read whole) is still published, and a
// re-read that finds it unchanged publishes nothing.
TEST_F(EvidenceCacheTest, APoolFailureRowChangeAloneIsPublished) {
  EvidenceCache cache(db_.url(), /*reread_interval=*/absl::Hours(1));
  ASSERT_TRUE(WaitUntil([&] { return cache.Current() != nullptr; }));
  ASSERT_TRUE(cache.ReloadWith(session_).ok());
  std::shared_ptr<const CatalogSnapshot> before = cache.Current();
  EXPECT_EQ(before->PoolReliability("flaky", true).runs, 0);

  db_.Execute(
      "INSERT INTO pool_reliability_rollups (pool_name, multi_gpu, runs, "
      "run_microseconds, preempted_runs, hardware_error_runs, "
      "collective_timeout_runs, failure_lost_microseconds, attempts, "
      "counted_run_microseconds, preempted_attempts, "
      "hardware_error_attempts, collective_timeout_attempts, "
      "attempt_lost_microseconds) "
      "VALUES ('flaky', true, 3, 10800000000, 1, 0, 1, 1800000000, 4, "
      "10800000000, 1, 0, 2, 1800000000)");
  ASSERT_TRUE(cache.ReloadWith(session_).ok());
  std::shared_ptr<const CatalogSnapshot> after = cache.Current();
  ASSERT_NE(after, before);
  EXPECT_TRUE(after->incremental);
  EXPECT_EQ(after->changes_applied, 1);
  core::PoolReliabilityRollup flaky = after->PoolReliability("flaky", true);
  EXPECT_EQ(flaky.runs, 3);
  EXPECT_EQ(flaky.attempts, 4);
  EXPECT_DOUBLE_EQ(flaky.run_hours, 3.0);
  EXPECT_EQ(flaky.preempted_attempts, 1);
  EXPECT_EQ(flaky.collective_timeout_attempts, 2);
  EXPECT_DOUBLE_EQ(flaky.failure_lost_hours, 0.5);
  EXPECT_EQ(after->PoolReliability("flaky", false).runs, 0);

  ASSERT_TRUE(cache.ReloadWith(session_).ok());
  EXPECT_EQ(cache.Current(), after);

  db_.Execute(
      "UPDATE pool_reliability_rollups SET hardware_error_attempts = 2 "
      "WHERE pool_name = 'flaky'");
  ASSERT_TRUE(cache.ReloadWith(session_).ok());
  EXPECT_NE(cache.Current(), after);
  EXPECT_EQ(
      cache.Current()->PoolReliability("flaky", true).hardware_error_attempts,
      2);
}

// Waiters are called off the cache's thread, and several at once: a slow
// plan does not hold the next waiter (or the next read) back.
TEST_F(EvidenceCacheTest, WaitersAreServedInParallel) {
  EvidenceCache cache(db_.url(), /*reread_interval=*/absl::Hours(1));
  ASSERT_TRUE(WaitUntil([&] { return cache.Current() != nullptr; }));
  cache.NoteLocalWriteCommitted();  // each waiter needs a new read
  std::atomic<int> running{0};
  std::atomic<int> most{0};
  std::atomic<int> done{0};
  for (int i = 0; i < 4; ++i) {
    cache.WhenCurrent(
        0, absl::Seconds(5), [&](std::shared_ptr<const CatalogSnapshot>, bool) {
          const int now = ++running;
          int seen = most.load();
          while (now > seen && !most.compare_exchange_weak(seen, now)) {
          }
          std::this_thread::sleep_for(std::chrono::milliseconds(300));
          --running;
          ++done;
        });
  }
  ASSERT_TRUE(WaitUntil([&] { return done.load() == 4; }));
  EXPECT_GT(most.load(), 1);
}

}  // namespace
}  // namespace placement::services
