#include "core/plan/bake_off_verdict.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace placement::core {
namespace {

using ::testing::Contains;
using ::testing::HasSubstr;

BakeOffUpload Succeeded(const std::string& id, double gpu_hours, int64_t steps,
                        double peak_gb) {
  BakeOffUpload run;
  run.run_id = id;
  run.outcome = RunOutcome::kSucceeded;
  run.steps_attempted = steps;
  run.steps_succeeded = steps;
  run.gpu_count = 1;
  run.gpu_hours = gpu_hours;
  run.step_time_mean_s = 1;
  run.step_time_p50_s = 1;
  run.step_time_p95_s = 1.1;
  run.peak_memory_gb = peak_gb;
  run.offload = Offload::kNone;
  run.interconnect = Interconnect::kNone;
  return run;
}

BakeOffSubject Subject(const std::string& pool, double card_gb,
                       int64_t rate_micros) {
  BakeOffSubject s;
  s.pool_name = pool;
  s.sku_id = pool + "-sku";
  s.gpu_count = 1;
  s.recipe_key = "key-" + pool;
  s.card_memory_gb = card_gb;
  s.internal_rate_micros_per_gpu_hour = rate_micros;
  return s;
}

TEST(BakeOffVerdictTest, CostPerSuccessfulStepCountsFailedRunsHours) {
  BakeOffSubject s = Subject("l40s", 48, 1'000'000);
  s.uploads.push_back(Succeeded("a", 1.0, 1000, 40));
  BakeOffUpload failed = Succeeded("b", 1.0, 0, 40);
  failed.outcome = RunOutcome::kHardwareError;
  failed.failure_reason = "Xid 79";
  s.uploads.push_back(failed);
  const BakeOffPoolVerdict v = JudgePool(s);
  EXPECT_EQ(v.runs, 2);
  EXPECT_EQ(v.runs_succeeded, 1);
  EXPECT_DOUBLE_EQ(v.gpu_hours_per_successful_step, 2.0 / 1000);
  EXPECT_DOUBLE_EQ(v.cost_micros_per_successful_step, 2000);
  // One run with steps: its step-time spread around the pooled figure.
  EXPECT_DOUBLE_EQ(v.gpu_hours_per_successful_step_band.low, 2.0 / 1000);
  EXPECT_DOUBLE_EQ(v.gpu_hours_per_successful_step_band.high, 2.2 / 1000);
  EXPECT_THAT(v.findings, Contains(HasSubstr("HARDWARE_ERROR: Xid 79")));
  EXPECT_TRUE(v.eligible);
}

TEST(BakeOffVerdictTest, FiftyGbIdleOnAnEightyGbCardIsOverBought) {
  BakeOffSubject s = Subject("a100", 80, 2'000'000);
  s.uploads.push_back(Succeeded("a", 1.0, 1000, 30));
  const BakeOffPoolVerdict v = JudgePool(s);
  EXPECT_TRUE(v.over_bought);
  EXPECT_DOUBLE_EQ(v.idle_memory_gb, 50);
  EXPECT_THAT(v.findings, Contains(HasSubstr("50 GB idle")));
  EXPECT_TRUE(v.eligible);  // over-bought is a finding, not a miss

  BakeOffSubject tight = Subject("a100", 80, 2'000'000);
  tight.uploads.push_back(Succeeded("a", 1.0, 1000, 0.6 * 80));
  EXPECT_FALSE(JudgePool(tight).over_bought);  // the threshold is strict
}

TEST(BakeOffVerdictTest, OffloadIsAMissWhateverItsSpeed) {
  BakeOffSubject s = Subject("l40s", 48, 1'000'000);
  BakeOffUpload run = Succeeded("a", 0.1, 1000, 47);
  run.offload = Offload::kCpu;
  s.uploads.push_back(run);
  const BakeOffPoolVerdict v = JudgePool(s);
  EXPECT_TRUE(v.offload_miss);
  EXPECT_FALSE(v.eligible);
  EXPECT_THAT(v.findings, Contains(HasSubstr("did not fit")));
}

TEST(BakeOffVerdictTest, MultiGpuCollectivesOnPcieAreCalledOut) {
  BakeOffSubject s = Subject("l40s", 48, 1'000'000);
  BakeOffUpload run = Succeeded("a", 2.0, 1000, 40);
  run.gpu_count = 2;
  run.interconnect = Interconnect::kPcie;
  s.uploads.push_back(run);
  EXPECT_TRUE(JudgePool(s).collectives_on_pcie);
  s.uploads[0].gpu_count = 1;  // one GPU: no collective to speak of
  EXPECT_FALSE(JudgePool(s).collectives_on_pcie);
}

TEST(BakeOffVerdictTest, AMissingEvalMakesAPoolIneligible) {
  BakeOffSubject s = Subject("l40s", 48, 1'000'000);
  s.uploads.push_back(Succeeded("a", 1.0, 1000, 40));
  s.eval = EvalStatus{"key-l40s", "L40S", Precision::kFp8, false, {}, {}};
  const BakeOffPoolVerdict v = JudgePool(s);
  EXPECT_FALSE(v.eligible);
  EXPECT_THAT(v.findings, Contains(HasSubstr("eval missing")));
  s.eval->met = true;
  EXPECT_TRUE(JudgePool(s).eligible);
}

TEST(BakeOffVerdictTest, TheCheapestEligiblePoolWinsDecisivelyBeyondBands) {
  BakeOffSubject l40s = Subject("l40s", 48, 1'000'000);
  l40s.uploads.push_back(Succeeded("a", 1.0, 1000, 40));  // 1000 per step
  BakeOffSubject a100 = Subject("a100", 80, 2'000'000);
  a100.uploads.push_back(Succeeded("b", 0.8, 1000, 30));  // 1600 per step
  BakeOffSubject offloaded = Subject("cheap", 24, 100'000);
  BakeOffUpload miss = Succeeded("c", 1.0, 1000, 23);
  miss.offload = Offload::kCpu;
  offloaded.uploads.push_back(miss);
  BakeOffSubject unmeasured = Subject("h100", 80, 3'000'000);
  const BakeOffVerdict verdict =
      JudgeBakeOff({a100, offloaded, l40s, unmeasured});
  EXPECT_EQ(verdict.winner_pool, "l40s");
  EXPECT_TRUE(verdict.decisive);
  ASSERT_EQ(verdict.pools.size(), 3u);  // the unmeasured pool is not judged
  EXPECT_EQ(verdict.pools[0].pool_name, "l40s");
  EXPECT_EQ(verdict.pools[1].pool_name, "a100");
  EXPECT_EQ(verdict.pools[2].pool_name, "cheap");  // a miss, last
  EXPECT_THAT(verdict.summary, HasSubstr("l40s wins"));
}

TEST(BakeOffVerdictTest, OverlappingBandsAreNotDecisive) {
  BakeOffSubject l40s = Subject("l40s", 48, 1'000'000);
  l40s.uploads.push_back(Succeeded("a", 1.0, 1000, 40));  // 1000..1100
  BakeOffSubject a100 = Subject("a100", 80, 1'000'000);
  a100.uploads.push_back(Succeeded("b", 1.05, 1000, 70));  // 1050..1155
  const BakeOffVerdict verdict = JudgeBakeOff({l40s, a100});
  EXPECT_EQ(verdict.winner_pool, "l40s");
  EXPECT_FALSE(verdict.decisive);
  EXPECT_THAT(verdict.summary, HasSubstr("not decisive"));
}

TEST(BakeOffVerdictTest, NoEligiblePoolNamesNoWinner) {
  BakeOffSubject l40s = Subject("l40s", 48, 1'000'000);
  BakeOffUpload oom = Succeeded("a", 0.1, 0, 48);
  oom.outcome = RunOutcome::kOom;
  l40s.uploads.push_back(oom);
  const BakeOffVerdict verdict = JudgeBakeOff({l40s});
  EXPECT_TRUE(verdict.winner_pool.empty());
  EXPECT_TRUE(verdict.pools[0].out_of_memory);
}

}  // namespace
}  // namespace placement::core
