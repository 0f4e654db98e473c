#include "core/queue/pool_state.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/core/test_catalog.h"

namespace placement::core {
namespace {

using ::testing::Contains;
using ::testing::Field;
using ::testing::IsEmpty;

const absl::Time kNow = absl::FromUnixSeconds(1'800'000'000);

Pool A100Pool() {  // 2 nodes x 8
  return testing::TrainingPool("a100", "A100-SXM4-80GB", Fabric::kNvlink, 8, 2);
}

QueuedJob Job(const std::string& id, int gpus, absl::Duration submitted_ago,
              std::optional<absl::Duration> started_ago = std::nullopt) {
  QueuedJob job;
  job.job_id = id;
  job.gpus = gpus;
  job.submitted = kNow - submitted_ago;
  if (started_ago) job.started = kNow - *started_ago;
  return job;
}

PoolState BusyState() {
  PoolState s;
  s.pool_name = "a100";
  s.observed = kNow;
  s.gpus_total = 16;
  s.gpus_allocated = 16;
  s.running = {Job("1", 8, absl::Hours(3), absl::Hours(2)),
               Job("2", 8, absl::Hours(2), absl::Hours(1))};
  s.pending = {Job("3", 8, absl::Minutes(30)), Job("4", 16, absl::Minutes(5))};
  QueuedJob done = Job("0", 4, absl::Hours(5), absl::Hours(4));
  done.ended = kNow - absl::Minutes(1);
  s.finished = {done};
  return s;
}

auto Names(const std::string& field) {
  return Contains(Field(&FieldViolation::field, field));
}

TEST(ValidatePoolStateTest, AReportThatAddsUpPasses) {
  EXPECT_THAT(
      ValidatePoolState(BusyState(), A100Pool(), kNow - absl::Minutes(1), kNow),
      IsEmpty());
}

TEST(ValidatePoolStateTest, MoreGpusThanThePoolHasIsRefused) {
  PoolState s = BusyState();
  s.gpus_total = 24;
  s.gpus_allocated = 24;
  EXPECT_THAT(ValidatePoolState(s, A100Pool(), std::nullopt, kNow),
              Names("gpus_total"));
  s = BusyState();
  s.pending[1].gpus = 32;
  EXPECT_THAT(ValidatePoolState(s, A100Pool(), std::nullopt, kNow),
              Names("pending[1].gpus"));
  s = BusyState();
  s.gpus_allocated = 8;  // the running jobs hold 16
  EXPECT_THAT(ValidatePoolState(s, A100Pool(), std::nullopt, kNow),
              Names("running"));
}

TEST(ValidatePoolStateTest, TimesOutOfOrderAreRefused) {
  // Not after the pool's last report.
  EXPECT_THAT(ValidatePoolState(BusyState(), A100Pool(), kNow, kNow),
              Names("observe_time"));
  // Observed in the future beyond the skew allowed.
  EXPECT_THAT(ValidatePoolState(BusyState(), A100Pool(), std::nullopt,
                                kNow - kMaxReportClockSkew - absl::Seconds(1)),
              Names("observe_time"));
  PoolState s = BusyState();
  s.running[0].started = kNow + absl::Minutes(1);
  EXPECT_THAT(ValidatePoolState(s, A100Pool(), std::nullopt, kNow),
              Names("running[0].start_time"));
  s = BusyState();
  s.running[1].submitted = *s.running[1].started + absl::Seconds(1);
  EXPECT_THAT(ValidatePoolState(s, A100Pool(), std::nullopt, kNow),
              Names("running[1].submit_time"));
  s = BusyState();
  s.finished[0].ended = *s.finished[0].started - absl::Seconds(1);
  EXPECT_THAT(ValidatePoolState(s, A100Pool(), std::nullopt, kNow),
              Names("finished[0].end_time"));
}

TEST(ValidatePoolStateTest, JobsAreNamedOnceAndRunningOnesStarted) {
  PoolState s = BusyState();
  s.pending[1].job_id = "1";
  EXPECT_THAT(ValidatePoolState(s, A100Pool(), std::nullopt, kNow),
              Names("pending[1].job_id"));
  s = BusyState();
  s.running[0].started.reset();
  EXPECT_THAT(ValidatePoolState(s, A100Pool(), std::nullopt, kNow),
              Names("running[0].start_time"));
  s = BusyState();
  s.pending.resize(kMaxReportedJobs + 1, s.pending[0]);
  EXPECT_THAT(ValidatePoolState(s, A100Pool(), std::nullopt, kNow),
              Names("pending"));
}

}  // namespace
}  // namespace placement::core
