#include "clients/placectl/slurm_state.h"

#include <fstream>
#include <sstream>

#include "common/proto_time.h"
#include "gtest/gtest.h"

namespace placement::placectl {
namespace {

std::string Read(const std::string& path) {
  std::ifstream file(path);
  std::stringstream text;
  text << file.rdbuf();
  return text.str();
}

absl::Time At(const char* text) {
  return *SlurmTime(text, absl::UTCTimeZone());
}

// Captured from a private slurmctld 22.05: an A100 partition holding one
// running 8-GPU job and three waiting ones; an L40S partition with a
// finished job, sharing its node with a job of the "batch" partition.
class SlurmStateTest : public ::testing::Test {
 protected:
  SlurmStateTest()
      : jobs_(ParseScontrolLines(Read("testdata/scontrol_show_job.txt"))),
        nodes_(ParseScontrolLines(Read("testdata/scontrol_show_node.txt"))) {}

  v1::PoolState State(const char* pool, const char* partition,
                      const char* node) {
    return SlurmPoolState(pool, partition, {node}, nodes_, jobs_,
                          At("2026-12-03T13:53:10"), absl::UTCTimeZone());
  }

  std::vector<SlurmRecord> jobs_;
  std::vector<SlurmRecord> nodes_;
};

TEST_F(SlurmStateTest, AFullPartitionWithAQueue) {
  ASSERT_EQ(jobs_.size(), 6u);
  const v1::PoolState a100 = State("a100-train", "a100", "a100-node");
  EXPECT_EQ(a100.pool(), "a100-train");
  EXPECT_EQ(a100.gpus_total(), 8);
  EXPECT_EQ(a100.gpus_allocated(), 8);
  ASSERT_EQ(a100.running_size(), 1);
  EXPECT_EQ(a100.running(0).job_id(), "1");
  EXPECT_EQ(a100.running(0).gpus(), 8);
  EXPECT_EQ(common::TimeFromProto(a100.running(0).start_time()),
            At("2026-12-03T13:52:51"));
  EXPECT_EQ(common::DurationFromProto(a100.running(0).time_limit()),
            absl::Hours(1));
  // By priority: 8 GPUs (30 min), 4 GPUs (a day and 2 h), 2 per job.
  ASSERT_EQ(a100.pending_size(), 3);
  EXPECT_EQ(a100.pending(0).job_id(), "2");
  EXPECT_EQ(a100.pending(1).gpus(), 4);
  EXPECT_EQ(common::DurationFromProto(a100.pending(1).time_limit()),
            absl::Hours(26));
  EXPECT_EQ(a100.pending(2).gpus(), 2);  // --gpus=2: TresPerJob
  EXPECT_FALSE(a100.pending(0).has_start_time());
  EXPECT_EQ(a100.finished_size(), 0);
}

TEST_F(SlurmStateTest, ANodeSharedWithAnotherPartitionAndAFinishedJob) {
  const v1::PoolState l40s = State("l40s-train", "l40s", "l40s-node");
  EXPECT_EQ(l40s.gpus_total(), 8);
  // The batch partition's job holds 2 of the node's GPUs.
  EXPECT_EQ(l40s.gpus_allocated(), 2);
  EXPECT_EQ(l40s.running_size(), 0);
  ASSERT_EQ(l40s.finished_size(), 1);
  EXPECT_EQ(l40s.finished(0).job_id(), "4");
  EXPECT_EQ(common::TimeFromProto(l40s.finished(0).end_time()),
            At("2026-12-03T13:52:52"));
}

TEST(SlurmValuesTest, DurationsGpusAndPlanIds) {
  EXPECT_EQ(SlurmDuration("1-02:00:00"), absl::Hours(26));
  EXPECT_EQ(SlurmDuration("00:30:00"), absl::Minutes(30));
  EXPECT_EQ(SlurmDuration("5:00"), absl::Minutes(5));
  EXPECT_EQ(SlurmDuration("45"), absl::Minutes(45));
  EXPECT_FALSE(SlurmDuration("UNLIMITED").has_value());
  EXPECT_FALSE(SlurmTime("Unknown", absl::UTCTimeZone()).has_value());
  EXPECT_EQ(GpusIn("gpu:a100:3(IDX:0,2-3)"), 3);
  EXPECT_EQ(GpusIn("cpu=1,gres/gpu=2,gres/gpu:a100=2"), 2);
  EXPECT_EQ(GpusIn("gres:gpu:8"), 8);
  const std::vector<SlurmRecord> job = ParseScontrolLines(
      "JobId=9 JobState=PENDING Partition=a100 NumNodes=2 Priority=100 "
      "TresPerNode=gres:gpu:8 AdminComment=placement:plan="
      "0190b9c4-0000-7000-8000-000000000001 Reason=a reason with spaces "
      "SubmitTime=2026-12-03T13:00:00\n");
  ASSERT_EQ(job.size(), 1u);
  EXPECT_EQ(job[0].at("Reason"), "a reason with spaces");
  const v1::PoolState state = SlurmPoolState(
      "p", "a100", {}, {}, job, At("2026-12-03T13:53:10"), absl::UTCTimeZone());
  ASSERT_EQ(state.pending_size(), 1);
  EXPECT_EQ(state.pending(0).gpus(), 16);  // 8 per node x 2
  EXPECT_EQ(state.pending(0).plan_id(), "0190b9c4-0000-7000-8000-000000000001");
}

}  // namespace
}  // namespace placement::placectl
