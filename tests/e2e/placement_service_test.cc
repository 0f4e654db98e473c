// PlacementService in process over loopback gRPC on a real PostgreSQL: the
// answer PlacePlan assembles from a cached result is the whole plan, the
// record says exactly what was answered, a quiet database does not make
// evidence "stale", and the audit writer skips calls nobody waits for and
// groups records by its commit interval.
#include <google/protobuf/util/message_differencer.h>

#include <atomic>

#include "absl/strings/match.h"
#include "absl/strings/str_format.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "placement/v1/placement.grpc.pb.h"
#include "placement/v1/telemetry.grpc.pb.h"
#include "services/plan/plan_audit_writer.h"
#include "storage/session/db_session.h"
#include "storage/stores/plan_store.h"
#include "tests/support/api_client.h"
#include "tests/support/fixtures.h"
#include "tests/support/in_process_server.h"
#include "tests/support/test_database.h"

namespace placement {
namespace {

using ::google::protobuf::util::MessageDifferencer;
using ::placement::testing::ApiClient;
using ::placement::testing::Deadline;
using ::placement::testing::InProcessServer;
using ::placement::testing::SucceededRun;
using ::placement::testing::TrainingPool;
using ::testing::ElementsAre;
using ::testing::IsEmpty;
using ::testing::MatchesRegex;

constexpr char kL40s[] = "L40S-PCIE-48GB";
constexpr char kA100[] = "A100-SXM4-80GB";

bool HasWarning(const v1::PlacePlanResponse& plan, absl::string_view rule) {
  for (const std::string& warning : plan.warnings()) {
    if (absl::StartsWith(warning, rule)) return true;
  }
  return false;
}

class PlacementServiceTest : public ::testing::Test {
 protected:
  explicit PlacementServiceTest(absl::Duration reread = absl::Seconds(30))
      : server_([reread](services::ServerOptions& options) {
          options.evidence_reread_interval = reread;
        }),
        placement_(v1::PlacementService::NewStub(server_.channel())) {
    ApiClient client(server_.channel());
    for (const v1::Pool& pool : {TrainingPool("l40s", kL40s, 4, 4),
                                 TrainingPool("a100", kA100, 2, 8)}) {
      client.CreatePool(pool);
    }
    // Measured evidence on L40S, so that candidates differ in basis.
    for (int i = 0; i < 3; ++i) {
      EXPECT_TRUE(client.Upload(SucceededRun("l40s", kL40s)).ok());
    }
    *request_.mutable_recipe() = SucceededRun("l40s", kL40s).recipe();
    request_.set_total_steps(10'000);
    // A team takes one line; everything else odd is kept.
    request_.set_team("team\twith odd 'chars' \"and\" \\ {braces,commas} ü🚀");
    // The uploads reach the server's memory through its change listener.
    for (int i = 0; i < 100; ++i) {
      const v1::PlacePlanResponse plan = Plan();
      if (plan.candidates_size() > 0 &&
          plan.candidates(0).basis() == v1::EVIDENCE_BASIS_MEASURED) {
        break;
      }
      absl::SleepFor(absl::Milliseconds(50));
    }
  }

  v1::PlacePlanResponse Plan() {
    v1::PlacePlanResponse plan;
    grpc::Status status =
        placement_->PlacePlan(Deadline().get(), request_, &plan);
    EXPECT_TRUE(status.ok()) << status.error_message();
    return plan;
  }

  InProcessServer server_;
  std::unique_ptr<v1::PlacementService::Stub> placement_;
  v1::PlacePlanRequest request_;
};

TEST_F(PlacementServiceTest, AnswerFromTheCachedResultIsTheRecordedPlan) {
  const v1::PlacePlanResponse first = Plan();
  const v1::PlacePlanResponse second = Plan();  // from the plan cache

  // Every part of the answer is there: the stamp and the result.
  EXPECT_THAT(first.plan_id(),
              MatchesRegex("[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]"
                           "{3}-[0-9a-f]{12}"));
  EXPECT_NE(first.plan_id(), second.plan_id());
  EXPECT_GT(first.create_time().seconds(), 0);
  EXPECT_GT(first.evidence_time().seconds(), 0);
  EXPECT_THAT(first.warnings(), IsEmpty());
  ASSERT_EQ(first.candidates_size(), 2);
  EXPECT_EQ(first.candidates(0).pool(), "l40s");
  EXPECT_EQ(first.candidates(0).basis(), v1::EVIDENCE_BASIS_MEASURED);
  EXPECT_FALSE(first.recipe_key().empty());
  // The memory model's terms are the plan's, the same for every pool.
  EXPECT_GT(first.predicted_memory().weights_gb(), 0);
  EXPECT_GE(first.predicted_memory().total_gb(),
            first.predicted_memory().weights_gb());

  // The second answer differs from the first in its stamp only.
  v1::PlacePlanResponse unstamped_first = first, unstamped_second = second;
  for (v1::PlacePlanResponse* plan : {&unstamped_first, &unstamped_second}) {
    plan->clear_plan_id();
    plan->clear_create_time();
  }
  EXPECT_TRUE(MessageDifferencer::Equals(unstamped_first, unstamped_second));

  // GetPlan gives back what was answered, and the request as asked (the
  // team's tabs, quotes and braces intact).
  v1::GetPlanRequest get;
  get.set_plan_id(second.plan_id());
  v1::GetPlanResponse stored;
  ASSERT_TRUE(placement_->GetPlan(Deadline().get(), get, &stored).ok());
  EXPECT_TRUE(MessageDifferencer::Equals(stored.plan(), second))
      << stored.plan().ShortDebugString() << "\nvs\n"
      << second.ShortDebugString();
  EXPECT_TRUE(MessageDifferencer::Equals(stored.request(), request_));
  EXPECT_EQ(server_.db().QueryValue(
                "SELECT bool_and(team = E'team\\twith odd ''chars'' "
                "\"and\" \\\\ {braces,commas} ü🚀') FROM placements"),
            "t");
}

class QuietEvidenceTest : public PlacementServiceTest {
 protected:
  // No safety-net re-read during the test: only the change listener speaks.
  QuietEvidenceTest() : PlacementServiceTest(absl::Minutes(10)) {}
};

TEST_F(QuietEvidenceTest, NoChangeForLongIsNotStaleEvidence) {
  // The set-up's own changes are notified and re-read: wait until the
  // evidence stays the same read for a second.
  v1::PlacePlanResponse before = Plan();
  for (int i = 0; i < 20; ++i) {
    absl::SleepFor(absl::Seconds(1));
    const v1::PlacePlanResponse again = Plan();
    const bool settled = MessageDifferencer::Equals(before.evidence_time(),
                                                    again.evidence_time());
    before = again;
    if (settled) break;
  }
  // Longer than the 10 s after which evidence that may have missed a change
  // is called stale; nothing changes meanwhile.
  absl::SleepFor(absl::Seconds(11));
  const v1::PlacePlanResponse after = Plan();
  EXPECT_FALSE(HasWarning(after, "stale_evidence")) << after.ShortDebugString();
  // The evidence was read over 10 s before: not read again, yet not stale.
  EXPECT_GT(after.create_time().seconds() - after.evidence_time().seconds(), 10)
      << after.ShortDebugString();
}

storage::PlacementRecord Record(
    const std::string& plan_id,
    std::shared_ptr<storage::PlanResultRecord> result) {
  storage::PlacementRecord record;
  record.plan_id = plan_id;
  record.team = "t";
  record.recipe_key = "rk";
  record.objective = "LOWEST_COST";
  record.request = "\x08\x01";
  record.result = std::move(result);
  record.evidence_time = absl::FromUnixMicros(1'700'000'000'123'456);
  record.created_at = absl::FromUnixMicros(1'700'000'001'654'321);
  record.warnings = {"tab\there", "quote \" and backslash \\", "{a,b}", ""};
  return record;
}

TEST(PlanAuditWriterTest, RecordsPlansAndSkipsThoseWhoseCallerGaveUp) {
  testing::TestDatabase db;
  db.Migrate();
  auto result = std::make_shared<storage::PlanResultRecord>();
  result->response = "result bytes";
  result->hash = std::string(32, '\x07');
  const std::string waited = "01890a5d-ac96-774b-bcce-b302099a8057";
  const std::string abandoned = "01890a5d-ac96-7b3f-9a6c-1f2d3e4f5a6b";
  std::vector<absl::Status> statuses(2);
  absl::Notification done[2];
  {
    services::PlanAuditWriter writer(db.url(), 16, 16);
    ASSERT_TRUE(writer.TrySubmit(Record(abandoned, result),
                                 absl::Now() - absl::Seconds(1),
                                 [&](const absl::Status& status) {
                                   statuses[1] = status;
                                   done[1].Notify();
                                 }));
    ASSERT_TRUE(writer.TrySubmit(Record(waited, result),
                                 absl::Now() + absl::Seconds(30),
                                 [&](const absl::Status& status) {
                                   statuses[0] = status;
                                   done[0].Notify();
                                 }));
    for (absl::Notification& n : done) {
      ASSERT_TRUE(n.WaitForNotificationWithTimeout(absl::Seconds(30)));
    }
  }
  EXPECT_TRUE(statuses[0].ok()) << statuses[0];
  EXPECT_EQ(statuses[1].code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_EQ(db.QueryValue("SELECT string_agg(plan_id::text, ',') FROM "
                          "placements"),
            waited);

  // Every field comes back as written.
  storage::DbSession session(db.url());
  absl::StatusOr<storage::StoredPlan> stored =
      storage::GetPlan(session, waited);
  ASSERT_TRUE(stored.ok()) << stored.status();
  EXPECT_EQ(stored->plan_id, waited);
  EXPECT_EQ(stored->request, "\x08\x01");
  EXPECT_EQ(stored->result_response, "result bytes");
  EXPECT_EQ(absl::ToUnixMicros(stored->evidence_time), 1'700'000'000'123'456);
  EXPECT_EQ(absl::ToUnixMicros(stored->created_at), 1'700'000'001'654'321);
  EXPECT_THAT(
      stored->warnings,
      ElementsAre("tab\there", "quote \" and backslash \\", "{a,b}", ""));
  EXPECT_EQ(db.QueryValue("SELECT request_id IS NULL AND team = 't' AND "
                          "recipe_key = 'rk' AND chosen_pool IS NULL AND "
                          "encode(result_hash, 'hex') = repeat('07', 32) "
                          "FROM placements"),
            "t");
}

// With a commit interval the writer groups records: once one commit has
// started, the next waits for the interval (an hour here) unless a full
// batch is queued; stopping writes what is queued.
TEST(PlanAuditWriterTest, CommitIntervalGroupsRecordsUntilABatchIsFull) {
  testing::TestDatabase db;
  db.Migrate();
  auto result = std::make_shared<storage::PlanResultRecord>();
  result->response = "result bytes";
  result->hash = std::string(32, '\x07');
  std::atomic<int> recorded{0};
  auto count = [&recorded](const absl::Status& status) {
    EXPECT_TRUE(status.ok()) << status;
    ++recorded;
  };
  int next_id = 0;
  auto submit = [&](services::PlanAuditWriter& writer) {
    const std::string id =
        absl::StrFormat("01890a5d-ac96-7000-8000-%012d", next_id++);
    EXPECT_TRUE(
        writer.TrySubmit(Record(id, result), absl::InfiniteFuture(), count));
    return id;
  };
  // Whether the record of `id` is written within `timeout`.
  auto written_within = [](services::PlanAuditWriter& writer,
                           const std::string& id, absl::Duration timeout) {
    auto written = std::make_shared<absl::Notification>();
    if (!writer.WhenWritten(id, [written] { written->Notify(); })) return true;
    return written->WaitForNotificationWithTimeout(timeout);
  };
  auto rows = [&db] {
    return db.QueryValue("SELECT count(*) FROM placements");
  };
  {
    services::PlanAuditWriter writer(db.url(), /*queue_capacity=*/16,
                                     /*max_batch=*/3,
                                     /*commit_interval=*/absl::Hours(1));
    // the first commit starts at once
    ASSERT_TRUE(written_within(writer, submit(writer), absl::Seconds(30)));
    EXPECT_EQ(rows(), "1");

    submit(writer);
    EXPECT_FALSE(
        written_within(writer, submit(writer), absl::Milliseconds(300)));
    EXPECT_EQ(rows(), "1");

    // a full batch does not wait for the interval
    ASSERT_TRUE(written_within(writer, submit(writer), absl::Seconds(30)));
    EXPECT_EQ(rows(), "4");

    submit(writer);
  }
  EXPECT_EQ(rows(), "5");
  EXPECT_EQ(recorded.load(), 5);
}

}  // namespace
}  // namespace placement
