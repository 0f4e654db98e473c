// services/api/cost_convert: a cost row as the API shows it. Counts, GPU
// time and money map exactly (money as integers or nine-place decimals,
// never through a double); optional figures are absent, not zero, when the
// row has none; the period shows only when the report is by period.
#include "services/api/cost_convert.h"

#include <cstdint>
#include <limits>

#include "absl/time/civil_time.h"
#include "absl/time/time.h"
#include "common/proto_time.h"
#include "gtest/gtest.h"

namespace placement::services {
namespace {

storage::CostRow FullRow() {
  storage::CostRow r;
  r.key = {.period = "2024-05-06",
           .sku = "H100-SXM5-80GB",
           .pool = "pool-h100",
           .recipe_key = "rk1-c5feac3758c091b1",
           .model = "llama-3.1-8b",
           .method = "LORA",
           .team = "search",
           .outcome = "SUCCEEDED"};
  r.runs = 7;
  r.successful_runs = 5;
  r.retries = 3;
  r.steps_attempted = 12'000;
  r.successful_steps = 10'000;
  r.gpu_microseconds = 9'000'000'000;         // 2.5 GPU-hours
  r.wasted_gpu_microseconds = 1'800'000'000;  // 0.5
  r.gpu_hours_per_1k_successful_steps = 0.25;
  r.internal_cost_micros = 12'345'678;
  r.internal_cost_per_successful_step_nanos = 1'234'568;
  r.list_price_cost_micros = 20'000'000;
  r.list_price_cost_per_successful_step_nanos = 2'000'000'001;
  r.observed_over_list_price_ratio = 0.6172839;
  r.occupancy = storage::PoolOccupancy{
      .available_gpu_hours = 192,
      .used_gpu_microseconds = 345'600'000'000,  // 96 GPU-hours
      .occupancy = 0.5,
      .amortized_cost_per_successful_step_nanos = 2'469'136};
  return r;
}

storage::CostQuery ByDay() {
  storage::CostQuery q;
  q.period = storage::CostPeriod::kDay;
  return q;
}

TEST(DecimalFromNanosTest, HasNinePlaces) {
  EXPECT_EQ(DecimalFromNanos(1'777'778), "0.001777778");
  EXPECT_EQ(DecimalFromNanos(0), "0.000000000");
  EXPECT_EQ(DecimalFromNanos(1), "0.000000001");
  EXPECT_EQ(DecimalFromNanos(1'000'000'000), "1.000000000");
  EXPECT_EQ(DecimalFromNanos(2'000'000'001), "2.000000001");
  EXPECT_EQ(DecimalFromNanos(std::numeric_limits<int64_t>::max()),
            "9223372036.854775807");
}

TEST(CostRowToProtoTest, MapsTheKeyAndTheCountsExactly) {
  v1::CostReportRow out;
  CostRowToProto(FullRow(), ByDay(), &out);
  EXPECT_EQ(out.sku(), "H100-SXM5-80GB");
  EXPECT_EQ(out.pool(), "pool-h100");
  EXPECT_EQ(out.recipe_key(), "rk1-c5feac3758c091b1");
  EXPECT_EQ(out.model(), "llama-3.1-8b");
  EXPECT_EQ(out.method(), v1::FINE_TUNE_METHOD_LORA);
  EXPECT_EQ(out.team(), "search");
  EXPECT_EQ(out.outcome(), v1::RUN_OUTCOME_SUCCEEDED);
  EXPECT_EQ(out.runs(), 7);
  EXPECT_EQ(out.successful_runs(), 5);
  EXPECT_EQ(out.failed_runs(), 2);
  EXPECT_EQ(out.retries(), 3);
  EXPECT_EQ(out.steps_attempted(), 12'000);
  EXPECT_EQ(out.successful_steps(), 10'000);
}

TEST(CostRowToProtoTest, MapsGpuTimeAndMoneyExactly) {
  v1::CostReportRow out;
  CostRowToProto(FullRow(), ByDay(), &out);
  EXPECT_EQ(out.gpu_microseconds(), 9'000'000'000);
  EXPECT_EQ(out.gpu_hours(), 2.5);
  EXPECT_EQ(out.wasted_gpu_microseconds(), 1'800'000'000);
  EXPECT_EQ(out.wasted_gpu_hours(), 0.5);
  EXPECT_EQ(out.gpu_hours_per_1k_successful_steps(), 0.25);
  EXPECT_EQ(out.internal_cost_micros(), 12'345'678);
  EXPECT_EQ(out.internal_cost_per_successful_step(), "0.001234568");
  EXPECT_TRUE(out.has_list_price());
  EXPECT_EQ(out.list_price_cost_micros(), 20'000'000);
  EXPECT_EQ(out.list_price_cost_per_successful_step(), "2.000000001");
  EXPECT_EQ(out.observed_over_list_price_ratio(), 0.6172839);
  ASSERT_TRUE(out.has_pool_occupancy());
  EXPECT_EQ(out.pool_occupancy().available_gpu_hours(), 192);
  EXPECT_EQ(out.pool_occupancy().used_gpu_hours(), 96);
  EXPECT_EQ(out.pool_occupancy().occupancy(), 0.5);
  EXPECT_EQ(out.pool_occupancy().amortized_cost_per_successful_step(),
            "0.002469136");
}

TEST(CostRowToProtoTest, ARowWithoutSuccessesHasNoPerStepFigures) {
  storage::CostRow r = FullRow();
  r.key.outcome = "OUT_OF_MEMORY";
  r.runs = 2;
  r.successful_runs = 0;
  r.successful_steps = 0;
  r.wasted_gpu_microseconds = r.gpu_microseconds;
  r.gpu_hours_per_1k_successful_steps.reset();
  r.internal_cost_per_successful_step_nanos.reset();
  r.list_price_cost_per_successful_step_nanos.reset();
  r.occupancy->amortized_cost_per_successful_step_nanos.reset();
  v1::CostReportRow out;
  CostRowToProto(r, ByDay(), &out);
  EXPECT_EQ(out.outcome(), v1::RUN_OUTCOME_OUT_OF_MEMORY);
  EXPECT_EQ(out.successful_runs(), 0);
  EXPECT_EQ(out.failed_runs(), 2);
  EXPECT_EQ(out.successful_steps(), 0);
  EXPECT_EQ(out.wasted_gpu_hours(), out.gpu_hours());
  EXPECT_EQ(out.gpu_hours_per_1k_successful_steps(), 0);
  // Absent, not "0.000000000": no successful step has a cost.
  EXPECT_EQ(out.internal_cost_per_successful_step(), "");
  EXPECT_EQ(out.list_price_cost_per_successful_step(), "");
  EXPECT_EQ(out.pool_occupancy().amortized_cost_per_successful_step(), "");
  // The money spent is still reported.
  EXPECT_EQ(out.internal_cost_micros(), 12'345'678);
  EXPECT_EQ(out.list_price_cost_micros(), 20'000'000);
}

TEST(CostRowToProtoTest, WithoutAListPriceNoListPriceFieldsShow) {
  storage::CostRow r = FullRow();
  r.list_price_cost_micros.reset();
  v1::CostReportRow out;
  CostRowToProto(r, ByDay(), &out);
  EXPECT_FALSE(out.has_list_price());
  EXPECT_EQ(out.list_price_cost_micros(), 0);
  EXPECT_EQ(out.list_price_cost_per_successful_step(), "");
  EXPECT_EQ(out.observed_over_list_price_ratio(), 0);
}

TEST(CostRowToProtoTest, TheOccupancyShowsOnlyWhenTheRowHasOne) {
  storage::CostRow r = FullRow();
  r.occupancy.reset();
  v1::CostReportRow out;
  CostRowToProto(r, ByDay(), &out);
  EXPECT_FALSE(out.has_pool_occupancy());
}

TEST(CostRowToProtoTest, ThePeriodStartsAtUtcMidnightOfItsFirstDay) {
  v1::CostReportRow out;
  CostRowToProto(FullRow(), ByDay(), &out);
  ASSERT_TRUE(out.has_period_start_time());
  EXPECT_EQ(common::TimeFromProto(out.period_start_time()),
            absl::FromCivil(absl::CivilDay(2024, 5, 6), absl::UTCTimeZone()));
}

TEST(CostRowToProtoTest, AReportWithoutPeriodsHasNoPeriodStart) {
  v1::CostReportRow out;
  CostRowToProto(FullRow(), storage::CostQuery(), &out);
  EXPECT_FALSE(out.has_period_start_time());
}

TEST(CostRowToProtoTest, DimensionsNotGroupedByStayUnset) {
  storage::CostRow r;
  r.runs = 1;
  r.successful_runs = 1;
  v1::CostReportRow out;
  CostRowToProto(r, storage::CostQuery(), &out);
  EXPECT_EQ(out.sku(), "");
  EXPECT_EQ(out.pool(), "");
  EXPECT_EQ(out.method(), v1::FINE_TUNE_METHOD_UNSPECIFIED);
  EXPECT_EQ(out.outcome(), v1::RUN_OUTCOME_UNSPECIFIED);
  EXPECT_FALSE(out.has_period_start_time());
  EXPECT_EQ(out.failed_runs(), 0);
}

}  // namespace
}  // namespace placement::services
