// services/plan/plan_audit_writer on a real PostgreSQL: group commit, a
// record PostgreSQL refuses fails its own plan only, not its batch, and a
// full queue refuses TrySubmit (leaving the record to its caller) but not
// Submit.
#include "services/plan/plan_audit_writer.h"

#include <memory>
#include <string>
#include <vector>

#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "storage/stores/plan_store.h"
#include "tests/support/test_database.h"

namespace placement::services {
namespace {

storage::PlacementRecord Plan(const std::string& plan_id,
                              const std::string& team) {
  static const auto result = [] {
    auto r = std::make_shared<storage::PlanResultRecord>();
    r->response = "result";
    r->hash = std::string(32, 'r');
    return std::shared_ptr<const storage::PlanResultRecord>(r);
  }();
  storage::PlacementRecord plan;
  plan.plan_id = plan_id;
  plan.team = team;
  plan.recipe_key = "rk-1";
  plan.objective = "LOWEST_COST";
  plan.request = "request";
  plan.result = result;
  plan.evidence_time = absl::Now();
  plan.created_at = absl::Now();
  return plan;
}

// Submits `plan` and returns a notification and the status it will carry.
struct Submitted {
  absl::Notification done;
  absl::Status status;
};

void Submit(PlanAuditWriter& writer, storage::PlacementRecord plan,
            Submitted* out) {
  ASSERT_TRUE(writer.TrySubmit(std::move(plan), absl::Now() + absl::Seconds(30),
                               [out](const absl::Status& status) {
                                 out->status = status;
                                 out->done.Notify();
                               }));
}

TEST(PlanAuditWriterTest, ARefusedRecordFailsAloneNotItsBatch) {
  testing::TestDatabase db;
  db.Migrate();
  // Three plans to a batch, and at most one commit a minute once the first
  // has gone: the three below are written in one transaction.
  PlanAuditWriter writer(db.url(), /*queue_capacity=*/16, /*max_batch=*/3,
                         /*commit_interval=*/absl::Minutes(1));
  Submitted first;
  Submit(writer, Plan("01890a5d-0000-7000-8000-000000000001", "a"), &first);
  first.done.WaitForNotification();
  ASSERT_TRUE(first.status.ok()) << first.status;

  Submitted good1, bad, good2;
  Submit(writer, Plan("01890a5d-0000-7000-8000-000000000002", "b"), &good1);
  // PostgreSQL refuses a NUL byte in text (admission refuses it first; this
  // is the writer's own defence).
  Submit(writer,
         Plan("01890a5d-0000-7000-8000-000000000003", std::string("c\0d", 3)),
         &bad);
  Submit(writer, Plan("01890a5d-0000-7000-8000-000000000004", "e"), &good2);
  for (Submitted* s : {&good1, &bad, &good2}) s->done.WaitForNotification();

  EXPECT_TRUE(good1.status.ok()) << good1.status;
  EXPECT_TRUE(good2.status.ok()) << good2.status;
  EXPECT_FALSE(bad.status.ok());
  EXPECT_EQ(db.QueryValue("SELECT count(*) FROM placements"), "3");
  EXPECT_EQ(db.QueryValue("SELECT string_agg(team, ',' ORDER BY team) FROM "
                          "placements"),
            "a,b,e");
}

// Deferred records queue with TrySubmit until the queue is full; then a
// plan waits for its commit instead (PlacementService), queued with Submit
// past the capacity.
TEST(PlanAuditWriterTest, AFullQueueRefusesTrySubmitButNotSubmit) {
  testing::TestDatabase db;
  db.Migrate();
  Submitted first, queued, past;
  {
    // One record of room, and one commit a minute once the first has gone.
    PlanAuditWriter writer(db.url(), /*queue_capacity=*/1, /*max_batch=*/512,
                           /*commit_interval=*/absl::Minutes(1));
    Submit(writer, Plan("01890a5d-0000-7000-8000-000000000011", "a"), &first);
    first.done.WaitForNotification();
    Submit(writer, Plan("01890a5d-0000-7000-8000-000000000012", "b"), &queued);

    storage::PlacementRecord refused =
        Plan("01890a5d-0000-7000-8000-000000000013", "c");
    EXPECT_FALSE(writer.TrySubmit(std::move(refused), absl::InfiniteFuture(),
                                  [](const absl::Status&) {}));
    EXPECT_EQ(refused.plan_id, "01890a5d-0000-7000-8000-000000000013");
    EXPECT_TRUE(writer.Submit(std::move(refused), absl::InfiniteFuture(),
                              [&past](const absl::Status& status) {
                                past.status = status;
                                past.done.Notify();
                              }));
  }  // writes what is queued, then stops
  ASSERT_TRUE(queued.done.HasBeenNotified());
  ASSERT_TRUE(past.done.HasBeenNotified());
  EXPECT_TRUE(queued.status.ok()) << queued.status;
  EXPECT_TRUE(past.status.ok()) << past.status;
  EXPECT_EQ(db.QueryValue("SELECT count(*) FROM placements"), "3");
}

}  // namespace
}  // namespace placement::services
