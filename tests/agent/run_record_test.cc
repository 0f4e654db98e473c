// The step record protocol, outcome classification and the run summary.
#include "clients/agent/run_record.h"

#include <signal.h>

#include <fstream>
#include <sstream>

#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "google/protobuf/struct.pb.h"
#include "google/protobuf/util/json_util.h"
#include "gtest/gtest.h"

namespace placement::agent {
namespace {

using ::testing::HasSubstr;

TEST(StepRecordTest, ParsesEveryField) {
  absl::optional<StepRecord> r = ParseStepRecord(
      R"({"step": 3, "step_time_s": 0.84, "tokens": 8192,)"
      R"( "memory_allocated_gb": 31.2, "memory_reserved_gb": 33.5,)"
      R"( "loss": 1.93, "offload": "cpu"})");
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->step, 3);
  EXPECT_DOUBLE_EQ(r->step_time_s, 0.84);
  EXPECT_EQ(r->tokens, 8192);
  EXPECT_DOUBLE_EQ(*r->memory_allocated_gb, 31.2);
  EXPECT_DOUBLE_EQ(*r->memory_reserved_gb, 33.5);
  EXPECT_DOUBLE_EQ(*r->loss, 1.93);
  EXPECT_EQ(r->offload, v1::OFFLOAD_CPU);
}

TEST(StepRecordTest, MinimalRecordAndMemoryAlias) {
  absl::optional<StepRecord> r =
      ParseStepRecord(R"(  {"step":0,"step_time_s":2,"memory_gb":12}  )");
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->tokens, 0);
  EXPECT_DOUBLE_EQ(*r->memory_allocated_gb, 12);
  EXPECT_FALSE(r->memory_reserved_gb.has_value());
  EXPECT_FALSE(r->loss.has_value());
}

TEST(StepRecordTest, OtherOutputIsNotARecord) {
  for (const char* line :
       {"", "epoch 1 step 3 loss 1.2", "{not json}", R"({"loss": 1.2})",
        R"({"step": 3})", R"({"step": 3, "step_time_s": 0})",
        R"({"step": -1, "step_time_s": 1})", R"([1, 2])",
        R"({"step": "3", "step_time_s": 1})"}) {
    EXPECT_FALSE(ParseStepRecord(line).has_value()) << line;
  }
}

TEST(CheckpointRecordTest, ParsesTheKeptStepCount) {
  EXPECT_EQ(ParseCheckpointRecord(R"({"checkpoint_step": 2000})"), 2000);
  EXPECT_EQ(ParseCheckpointRecord(R"(  {"checkpoint_step":0, "path":"a"} )"),
            0);
}

TEST(CheckpointRecordTest, MalformedOnesAndStepRecordsAreNotCheckpoints) {
  for (const char* line :
       {"", "saved checkpoint-2000", R"({"checkpoint_step": -1})",
        R"({"checkpoint_step": 12.5})", R"({"checkpoint_step": "12"})",
        R"({"checkpoint_step": null})", R"({"checkpoint": 12})",
        R"({"checkpoint_step": 1e300})", "{not json}",
        R"({"step": 3, "step_time_s": 1, "checkpoint_step": 3})"}) {
    EXPECT_FALSE(ParseCheckpointRecord(line).has_value()) << line;
  }
  // And a checkpoint record is no step record.
  EXPECT_FALSE(ParseStepRecord(R"({"checkpoint_step": 4})").has_value());
}

TEST(ClassifyTest, Outcomes) {
  std::string reason;
  EXPECT_EQ(ClassifyAttempt({0, 0, false}, "all good", &reason),
            v1::RUN_OUTCOME_SUCCEEDED);
  EXPECT_EQ(reason, "");
  EXPECT_EQ(ClassifyAttempt({1, 0, false},
                            "Traceback...\ntorch.OutOfMemoryError: CUDA out "
                            "of memory. Tried to allocate 2.00 GiB\n",
                            &reason),
            v1::RUN_OUTCOME_OUT_OF_MEMORY);
  EXPECT_THAT(reason, HasSubstr("exit code 1"));
  EXPECT_THAT(reason, HasSubstr("Tried to allocate 2.00 GiB"));
  EXPECT_EQ(ClassifyAttempt({-1, SIGABRT, false},
                            "[Rank 3] Watchdog caught collective operation "
                            "timeout: WorkNCCL(SeqNum=42, OpType=ALLREDUCE) "
                            "ran for 600000 milliseconds before timing out.",
                            &reason),
            v1::RUN_OUTCOME_COLLECTIVE_TIMEOUT);
  EXPECT_THAT(reason, HasSubstr("killed by signal 6"));
  EXPECT_EQ(ClassifyAttempt({1, 0, false},
                            "NCCL WARN Net : Connection timed out", &reason),
            v1::RUN_OUTCOME_COLLECTIVE_TIMEOUT);
  EXPECT_EQ(ClassifyAttempt({1, 0, false},
                            "RuntimeError: CUDA error: uncorrectable ECC "
                            "error encountered",
                            &reason),
            v1::RUN_OUTCOME_HARDWARE_ERROR);
  EXPECT_EQ(ClassifyAttempt({-1, SIGTERM, false}, "", &reason),
            v1::RUN_OUTCOME_PREEMPTED);
  EXPECT_EQ(ClassifyAttempt({0, 0, true}, "", &reason), v1::RUN_OUTCOME_FAILED);
  EXPECT_EQ(reason, "timed out");
  EXPECT_EQ(ClassifyAttempt({2, 0, false}, "ValueError: bad config", &reason),
            v1::RUN_OUTCOME_FAILED);
  EXPECT_EQ(reason, "exit code 2: ValueError: bad config");
}

TEST(ClassifyTest, OutOfMemoryWinsOverTheTimeoutItCaused) {
  std::string reason;
  EXPECT_EQ(ClassifyAttempt({1, 0, false},
                            "rank 1: CUDA out of memory\n"
                            "rank 0: Watchdog caught collective operation "
                            "timeout",
                            &reason),
            v1::RUN_OUTCOME_OUT_OF_MEMORY);
}

TEST(ClassifyTest, ReasonIsPrintableAscii) {
  std::string reason;
  ClassifyAttempt({1, 0, false}, "error: caf\xc3\xa9 \xff", &reason);
  EXPECT_EQ(reason, "exit code 1: error: caf?? ?");
}

// The cases the Python client's classifier must agree on
// (clients/python/tests/test_failure_classification.py reads the same file).
TEST(ClassifyTest, SharedCasesWithThePythonClient) {
  std::ifstream file("testdata/failure_outcomes.json");
  ASSERT_TRUE(file) << "testdata/failure_outcomes.json";
  std::stringstream text;
  text << file.rdbuf();
  google::protobuf::Struct table;
  ASSERT_TRUE(
      google::protobuf::util::JsonStringToMessage(text.str(), &table).ok());
  const google::protobuf::ListValue& cases =
      table.fields().at("cases").list_value();
  ASSERT_GE(cases.values_size(), 10);
  for (const google::protobuf::Value& value : cases.values()) {
    const auto& c = value.struct_value().fields();
    auto number = [&c](const char* key) {
      auto it = c.find(key);
      return it == c.end() ? 0 : static_cast<int>(it->second.number_value());
    };
    AttemptEnd end;
    end.exit_code = number("exit_code");
    end.term_signal = number("term_signal");
    auto timed_out = c.find("timed_out");
    end.timed_out = timed_out != c.end() && timed_out->second.bool_value();
    std::string reason;
    const v1::RunOutcome outcome =
        ClassifyAttempt(end, c.at("output").string_value(), &reason);
    const std::string name = c.at("name").string_value();
    EXPECT_EQ(v1::RunOutcome_Name(outcome),
              "RUN_OUTCOME_" + c.at("outcome").string_value())
        << name;
    EXPECT_EQ(reason, c.at("reason").string_value()) << name;
  }
}

TEST(PercentileTest, NearestRank) {
  EXPECT_EQ(Percentile({}, 50), 0);
  EXPECT_EQ(Percentile({5}, 95), 5);
  EXPECT_EQ(Percentile({4, 1, 3, 2}, 50), 2);
  EXPECT_EQ(Percentile({1,  2,  3,  4,  5,  6,  7,  8,  9,  10,
                        11, 12, 13, 14, 15, 16, 17, 18, 19, 20},
                       95),
            19);
}

v1::StepSample Sample(int64_t step, double seconds, double gb, int64_t tokens) {
  v1::StepSample s;
  s.set_step(step);
  s.set_step_time_seconds(seconds);
  s.set_memory_allocated_gb(gb);
  s.set_memory_reserved_gb(gb + 1);
  s.set_tokens(tokens);
  return s;
}

RunFacts OomThenSuccess() {
  RunFacts f;
  f.run_id = "7f1c1e0a-2b3c-4d5e-8f90-0123456789ab";
  f.agent_id = "agent";
  f.pool = "l40s-adapters";
  f.sku = "L40S-PCIE-48GB";
  f.card_memory_gb = 48;
  f.node_names = {"node-1"};
  f.recipe.set_model("Llama-3.1-8B");
  f.recipe.set_gpu_count(1);
  const absl::Time t0 = absl::FromUnixSeconds(1'750'000'000);
  f.attempts = {{t0,
                 t0 + absl::Seconds(10),
                 2,
                 v1::RUN_OUTCOME_OUT_OF_MEMORY,
                 "exit code 1: CUDA out of memory",
                 {},
                 {}},
                {t0 + absl::Seconds(11),
                 t0 + absl::Seconds(30),
                 3,
                 v1::RUN_OUTCOME_SUCCEEDED,
                 "",
                 {},
                 {}}};
  f.samples = {Sample(0, 1.0, 40, 100), Sample(1, 3.0, 47, 100),
               Sample(2, 1.0, 30, 100), Sample(3, 1.0, 31, 100),
               Sample(4, 2.0, 31, 100)};
  return f;
}

TEST(RunSummaryTest, OomThenSuccess) {
  absl::StatusOr<v1::BenchmarkRun> run = BuildRunSummary(OomThenSuccess());
  ASSERT_TRUE(run.ok()) << run.status();
  EXPECT_EQ(run->steps_attempted(), 5);
  EXPECT_EQ(run->steps_succeeded(), 3);
  EXPECT_EQ(run->retries(), 1);
  // The retried attempt's failure, counted by the service where it happened.
  ASSERT_EQ(run->retry_outcomes_size(), 1);
  EXPECT_EQ(run->retry_outcomes(0), v1::RUN_OUTCOME_OUT_OF_MEMORY);
  EXPECT_EQ(run->outcome(), v1::RUN_OUTCOME_SUCCEEDED);
  EXPECT_EQ(run->failure_reason(),
            "attempt 1: OUT_OF_MEMORY (exit code 1: CUDA out of memory)");
  EXPECT_DOUBLE_EQ(run->step_time_mean_seconds(), 1.6);
  EXPECT_DOUBLE_EQ(run->step_time_p50_seconds(), 1.0);
  EXPECT_DOUBLE_EQ(run->step_time_p95_seconds(), 3.0);
  EXPECT_DOUBLE_EQ(run->tokens_per_second(), 500.0 / 8.0);
  EXPECT_DOUBLE_EQ(run->peak_memory_gb(), 48);  // reserved 47 + 1
  EXPECT_EQ(run->start_time().seconds(), 1'750'000'000);
  EXPECT_EQ(run->end_time().seconds(), 1'750'000'030);
  EXPECT_EQ(run->interconnect(), v1::INTERCONNECT_NONE);
  EXPECT_FALSE(run->collectives_opened());
  EXPECT_EQ(run->offload(), v1::OFFLOAD_NONE);
  EXPECT_EQ(run->gpu_count(), 1);
}

TEST(RunSummaryTest, FailedRunHasNoSuccessfulSteps) {
  RunFacts f = OomThenSuccess();
  f.attempts[1].outcome = v1::RUN_OUTCOME_COLLECTIVE_TIMEOUT;
  f.attempts[1].reason = "exit code 1: NCCL timeout";
  f.collectives_opened = true;
  f.interconnect = v1::INTERCONNECT_PCIE;
  f.record_offload = v1::OFFLOAD_NVME;
  absl::StatusOr<v1::BenchmarkRun> run = BuildRunSummary(f);
  ASSERT_TRUE(run.ok()) << run.status();
  EXPECT_EQ(run->steps_succeeded(), 0);
  EXPECT_EQ(run->outcome(), v1::RUN_OUTCOME_COLLECTIVE_TIMEOUT);
  EXPECT_THAT(run->failure_reason(),
              HasSubstr("attempt 2: COLLECTIVE_TIMEOUT"));
  EXPECT_EQ(run->interconnect(), v1::INTERCONNECT_PCIE);
  EXPECT_EQ(run->offload(), v1::OFFLOAD_NVME);
}

// Every attempt fails; the command saved a checkpoint after 2 steps of each
// of the first two attempts (steps 0..1 of the first, and 2..3 of the
// second, which resumed at step 2).
RunFacts FailedWithCheckpoints() {
  RunFacts f = OomThenSuccess();
  f.attempts[0].first_step = 0;
  f.attempts[0].checkpoint_step = 2;
  f.attempts[1].first_step = 2;
  f.attempts[1].checkpoint_step = 4;
  f.attempts[1].outcome = v1::RUN_OUTCOME_OUT_OF_MEMORY;
  f.attempts[1].reason = "exit code 1: CUDA out of memory";
  return f;
}

TEST(RunSummaryTest, AFailedRunKeepsTheStepsOfItsLatestCheckpoint) {
  absl::StatusOr<v1::BenchmarkRun> run =
      BuildRunSummary(FailedWithCheckpoints());
  ASSERT_TRUE(run.ok()) << run.status();
  EXPECT_EQ(run->outcome(), v1::RUN_OUTCOME_OUT_OF_MEMORY);
  EXPECT_EQ(run->steps_attempted(), 5);
  EXPECT_EQ(run->steps_succeeded(), 4);

  // A checkpoint of the first attempt alone counts as well.
  RunFacts f = FailedWithCheckpoints();
  f.attempts[1].checkpoint_step.reset();
  EXPECT_EQ(BuildRunSummary(f)->steps_succeeded(), 2);
}

TEST(RunSummaryTest, ALaterSmallerCheckpointKeepsTheLargest) {
  RunFacts f = FailedWithCheckpoints();
  f.attempts[1].checkpoint_step = 1;  // backwards
  EXPECT_EQ(BuildRunSummary(f)->steps_succeeded(), 2);
}

TEST(RunSummaryTest, KeptStepsNeverExceedTheStepsAttempted) {
  RunFacts f = FailedWithCheckpoints();
  f.attempts[1].checkpoint_step = 5000;
  EXPECT_EQ(BuildRunSummary(f)->steps_succeeded(), 5);
}

TEST(RunSummaryTest, KeptStepsCountFromTheRunsFirstStep) {
  // The run resumed a checkpoint of an earlier run: its first record is
  // step 5000, so a checkpoint at 5002 kept two of this run's steps.
  RunFacts f = FailedWithCheckpoints();
  f.attempts[0].first_step = 5000;
  f.attempts[0].checkpoint_step = 5002;
  f.attempts[1].first_step = 5002;
  f.attempts[1].checkpoint_step.reset();
  EXPECT_EQ(BuildRunSummary(f)->steps_succeeded(), 2);
  f.attempts[0].checkpoint_step = 4000;  // older than the run
  EXPECT_EQ(BuildRunSummary(f)->steps_succeeded(), 0);
}

TEST(RunSummaryTest, ASucceededRunAlsoCountsTheStepsItResumedFrom) {
  RunFacts f = FailedWithCheckpoints();
  f.attempts.pop_back();
  f.attempts.push_back(OomThenSuccess().attempts[1]);
  f.attempts[1].first_step = 2;  // resumed at the checkpoint
  // Records: attempt 1 printed steps 0..1, attempt 2 steps 2..4.
  f.attempts[0].steps = 2;
  absl::StatusOr<v1::BenchmarkRun> run = BuildRunSummary(f);
  ASSERT_TRUE(run.ok()) << run.status();
  EXPECT_EQ(run->outcome(), v1::RUN_OUTCOME_SUCCEEDED);
  EXPECT_EQ(run->steps_succeeded(), 5);

  // Started over at step 0: only its own steps succeeded.
  f.attempts[1].first_step = 0;
  EXPECT_EQ(BuildRunSummary(f)->steps_succeeded(), 3);
  // Claims to resume past any checkpoint: no more than was kept.
  f.attempts[1].first_step = 4;
  EXPECT_EQ(BuildRunSummary(f)->steps_succeeded(), 5);
}

TEST(RunSummaryTest, ASucceededRunWithoutCheckpointsIsUnchanged) {
  RunFacts f = OomThenSuccess();
  f.attempts[0].first_step = 0;
  f.attempts[1].first_step = 0;
  EXPECT_EQ(BuildRunSummary(f)->steps_succeeded(), 3);
  // Even when its steps continue the numbering: nothing said it was kept.
  f.attempts[1].first_step = 2;
  EXPECT_EQ(BuildRunSummary(f)->steps_succeeded(), 3);
  // Its own checkpoints change nothing either.
  f.attempts[1].checkpoint_step = 5;
  EXPECT_EQ(BuildRunSummary(f)->steps_succeeded(), 3);
}

TEST(RunSummaryTest, NvmlPeakCounts) {
  RunFacts f = OomThenSuccess();
  f.nvml_peak_gb = 49.5;
  EXPECT_DOUBLE_EQ(BuildRunSummary(f)->peak_memory_gb(), 49.5);
  EXPECT_EQ(BuildRunSummary(f)->peak_memory_kind(),
            v1::PEAK_MEMORY_KIND_DEVICE_USED);
}

TEST(RunSummaryTest, BothAllocatorPeaksAndWhichOneIsReported) {
  RunFacts f = OomThenSuccess();
  absl::StatusOr<v1::BenchmarkRun> run = BuildRunSummary(f);
  ASSERT_TRUE(run.ok()) << run.status();
  EXPECT_DOUBLE_EQ(run->peak_memory_allocated_gb(), 47);
  EXPECT_DOUBLE_EQ(run->peak_memory_reserved_gb(), 48);
  // The largest measured is the reserve; the recipe says so too.
  EXPECT_EQ(run->peak_memory_kind(), v1::PEAK_MEMORY_KIND_RESERVED);
  EXPECT_EQ(run->recipe().reported_peak(), v1::PEAK_MEMORY_KIND_RESERVED);

  // --report_peak allocated reports the allocator's tensors alone.
  f.report_peak = v1::PEAK_MEMORY_KIND_ALLOCATED;
  run = BuildRunSummary(f);
  ASSERT_TRUE(run.ok()) << run.status();
  EXPECT_DOUBLE_EQ(run->peak_memory_gb(), 47);
  EXPECT_EQ(run->peak_memory_kind(), v1::PEAK_MEMORY_KIND_ALLOCATED);
  EXPECT_EQ(run->recipe().reported_peak(), v1::PEAK_MEMORY_KIND_ALLOCATED);

  // A kind that was not measured falls back to the largest that was.
  f.report_peak = v1::PEAK_MEMORY_KIND_DEVICE_USED;
  run = BuildRunSummary(f);
  ASSERT_TRUE(run.ok()) << run.status();
  EXPECT_DOUBLE_EQ(run->peak_memory_gb(), 48);
  EXPECT_EQ(run->peak_memory_kind(), v1::PEAK_MEMORY_KIND_RESERVED);

  // Records with allocated memory only.
  f.report_peak = v1::PEAK_MEMORY_KIND_UNSPECIFIED;
  for (v1::StepSample& s : f.samples) s.set_memory_reserved_gb(0);
  run = BuildRunSummary(f);
  ASSERT_TRUE(run.ok()) << run.status();
  EXPECT_DOUBLE_EQ(run->peak_memory_gb(), 47);
  EXPECT_EQ(run->peak_memory_kind(), v1::PEAK_MEMORY_KIND_ALLOCATED);
  EXPECT_DOUBLE_EQ(run->peak_memory_reserved_gb(), 0);
}

TEST(RunSummaryTest, OomWithoutMeasurementIsTheWholeCard) {
  RunFacts f = OomThenSuccess();
  f.attempts.pop_back();
  for (v1::StepSample& s : f.samples) {
    s.set_memory_allocated_gb(0);
    s.set_memory_reserved_gb(0);
  }
  EXPECT_DOUBLE_EQ(BuildRunSummary(f)->peak_memory_gb(), 48);
  EXPECT_EQ(BuildRunSummary(f)->peak_memory_kind(),
            v1::PEAK_MEMORY_KIND_DEVICE_USED);
  f.attempts.back().outcome = v1::RUN_OUTCOME_FAILED;
  EXPECT_TRUE(absl::IsFailedPrecondition(BuildRunSummary(f).status()));
}

TEST(RunSummaryTest, NoStepRecordIsNoSummary) {
  RunFacts f = OomThenSuccess();
  f.samples.clear();
  EXPECT_TRUE(absl::IsFailedPrecondition(BuildRunSummary(f).status()));
  f.attempts.clear();
  EXPECT_TRUE(absl::IsFailedPrecondition(BuildRunSummary(f).status()));
}

TEST(RunSummaryTest, LongFailureReasonIsCut) {
  RunFacts f = OomThenSuccess();
  f.attempts[0].reason = std::string(5000, 'x');
  EXPECT_EQ(BuildRunSummary(f)->failure_reason().size(), 4096u);
}

}  // namespace
}  // namespace placement::agent
