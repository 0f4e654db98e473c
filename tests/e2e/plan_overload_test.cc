// PlacePlan under overload, in process on a real PostgreSQL: beyond the
// plans in flight a call is refused at once with RESOURCE_EXHAUSTED, before
// any planning (no plan is recorded for it), and the server stays healthy
// and answers again once the plan in flight is done.
#include <string>
#include <thread>

#include "absl/strings/match.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "placement/v1/catalog.grpc.pb.h"
#include "placement/v1/placement.grpc.pb.h"
#include "tests/support/fixtures.h"
#include "tests/support/in_process_server.h"

namespace placement {
namespace {

using ::placement::testing::Deadline;
using ::placement::testing::InProcessServer;

constexpr char kA100[] = "A100-SXM4-80GB";

class PlanOverloadTest : public ::testing::Test {
 protected:
  PlanOverloadTest()
      : server_([](services::ServerOptions& options) {
          options.max_plans_in_flight = 1;
        }),
        placement_(v1::PlacementService::NewStub(server_.channel())) {
    v1::CreatePoolRequest create;
    *create.mutable_pool() = testing::TrainingPool("a100", kA100, 2, 8);
    v1::CreatePoolResponse created;
    EXPECT_TRUE(v1::CatalogService::NewStub(server_.channel())
                    ->CreatePool(Deadline().get(), create, &created)
                    .ok());
    request_ = testing::PlanFor(testing::Lora8b());
    // The pool reaches the server's memory through its change listener.
    for (int i = 0; i < 100 && !Plan(request_).ok(); ++i) {
      absl::SleepFor(absl::Milliseconds(50));
    }
    for (int i = 0; i < 100 && !server_.server().serving(); ++i) {
      absl::SleepFor(absl::Milliseconds(50));
    }
  }

  grpc::Status Plan(const v1::PlacePlanRequest& request) {
    v1::PlacePlanResponse plan;
    return placement_->PlacePlan(Deadline().get(), request, &plan);
  }

  int64_t RecordedPlans() {
    return std::stoll(
        server_.db().QueryValue("SELECT count(*) FROM placements"));
  }

  InProcessServer server_;
  std::unique_ptr<v1::PlacementService::Stub> placement_;
  v1::PlacePlanRequest request_;
};

TEST_F(PlanOverloadTest, BeyondTheBoundACallIsRefusedAtOnceAndNotPlanned) {
  // A plan that holds the only slot: it waits (up to 2 s) for an evidence
  // version this replica never reaches, then answers with a warning. (A
  // version far past every transaction begun is refused at once, so this
  // one is only a million transactions ahead.)
  v1::PlacePlanRequest held_request = request_;
  held_request.set_min_evidence_version(
      std::stoll(server_.db().QueryValue("SELECT txid_current()")) + 1'000'000);
  grpc::Status held_status;
  v1::PlacePlanResponse held;
  std::thread holder([&] {
    // Refused itself while the previous call's slot is being freed (the
    // slot is held until gRPC is done with the call): it backs off.
    for (int i = 0; i < 100; ++i) {
      held_status =
          placement_->PlacePlan(Deadline(30).get(), held_request, &held);
      if (held_status.error_code() != grpc::StatusCode::RESOURCE_EXHAUSTED) {
        return;
      }
      absl::SleepFor(absl::Milliseconds(20));
    }
  });

  // Once it is in flight, another call is refused, and nothing of it is
  // planned or recorded.
  grpc::Status refused;
  int64_t recorded = 0;
  for (int i = 0; i < 1000; ++i) {
    recorded = RecordedPlans();
    refused = Plan(request_);
    if (refused.error_code() == grpc::StatusCode::RESOURCE_EXHAUSTED) break;
    ASSERT_TRUE(refused.ok()) << refused.error_message();
  }
  ASSERT_EQ(refused.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED)
      << "the held plan finished before another call was refused";
  EXPECT_TRUE(absl::StrContains(refused.error_message(), "retry with backoff"))
      << refused.error_message();
  EXPECT_EQ(RecordedPlans(), recorded);
  EXPECT_TRUE(server_.server().serving());

  holder.join();
  ASSERT_TRUE(held_status.ok()) << held_status.error_message();
  EXPECT_GT(held.candidates_size(), 0);

  // The slot is free again: the next call is planned and recorded.
  const int64_t before = RecordedPlans();
  EXPECT_TRUE(Plan(request_).ok());
  EXPECT_EQ(RecordedPlans(), before + 1);
  EXPECT_TRUE(server_.server().serving());
}

}  // namespace
}  // namespace placement
