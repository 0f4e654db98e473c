// A pool's failure rate by cause: the same Gamma-Poisson as the rate plans
// price (EstimateFailureRate), split so that the causes add up to it.
#include "core/evidence/pool_reliability.h"

#include "core/evidence/evidence.h"
#include "gtest/gtest.h"

namespace placement::core {
namespace {

TEST(FailureRatesByCauseTest, CausesAddUpToTheRatesPlansPrice) {
  PoolReliabilityRollup single;
  single.runs = 20;
  single.run_hours = 100;
  single.preempted_runs = 3;
  single.hardware_error_runs = 1;
  PoolReliabilityRollup multi;
  multi.multi_gpu = true;
  multi.runs = 10;
  multi.run_hours = 50;
  multi.collective_timeout_runs = 2;
  multi.preempted_runs = 1;
  const std::vector<CauseFailureRate> causes =
      FailureRatesByCause(single, multi);
  ASSERT_EQ(causes.size(), 3u);
  EXPECT_EQ(causes[0].cause, RunOutcome::kPreempted);
  EXPECT_EQ(causes[0].failures, 4);
  EXPECT_EQ(causes[0].hours, 150);
  EXPECT_EQ(causes[1].cause, RunOutcome::kHardwareError);
  EXPECT_EQ(causes[1].failures, 1);
  EXPECT_EQ(causes[2].cause, RunOutcome::kCollectiveTimeout);
  EXPECT_EQ(causes[2].failures, 2);
  EXPECT_EQ(causes[2].hours, 50);  // multi-GPU runs only
  const FailureRate one_gpu = EstimateFailureRate(single, multi, false, 0.05);
  const FailureRate many_gpus = EstimateFailureRate(single, multi, true, 0.05);
  EXPECT_NEAR(causes[0].per_hour + causes[1].per_hour, one_gpu.per_hour, 1e-12);
  EXPECT_NEAR(causes[0].per_hour + causes[1].per_hour + causes[2].per_hour,
              many_gpus.per_hour, 1e-12);
  for (const CauseFailureRate& c : causes) {
    EXPECT_LT(c.per_hour_band.low, c.per_hour);
    EXPECT_GT(c.per_hour_band.high, c.per_hour);
  }
}

TEST(FailureRatesByCauseTest, APoolWithoutRunsHasThePriorOnly) {
  const std::vector<CauseFailureRate> causes =
      FailureRatesByCause(PoolReliabilityRollup{}, PoolReliabilityRollup{});
  // The prior's mean, one failure per 200 run-hours, split between the
  // node causes; the fabric prior whole.
  EXPECT_NEAR(causes[0].per_hour + causes[1].per_hour, 1.0 / 200, 1e-12);
  EXPECT_NEAR(causes[2].per_hour, 1.0 / 200, 1e-12);
  EXPECT_EQ(causes[0].failures, 0);
}

}  // namespace
}  // namespace placement::core
