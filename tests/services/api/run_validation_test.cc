// services/api/run_validation: an upload is checked field by field before
// any database work, every problem named by its request path; a sample
// batch likewise, and an oversized batch is refused whole.
#include "services/api/run_validation.h"

#include <string>
#include <vector>

#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "common/proto_time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/support/fixtures.h"

namespace placement::services {
namespace {

using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::IsEmpty;

std::vector<std::string> Fields(const core::FieldViolations& violations) {
  std::vector<std::string> fields;
  for (const core::FieldViolation& v : violations) fields.push_back(v.field);
  return fields;
}

v1::BenchmarkRun UploadedRun() {
  return testing::SucceededRun("pool-a", "A100");
}

TEST(IsUuidTest, AcceptsCanonicalTextInEitherCaseOnly) {
  EXPECT_TRUE(IsUuid("0190f3c2-7a4b-7c3d-8e5f-123456789abc"));
  EXPECT_TRUE(IsUuid("0190F3C2-7A4B-7C3D-8E5F-123456789ABC"));
  EXPECT_FALSE(IsUuid(""));
  EXPECT_FALSE(IsUuid("0190f3c27a4b7c3d8e5f123456789abc"));
  EXPECT_FALSE(IsUuid("0190f3c2-7a4b-7c3d-8e5f-123456789abg"));
  EXPECT_FALSE(IsUuid("0190f3c2-7a4b-7c3d-8e5f-123456789abcd"));
}

TEST(ValidateRunFieldsTest, AWellFormedRunPasses) {
  EXPECT_THAT(ValidateRunFields(UploadedRun(), absl::Now()), IsEmpty());
}

TEST(ValidateRunFieldsTest, NamesBadIdentifiers) {
  v1::BenchmarkRun run = UploadedRun();
  run.set_run_id("run-1");
  run.set_agent_id("");
  run.set_plan_id("plan-1");
  run.set_team(std::string(kMaxIdLength + 1, 't'));
  const std::vector<std::string> fields =
      Fields(ValidateRunFields(run, absl::Now()));
  EXPECT_THAT(fields, Contains("run.run_id"));
  EXPECT_THAT(fields, Contains("run.agent_id"));
  EXPECT_THAT(fields, Contains("run.plan_id"));
  EXPECT_THAT(fields, Contains("run.team"));
}

TEST(ValidateRunFieldsTest, ARunWithoutARecipeIsRefused) {
  v1::BenchmarkRun run = UploadedRun();
  run.clear_recipe();
  EXPECT_THAT(Fields(ValidateRunFields(run, absl::Now())),
              Contains("run.recipe"));
}

TEST(ValidateRunFieldsTest, TheTwoGpuCountsMustAgree) {
  v1::BenchmarkRun run = UploadedRun();
  run.mutable_recipe()->set_gpu_count(2);
  EXPECT_THAT(Fields(ValidateRunFields(run, absl::Now())),
              Contains("run.recipe.gpu_count"));
}

TEST(ValidateRunFieldsTest, TimesAreRequiredAndNotInTheFuture) {
  v1::BenchmarkRun run = UploadedRun();
  run.clear_start_time();
  EXPECT_THAT(Fields(ValidateRunFields(run, absl::Now())),
              Contains("run.start_time"));
  // The same run checked an hour and a half earlier ended in the future.
  EXPECT_THAT(
      Fields(ValidateRunFields(UploadedRun(), absl::Now() - absl::Minutes(90))),
      Contains("run.end_time"));
}

TEST(ValidateRunFieldsTest, AllocatorPeaksAreConsistent) {
  v1::BenchmarkRun run = UploadedRun();
  run.set_peak_memory_allocated_gb(40);
  run.set_peak_memory_reserved_gb(30);
  EXPECT_THAT(Fields(ValidateRunFields(run, absl::Now())),
              Contains("run.peak_memory_allocated_gb"));
  run = UploadedRun();
  run.set_peak_memory_kind(v1::PEAK_MEMORY_KIND_RESERVED);
  run.mutable_recipe()->set_reported_peak(v1::PEAK_MEMORY_KIND_ALLOCATED);
  EXPECT_THAT(Fields(ValidateRunFields(run, absl::Now())),
              Contains("run.peak_memory_kind"));
}

TEST(ValidateRunFieldsTest, NamesBadNodeNamesAndEvalsByIndex) {
  v1::BenchmarkRun run = UploadedRun();
  run.add_node_names("");
  v1::EvalResult* eval = run.add_evals();
  eval->set_serving_sku("A100");
  eval->set_metric_name("mmlu");
  const std::vector<std::string> fields =
      Fields(ValidateRunFields(run, absl::Now()));
  EXPECT_THAT(fields, Contains("run.node_names[1]"));
  EXPECT_THAT(fields, Contains("run.evals[0].serving_precision"));
}

TEST(ValidateRunFieldsTest, LimitsAreRefusedNotClipped) {
  v1::BenchmarkRun run = UploadedRun();
  run.set_failure_reason(std::string(kMaxFailureReasonLength + 1, 'x'));
  run.set_tokens_per_second(kMaxTokensPerSecond * 2);
  const std::vector<std::string> fields =
      Fields(ValidateRunFields(run, absl::Now()));
  EXPECT_THAT(fields, Contains("run.failure_reason"));
  EXPECT_THAT(fields, Contains("run.tokens_per_second"));
}

TEST(ValidateRunAgainstCatalogTest, AnUnknownSkuAndPoolAreNamed) {
  const std::vector<std::string> fields =
      Fields(ValidateRunAgainstCatalog(UploadedRun(), nullptr, {}));
  EXPECT_THAT(fields, Contains("run.sku"));
  EXPECT_THAT(fields, Contains("run.pool"));
}

v1::StreamStepSamplesRequest Batch(int samples, absl::Time time) {
  v1::StreamStepSamplesRequest request;
  request.set_run_id("0190f3c2-7a4b-7c3d-8e5f-123456789abc");
  for (int i = 0; i < samples; ++i) {
    v1::StepSample* s = request.add_samples();
    s->set_step(i);
    common::TimeToProto(time, s->mutable_time());
    s->set_step_time_seconds(1);
  }
  return request;
}

TEST(ValidateSampleBatchTest, AWellFormedBatchPasses) {
  const absl::Time now = absl::Now();
  EXPECT_THAT(ValidateSampleBatch(Batch(3, now - absl::Minutes(1)), now),
              IsEmpty());
}

TEST(ValidateSampleBatchTest, NamesEachBadSampleByIndex) {
  const absl::Time now = absl::Now();
  v1::StreamStepSamplesRequest request = Batch(3, now - absl::Minutes(1));
  request.set_run_id("not-a-uuid");
  request.mutable_samples(1)->set_step(-1);
  request.mutable_samples(2)->clear_time();
  EXPECT_THAT(Fields(ValidateSampleBatch(request, now)),
              ElementsAre("run_id", "samples[1].step", "samples[2].time"));
}

TEST(ValidateSampleBatchTest, AnOversizedBatchIsRefusedWhole) {
  const absl::Time now = absl::Now();
  EXPECT_THAT(
      Fields(ValidateSampleBatch(
          Batch(kMaxSamplesPerMessage + 1, now - absl::Minutes(1)), now)),
      ElementsAre("samples"));
}

}  // namespace
}  // namespace placement::services
