// services/plan/plan_cache: plans by request for one snapshot. A hit
// returns the inserted plan; another key or another snapshot misses; a new
// snapshot empties the cache; a full cache starts over; the cache keeps
// its snapshot alive.
#include "services/plan/plan_cache.h"

#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"

namespace placement::services {
namespace {

std::shared_ptr<const void> NewSnapshot() {
  return std::make_shared<const int>(0);
}

std::shared_ptr<const CachedPlan> NewPlan() {
  return std::make_shared<const CachedPlan>();
}

TEST(PlanCacheTest, AnEmptyCacheMisses) {
  PlanCache cache(4);
  EXPECT_EQ(cache.Find(NewSnapshot(), "k"), nullptr);
  EXPECT_EQ(cache.Find(nullptr, "k"), nullptr);
}

TEST(PlanCacheTest, HitsTheSamePlanForTheSameSnapshotAndKey) {
  PlanCache cache(4);
  const auto snapshot = NewSnapshot();
  const auto plan = NewPlan();
  cache.Insert(snapshot, "request-a", plan);
  EXPECT_EQ(cache.Find(snapshot, "request-a"), plan);
  EXPECT_EQ(cache.Find(snapshot, "request-b"), nullptr);
}

TEST(PlanCacheTest, InsertingAKeyAgainReplacesItsPlan) {
  PlanCache cache(4);
  const auto snapshot = NewSnapshot();
  cache.Insert(snapshot, "k", NewPlan());
  const auto newer = NewPlan();
  cache.Insert(snapshot, "k", newer);
  EXPECT_EQ(cache.Find(snapshot, "k"), newer);
}

TEST(PlanCacheTest, AnotherSnapshotMisses) {
  PlanCache cache(4);
  const auto old_snapshot = NewSnapshot();
  const auto new_snapshot = NewSnapshot();
  cache.Insert(old_snapshot, "k", NewPlan());
  EXPECT_EQ(cache.Find(new_snapshot, "k"), nullptr);
  // A miss does not drop what the cached snapshot holds.
  EXPECT_NE(cache.Find(old_snapshot, "k"), nullptr);
}

TEST(PlanCacheTest, ANewSnapshotEmptiesTheCache) {
  PlanCache cache(4);
  const auto old_snapshot = NewSnapshot();
  const auto new_snapshot = NewSnapshot();
  cache.Insert(old_snapshot, "a", NewPlan());
  cache.Insert(old_snapshot, "b", NewPlan());
  const auto plan = NewPlan();
  cache.Insert(new_snapshot, "c", plan);
  EXPECT_EQ(cache.Find(new_snapshot, "c"), plan);
  EXPECT_EQ(cache.Find(new_snapshot, "a"), nullptr);
  EXPECT_EQ(cache.Find(old_snapshot, "a"), nullptr);
  EXPECT_EQ(cache.Find(old_snapshot, "b"), nullptr);
}

TEST(PlanCacheTest, AFullCacheStartsOver) {
  PlanCache cache(2);
  const auto snapshot = NewSnapshot();
  const auto a = NewPlan();
  const auto b = NewPlan();
  cache.Insert(snapshot, "a", a);
  cache.Insert(snapshot, "b", b);
  EXPECT_EQ(cache.Find(snapshot, "a"), a);
  EXPECT_EQ(cache.Find(snapshot, "b"), b);
  const auto c = NewPlan();
  cache.Insert(snapshot, "c", c);
  EXPECT_EQ(cache.Find(snapshot, "c"), c);
  EXPECT_EQ(cache.Find(snapshot, "a"), nullptr);
  EXPECT_EQ(cache.Find(snapshot, "b"), nullptr);
}

TEST(PlanCacheTest, HoldsItsSnapshotSoItsAddressIsNotReused) {
  PlanCache cache(4);
  auto snapshot = NewSnapshot();
  const std::weak_ptr<const void> watch = snapshot;
  cache.Insert(snapshot, "k", NewPlan());
  snapshot.reset();
  EXPECT_FALSE(watch.expired());
  // Replaced by a newer snapshot, the old one is let go.
  cache.Insert(NewSnapshot(), "k", NewPlan());
  EXPECT_TRUE(watch.expired());
}

TEST(PlanCacheTest, ConcurrentFindsAndInsertsSeeWholePlans) {
  PlanCache cache(64);
  const auto snapshot = NewSnapshot();
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&cache, &snapshot, t] {
      for (int i = 0; i < 2000; ++i) {
        const std::string key = std::to_string((i * 7 + t) % 100);
        if (i % 3 == 0) {
          cache.Insert(snapshot, key, NewPlan());
        } else if (std::shared_ptr<const CachedPlan> plan =
                       cache.Find(snapshot, key)) {
          EXPECT_EQ(plan->record, nullptr);
        }
      }
    });
  }
  for (std::thread& t : threads) t.join();
}

}  // namespace
}  // namespace placement::services
