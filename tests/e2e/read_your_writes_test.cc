// Read your own writes, with real placementd processes on one PostgreSQL:
// an acknowledged upload is in the very next plan of the replica that took
// it, and in the next plan of any replica that is handed the upload's
// evidence version; a version a replica cannot reach in time is answered
// with a stale_evidence warning rather than silently.
#include "absl/strings/match.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/support/api_client.h"
#include "tests/support/end_to_end_test.h"
#include "tests/support/fixtures.h"
#include "tests/support/placementd_process.h"
#include "tests/support/test_database.h"

namespace placement {
namespace {

using ::placement::testing::ApiClient;
using ::placement::testing::Candidate;
using ::placement::testing::PlacementdProcess;
using ::placement::testing::StartServingPlacementd;
using ::placement::testing::TestDatabase;

constexpr char kPool[] = "a100-train";
constexpr char kSku[] = "A100-SXM4-80GB";

v1::Recipe OneGpuLora() { return testing::OneGpu(testing::Lora8b()); }

int64_t MeasuredRuns(const v1::PlacePlanResponse& plan) {
  const v1::PlacementCandidate* c = Candidate(plan, kPool);
  if (c == nullptr || c->basis() != v1::EVIDENCE_BASIS_MEASURED) return 0;
  return c->evidence_runs();
}

bool WarnsStale(const v1::PlacePlanResponse& plan) {
  for (const std::string& warning : plan.warnings()) {
    if (absl::StartsWith(warning, "stale_evidence")) return true;
  }
  return false;
}

class ReadYourWritesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    db_.Migrate();
    ASSERT_NO_FATAL_FAILURE(
        StartServingPlacementd(db_, &a_, absl::Seconds(20)));
    ASSERT_NO_FATAL_FAILURE(
        StartServingPlacementd(db_, &b_, absl::Seconds(20)));
    ApiClient(a_->channel()).CreatePool(testing::TrainingPool(kPool, kSku));
    // Both replicas know the pool before the uploads start.
    ApiClient(b_->channel())
        .PlanUntil(testing::PlanFor(OneGpuLora()),
                   [](const v1::PlacePlanResponse& plan) {
                     return Candidate(plan, kPool) != nullptr;
                   });
  }

  TestDatabase db_;
  std::unique_ptr<PlacementdProcess> a_;
  std::unique_ptr<PlacementdProcess> b_;
};

TEST_F(ReadYourWritesTest, TheSameReplicasNextPlanHasEveryAcknowledgedUpload) {
  ApiClient a(a_->channel());
  for (int runs = 1; runs <= 20; ++runs) {
    a.UploadRun(kPool, kSku, OneGpuLora(), /*gpu_hours=*/1.0, 1000, 30);
    v1::PlacePlanResponse plan;
    ASSERT_TRUE(a.Plan(testing::PlanFor(OneGpuLora()), &plan).ok());
    // The first plan after the acknowledgement, never a retry.
    EXPECT_EQ(MeasuredRuns(plan), runs);
    EXPECT_FALSE(WarnsStale(plan));
  }
}

TEST_F(ReadYourWritesTest, AnotherReplicaWaitsForTheUploadsEvidenceVersion) {
  ApiClient a(a_->channel());
  ApiClient b(b_->channel());
  for (int runs = 1; runs <= 10; ++runs) {
    const v1::UploadBenchmarkRunResponse ack =
        a.UploadRun(kPool, kSku, OneGpuLora(), /*gpu_hours=*/1.0, 1000, 30);
    ASSERT_GT(ack.evidence_version(), 0);
    v1::PlacePlanRequest request = testing::PlanFor(OneGpuLora());
    request.set_min_evidence_version(ack.evidence_version());
    v1::PlacePlanResponse plan;
    ASSERT_TRUE(b.Plan(request, &plan).ok());
    EXPECT_EQ(MeasuredRuns(plan), runs);
    EXPECT_FALSE(WarnsStale(plan));
  }
}

TEST_F(ReadYourWritesTest, AnEvidenceVersionNotReachedInTimeIsAStaleWarning) {
  ApiClient a(a_->channel());
  const v1::UploadBenchmarkRunResponse ack =
      a.UploadRun(kPool, kSku, OneGpuLora(), /*gpu_hours=*/1.0, 1000, 30);
  // A transaction that has not happened yet: no snapshot can include it.
  v1::PlacePlanRequest request = testing::PlanFor(OneGpuLora());
  request.set_min_evidence_version(ack.evidence_version() + 1'000'000);
  v1::PlacePlanResponse plan;
  ASSERT_TRUE(ApiClient(b_->channel()).Plan(request, &plan).ok());
  EXPECT_TRUE(WarnsStale(plan));
  EXPECT_NE(Candidate(plan, kPool), nullptr);  // still a plan

  request.set_min_evidence_version(-1);
  const grpc::Status status = ApiClient(b_->channel()).Plan(request, &plan);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(testing::ViolatedFields(status),
              ::testing::ElementsAre("min_evidence_version"));
}

// A min_evidence_version no upload can have been given (far past every
// transaction the database began) is refused at once, and it does not make
// the replica re-read (and drop its cached plans) while it is refused.
TEST_F(ReadYourWritesTest, AnImpossibleEvidenceVersionIsRefused) {
  ApiClient b(b_->channel());
  v1::PlacePlanResponse first;
  ASSERT_TRUE(b.Plan(testing::PlanFor(OneGpuLora()), &first).ok());
  v1::PlacePlanRequest request = testing::PlanFor(OneGpuLora());
  request.set_min_evidence_version(int64_t{1} << 62);
  for (int i = 0; i < 5; ++i) {
    v1::PlacePlanResponse plan;
    const grpc::Status status = b.Plan(request, &plan);
    EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
    EXPECT_THAT(testing::ViolatedFields(status),
                ::testing::ElementsAre("min_evidence_version"));
  }
  // Nothing changed meanwhile: the same snapshot still answers.
  v1::PlacePlanResponse again;
  ASSERT_TRUE(b.Plan(testing::PlanFor(OneGpuLora()), &again).ok());
  EXPECT_EQ(again.evidence_time().seconds(), first.evidence_time().seconds());
  EXPECT_EQ(again.evidence_time().nanos(), first.evidence_time().nanos());
}

TEST_F(ReadYourWritesTest, ARetriedUploadAnswersItsOriginalEvidenceVersion) {
  v1::UploadBenchmarkRunRequest request;
  *request.mutable_run() = testing::SucceededRun(kPool, kSku);
  auto stub = v1::TelemetryService::NewStub(a_->channel());
  v1::UploadBenchmarkRunResponse first;
  ASSERT_TRUE(
      stub->UploadBenchmarkRun(testing::Deadline().get(), request, &first)
          .ok());
  v1::UploadBenchmarkRunResponse again;
  ASSERT_TRUE(
      stub->UploadBenchmarkRun(testing::Deadline().get(), request, &again)
          .ok());
  EXPECT_GT(first.evidence_version(), 0);
  EXPECT_EQ(again.evidence_version(), first.evidence_version());
}

}  // namespace
}  // namespace placement
