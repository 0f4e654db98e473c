#include "core/evidence/measured_run.h"

#include <cmath>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace placement::core {
namespace {

using ::testing::ElementsAre;
using ::testing::Field;
using ::testing::IsEmpty;
using ::testing::UnorderedElementsAre;

// 1000 steps of 0.5 s (p50 0.48, p95 0.6) in a one-hour run on 8 GPUs.
MeasuredRun ValidRun() {
  MeasuredRun run;
  run.run_id = "6f1c2a9e-0d3b-4c55-9a7e-2b8f4d1e0c11";
  run.sku_id = "A100-SXM4-80GB";
  run.pool_name = "a100-train";
  run.gpu_count = 8;
  run.started = absl::FromUnixSeconds(1'780'000'000);
  run.ended = run.started + absl::Hours(1);
  run.steps_attempted = 1000;
  run.steps_succeeded = 1000;
  run.step_time_mean_s = 0.5;
  run.step_time_p50_s = 0.48;
  run.step_time_p95_s = 0.6;
  run.peak_memory_gb = 61.5;
  run.offload = Offload::kNone;
  run.interconnect = Interconnect::kNvlink;
  run.collectives_opened = true;
  run.outcome = RunOutcome::kSucceeded;
  return run;
}

Pool A100Pool() {
  Pool pool;
  pool.name = "a100-train";
  pool.sku_id = "A100-SXM4-80GB";
  pool.node_count = 2;
  pool.gpus_per_node = 8;
  return pool;
}

GpuSku A100() {
  GpuSku sku;
  sku.id = "A100-SXM4-80GB";
  sku.memory_gb = 80;
  sku.memory_type = "HBM2e";
  return sku;
}

auto OnlyField(const char* field) {
  return ElementsAre(Field(&FieldViolation::field, field));
}

TEST(ValidateMeasuredRunTest, ValidRunHasNoViolations) {
  EXPECT_THAT(ValidateMeasuredRun(ValidRun()), IsEmpty());
  EXPECT_THAT(ValidateMeasuredRunInPool(ValidRun(), A100Pool()), IsEmpty());
  EXPECT_THAT(ValidateMeasuredRunOnSku(ValidRun(), A100()), IsEmpty());
}

TEST(ValidateMeasuredRunTest, SucceededStepsCannotExceedAttempted) {
  MeasuredRun run = ValidRun();
  run.steps_succeeded = 1001;
  EXPECT_THAT(ValidateMeasuredRun(run), OnlyField("steps_succeeded"));
  run.steps_succeeded = -1;
  EXPECT_THAT(ValidateMeasuredRun(run), OnlyField("steps_succeeded"));
}

TEST(ValidateMeasuredRunTest, P95CannotBeBelowP50) {
  MeasuredRun run = ValidRun();
  run.step_time_p95_s = 0.4;
  EXPECT_THAT(ValidateMeasuredRun(run), OnlyField("step_time_p95_s"));
}

TEST(ValidateMeasuredRunTest, StepTimesArePositiveAndFinite) {
  MeasuredRun run = ValidRun();
  run.step_time_mean_s = 0;
  run.step_time_p50_s = std::nan("");
  run.step_time_p95_s = kMaxStepTimeSeconds * 2;
  EXPECT_THAT(
      ValidateMeasuredRun(run),
      UnorderedElementsAre(Field(&FieldViolation::field, "step_time_mean_s"),
                           Field(&FieldViolation::field, "step_time_p50_s"),
                           Field(&FieldViolation::field, "step_time_p95_s")));
}

TEST(ValidateMeasuredRunTest, BusyTimeMustFitTheWallTime) {
  MeasuredRun run = ValidRun();
  // 1000 x 3.9 s = 3900 s is more than an hour with 5% + 60 s of slack
  // (3840 s).
  run.step_time_mean_s = 3.9;
  run.step_time_p50_s = 3.9;
  run.step_time_p95_s = 4;
  EXPECT_THAT(ValidateMeasuredRun(run), OnlyField("step_time_mean_s"));
  run.step_time_mean_s = 3.8;  // 3800 s: within the slack
  EXPECT_THAT(ValidateMeasuredRun(run), IsEmpty());
}

// A year between start and end for 100 steps of 1.2 s is a wrong clock or a
// bad upload: the wall time may hold the steps and at most 48 hours of
// start-up and detection an attempt, no more.
TEST(ValidateMeasuredRunTest, WallTimeTheStepsDoNotExplainIsRefused) {
  MeasuredRun run = ValidRun();
  run.steps_attempted = 100;
  run.steps_succeeded = 0;
  run.step_time_mean_s = 1.2;
  run.step_time_p50_s = 1.2;
  run.step_time_p95_s = 1.3;
  run.outcome = RunOutcome::kPreempted;
  run.ended = run.started + absl::Hours(24 * 365);
  EXPECT_THAT(ValidateMeasuredRun(run), OnlyField("ended"));
  // 120 s of steps and 48 h of overhead for its one attempt: at the edge.
  run.ended = run.started + absl::Seconds(120) + absl::Hours(48);
  EXPECT_THAT(ValidateMeasuredRun(run), IsEmpty());
  run.ended += absl::Seconds(1);
  EXPECT_THAT(ValidateMeasuredRun(run), OnlyField("ended"));
  // Each retry is another attempt with an overhead of its own.
  run.retries = 1;
  EXPECT_THAT(ValidateMeasuredRun(run), IsEmpty());
}

// retry_outcomes, when an agent names them, are one failure for each retry.
TEST(ValidateMeasuredRunTest, RetryOutcomesNameOneFailureForEachRetry) {
  MeasuredRun run = ValidRun();
  run.retries = 2;
  run.retry_outcomes = {RunOutcome::kPreempted};
  EXPECT_THAT(ValidateMeasuredRun(run), OnlyField("retry_outcomes"));
  run.retry_outcomes = {RunOutcome::kPreempted, RunOutcome::kSucceeded};
  EXPECT_THAT(ValidateMeasuredRun(run), OnlyField("retry_outcomes[1]"));
  run.retry_outcomes = {RunOutcome::kUnspecified,
                        RunOutcome::kCollectiveTimeout};
  EXPECT_THAT(ValidateMeasuredRun(run), OnlyField("retry_outcomes[0]"));
  run.retry_outcomes = {RunOutcome::kPreempted, RunOutcome::kCollectiveTimeout};
  EXPECT_THAT(ValidateMeasuredRun(run), IsEmpty());
  run.retry_outcomes.clear();  // an agent that names no causes
  EXPECT_THAT(ValidateMeasuredRun(run), IsEmpty());
}

TEST(ValidateMeasuredRunTest, EndBeforeStartIsTheOnlyTimeViolation) {
  MeasuredRun run = ValidRun();
  run.ended = run.started - absl::Seconds(1);
  EXPECT_THAT(ValidateMeasuredRun(run), OnlyField("ended"));
}

TEST(ValidateMeasuredRunTest, UnknownTimesSkipTheWallTimeRules) {
  MeasuredRun run = ValidRun();
  run.started = absl::InfinitePast();
  run.step_time_mean_s = 1e5;  // would exceed any wall time
  EXPECT_THAT(ValidateMeasuredRun(run), IsEmpty());
}

TEST(ValidateMeasuredRunTest, CollectivesImplyALink) {
  MeasuredRun run = ValidRun();
  run.interconnect = Interconnect::kNone;
  EXPECT_THAT(ValidateMeasuredRun(run), OnlyField("interconnect"));
  run.collectives_opened = false;  // a single-GPU run opens none
  EXPECT_THAT(ValidateMeasuredRun(run), IsEmpty());
}

TEST(ValidateMeasuredRunTest, GpuCountPeakMemoryAndRetriesAreBounded) {
  MeasuredRun run = ValidRun();
  run.gpu_count = 0;
  run.peak_memory_gb = -1;
  run.retries = kMaxRetries + 1;
  EXPECT_THAT(
      ValidateMeasuredRun(run),
      UnorderedElementsAre(Field(&FieldViolation::field, "gpu_count"),
                           Field(&FieldViolation::field, "peak_memory_gb"),
                           Field(&FieldViolation::field, "retries")));
}

TEST(ValidateMeasuredRunTest, ReportsEveryViolationAtOnce) {
  MeasuredRun run = ValidRun();
  run.steps_succeeded = 2000;
  run.step_time_p95_s = 0.1;
  run.interconnect = Interconnect::kNone;
  EXPECT_THAT(
      ValidateMeasuredRun(run),
      UnorderedElementsAre(Field(&FieldViolation::field, "steps_succeeded"),
                           Field(&FieldViolation::field, "step_time_p95_s"),
                           Field(&FieldViolation::field, "interconnect")));
}

TEST(ValidateMeasuredRunInPoolTest, SkuIsThePoolsAndGpusFit) {
  MeasuredRun run = ValidRun();
  run.sku_id = "L40S-PCIE-48GB";
  run.gpu_count = 32;
  EXPECT_THAT(ValidateMeasuredRunInPool(run, A100Pool()),
              UnorderedElementsAre(Field(&FieldViolation::field, "sku_id"),
                                   Field(&FieldViolation::field, "gpu_count")));
}

TEST(ValidateMeasuredRunOnSkuTest, PeakAboveTheCardNeedsOffload) {
  MeasuredRun run = ValidRun();
  // An A100 80GB holds 79.15 GiB = 84.99 GB usable; 2% more is absurd.
  run.peak_memory_gb = 87;
  EXPECT_THAT(ValidateMeasuredRunOnSku(run, A100()),
              OnlyField("peak_memory_gb"));
  run.peak_memory_gb = 86;  // within the tolerance
  EXPECT_THAT(ValidateMeasuredRunOnSku(run, A100()), IsEmpty());
  run.peak_memory_gb = 120;
  run.offload = Offload::kCpu;
  EXPECT_THAT(ValidateMeasuredRunOnSku(run, A100()), IsEmpty());
}

}  // namespace
}  // namespace placement::core
