// CostService over loopback gRPC on a real PostgreSQL: hand-computed reports
// (a pool whose runs all succeed, a cheaper pool beaten by its retries and
// failures, a failed run, a UTC midnight, no runs, a rate change), every
// validation rule, pagination, and a randomized comparison with an
// independent GROUP BY over the raw runs.
#include <random>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "placement/v1/catalog.grpc.pb.h"
#include "placement/v1/cost.grpc.pb.h"
#include "placement/v1/telemetry.grpc.pb.h"
#include "tests/support/fixtures.h"
#include "tests/support/in_process_server.h"

namespace placement {
namespace {

using ::placement::testing::Deadline;
using ::placement::testing::InProcessServer;
using ::placement::testing::NewUuid;
using ::placement::testing::SucceededRun;
using ::placement::testing::TrainingPool;
using ::placement::testing::ViolatedFields;
using ::testing::DoubleNear;
using ::testing::ElementsAre;
using ::testing::IsEmpty;

constexpr char kL40s[] = "L40S-PCIE-48GB";
constexpr char kA100[] = "A100-SXM4-80GB";
constexpr char kH100[] = "H100-SXM5-80GB";
constexpr int64_t kHour = 3'600'000'000;  // GPU-microseconds in a GPU-hour

// Midnight UTC, `days_ago` days before today: runs of the tests end in the
// past, as the upload validation demands.
absl::Time DayStart(int days_ago) {
  const absl::CivilDay today =
      absl::ToCivilDay(absl::Now(), absl::UTCTimeZone());
  return absl::FromCivil(today - days_ago, absl::UTCTimeZone());
}

void SetTime(absl::Time t, google::protobuf::Timestamp* out) {
  const int64_t micros = absl::ToUnixMicros(t);
  out->set_seconds(micros / 1'000'000);
  out->set_nanos(static_cast<int32_t>(micros % 1'000'000) * 1000);
}

// One GPU of `pool` from `start` for `wall`, one-second steps.
v1::BenchmarkRun TimedRun(const std::string& pool, const std::string& sku,
                          absl::Time start, absl::Duration wall,
                          int64_t attempted, int64_t succeeded,
                          v1::RunOutcome outcome = v1::RUN_OUTCOME_SUCCEEDED,
                          int retries = 0) {
  v1::BenchmarkRun run = SucceededRun(pool, sku);
  SetTime(start, run.mutable_start_time());
  SetTime(start + wall, run.mutable_end_time());
  run.set_steps_attempted(attempted);
  run.set_steps_succeeded(succeeded);
  run.set_step_time_mean_seconds(1.0);
  run.set_step_time_p50_seconds(1.0);
  run.set_step_time_p95_seconds(1.2);
  run.set_outcome(outcome);
  if (outcome != v1::RUN_OUTCOME_SUCCEEDED) run.set_failure_reason("test");
  run.set_retries(retries);
  return run;
}

class CostTest : public ::testing::Test {
 protected:
  CostTest()
      : catalog_(v1::CatalogService::NewStub(server_.channel())),
        telemetry_(v1::TelemetryService::NewStub(server_.channel())),
        cost_(v1::CostService::NewStub(server_.channel())) {}

  void CreatePool(v1::Pool pool, std::optional<int64_t> list_price) {
    if (list_price) pool.set_list_price_micros_per_gpu_hour(*list_price);
    v1::CreatePoolRequest request;
    *request.mutable_pool() = pool;
    v1::CreatePoolResponse response;
    grpc::Status status =
        catalog_->CreatePool(Deadline().get(), request, &response);
    ASSERT_TRUE(status.ok()) << status.error_message();
  }

  void Upload(const v1::BenchmarkRun& run) {
    v1::UploadBenchmarkRunRequest request;
    *request.mutable_run() = run;
    v1::UploadBenchmarkRunResponse response;
    grpc::Status status =
        telemetry_->UploadBenchmarkRun(Deadline().get(), request, &response);
    ASSERT_TRUE(status.ok()) << status.error_message();
  }

  static v1::GetCostReportRequest Report(
      absl::Time start, absl::Time end,
      std::vector<v1::CostDimension> group_by = {}) {
    v1::GetCostReportRequest request;
    SetTime(start, request.mutable_start_time());
    SetTime(end, request.mutable_end_time());
    for (v1::CostDimension d : group_by) request.add_group_by(d);
    return request;
  }

  grpc::Status Get(const v1::GetCostReportRequest& request,
                   v1::GetCostReportResponse* response) {
    return cost_->GetCostReport(Deadline().get(), request, response);
  }

  // Every row of a report, page by page.
  std::vector<v1::CostReportRow> All(v1::GetCostReportRequest request,
                                     int page_size = 0) {
    std::vector<v1::CostReportRow> rows;
    request.set_page_size(page_size);
    do {
      v1::GetCostReportResponse response;
      grpc::Status status = Get(request, &response);
      EXPECT_TRUE(status.ok()) << status.error_message();
      if (!status.ok()) break;
      rows.insert(rows.end(), response.rows().begin(), response.rows().end());
      request.set_page_token(response.next_page_token());
    } while (!request.page_token().empty());
    return rows;
  }

  InProcessServer server_;
  std::unique_ptr<v1::CatalogService::Stub> catalog_;
  std::unique_ptr<v1::TelemetryService::Stub> telemetry_;
  std::unique_ptr<v1::CostService::Stub> cost_;
};

// a100-train ($4.00/GPU-h, list $6.00, 8 GPUs): two runs, all steps succeed.
// l40s-cheap ($1.00/GPU-h, list $1.80, 4 GPUs): a quarter of the rate, but
// one run re-ran three quarters of its steps after 3 retries and the other
// timed out in its collectives before a checkpoint kept any step. Per
// successful step the cheap pool costs twice as much.
// Long: the guide's worked case, every figure of the report checked in turn.
TEST_F(CostTest, CheaperPoolIsBeatenByItsRetriesAndFailures) {
  CreatePool(TrainingPool("a100-train", kA100, 1, 8, 4'000'000), 6'000'000);
  CreatePool(TrainingPool("l40s-cheap", kL40s, 1, 4, 1'000'000), 1'800'000);
  const absl::Time day = DayStart(10);
  // a100: 2 h with 7200 of 7200 steps, 1 h with 3600 of 3600.
  Upload(TimedRun("a100-train", kA100, day + absl::Hours(1), absl::Hours(2),
                  7200, 7200));
  Upload(TimedRun("a100-train", kA100, day + absl::Hours(4), absl::Hours(1),
                  3600, 3600));
  // l40s: 4 h, 3600 of 14400 steps after 3 retries (3 h wasted); 4 h that
  // timed out with no step kept (4 h wasted, no successful step).
  Upload(TimedRun("l40s-cheap", kL40s, day + absl::Hours(1), absl::Hours(4),
                  14400, 3600, v1::RUN_OUTCOME_SUCCEEDED, 3));
  Upload(TimedRun("l40s-cheap", kL40s, day + absl::Hours(6), absl::Hours(4),
                  14400, 0, v1::RUN_OUTCOME_COLLECTIVE_TIMEOUT, 1));

  // Three days: the a100 pool had 8 x 72 = 576 GPU-hours, the l40s 288.
  const std::vector<v1::CostReportRow> rows =
      All(Report(day, day + absl::Hours(72), {v1::COST_DIMENSION_POOL}));
  ASSERT_EQ(rows.size(), 2u);

  const v1::CostReportRow& a100 = rows[0];
  EXPECT_EQ(a100.pool(), "a100-train");
  EXPECT_EQ(a100.sku(), "");  // not grouped by
  EXPECT_FALSE(a100.has_period_start_time());
  EXPECT_EQ(a100.runs(), 2);
  EXPECT_EQ(a100.successful_runs(), 2);
  EXPECT_EQ(a100.failed_runs(), 0);
  EXPECT_EQ(a100.retries(), 0);
  EXPECT_EQ(a100.successful_steps(), 10800);
  EXPECT_EQ(a100.gpu_microseconds(), 3 * kHour);
  EXPECT_EQ(a100.gpu_hours(), 3.0);
  EXPECT_EQ(a100.wasted_gpu_microseconds(), 0);
  EXPECT_THAT(a100.gpu_hours_per_1k_successful_steps(),
              DoubleNear(3.0 / 10.8, 1e-12));
  EXPECT_EQ(a100.internal_cost_micros(), 12'000'000);  // 3 h x $4
  EXPECT_EQ(a100.internal_cost_per_successful_step(), "0.001111111");
  EXPECT_TRUE(a100.has_list_price());
  EXPECT_EQ(a100.list_price_cost_micros(), 18'000'000);  // 3 h x $6
  EXPECT_EQ(a100.list_price_cost_per_successful_step(), "0.001666667");
  EXPECT_THAT(a100.observed_over_list_price_ratio(),
              DoubleNear(4.0 / 6, 1e-12));
  EXPECT_EQ(a100.pool_occupancy().available_gpu_hours(), 576.0);
  EXPECT_EQ(a100.pool_occupancy().used_gpu_hours(), 3.0);
  EXPECT_THAT(a100.pool_occupancy().occupancy(), DoubleNear(3.0 / 576, 1e-15));
  // $12 / (3/576) / 10800 steps: the idle hours charged to the steps.
  EXPECT_EQ(a100.pool_occupancy().amortized_cost_per_successful_step(),
            "0.213333333");

  const v1::CostReportRow& l40s = rows[1];
  EXPECT_EQ(l40s.pool(), "l40s-cheap");
  EXPECT_EQ(l40s.runs(), 2);
  EXPECT_EQ(l40s.successful_runs(), 1);
  EXPECT_EQ(l40s.failed_runs(), 1);
  EXPECT_EQ(l40s.retries(), 4);
  EXPECT_EQ(l40s.steps_attempted(), 28800);
  EXPECT_EQ(l40s.successful_steps(), 3600);  // the timed-out run kept none
  EXPECT_EQ(l40s.gpu_microseconds(), 8 * kHour);
  EXPECT_EQ(l40s.wasted_gpu_microseconds(), 7 * kHour);
  EXPECT_EQ(l40s.wasted_gpu_hours(), 7.0);
  EXPECT_THAT(l40s.gpu_hours_per_1k_successful_steps(),
              DoubleNear(8.0 / 3.6, 1e-12));
  EXPECT_EQ(l40s.internal_cost_micros(), 8'000'000);
  EXPECT_EQ(l40s.internal_cost_per_successful_step(), "0.002222222");
  EXPECT_EQ(l40s.list_price_cost_micros(), 14'400'000);
  EXPECT_EQ(l40s.list_price_cost_per_successful_step(), "0.004000000");
  EXPECT_THAT(l40s.observed_over_list_price_ratio(),
              DoubleNear(1 / 1.8, 1e-12));
  EXPECT_EQ(l40s.pool_occupancy().available_gpu_hours(), 288.0);
  EXPECT_EQ(l40s.pool_occupancy().amortized_cost_per_successful_step(),
            "0.080000000");  // $8 x 288/8 / 3600

  // The cheaper card costs more per successful step.
  EXPECT_GT(l40s.internal_cost_per_successful_step(),
            a100.internal_cost_per_successful_step());

  // The BI views give the same figures, read through the dashboards' role,
  // which cannot read the raw runs.
  const std::string as_dashboards = "SET ROLE placement_dashboards; ";
  EXPECT_EQ(server_.db().QueryValue(
                as_dashboards +
                "SELECT string_agg(concat_ws('/', pool_name, "
                "internal_cost_per_successful_step, "
                "list_price_cost_per_successful_step, wasted_gpu_hours, "
                "observed_over_list_price_ratio), ',' ORDER BY pool_name) "
                "FROM cost_per_successful_step_daily"),
            "a100-train/0.001111111/0.001666667/0.000000/0.666667,"
            "l40s-cheap/0.002222222/0.004000000/7.000000/0.555556");
  // One day: 8 x 24 and 4 x 24 GPU-hours available.
  EXPECT_EQ(server_.db().QueryValue(
                as_dashboards +
                "SELECT string_agg(concat_ws('/', pool_name, occupancy, "
                "amortized_cost_per_successful_step), ',' ORDER BY pool_name) "
                "FROM pool_occupancy_daily"),
            "a100-train/0.015625/0.071111111,l40s-cheap/0.083333/0.026666667");
  EXPECT_ANY_THROW(server_.db().QueryValue(
      as_dashboards + "SELECT count(*) FROM benchmark_runs"));

  // Grouped by outcome, the waste is where the failures are.
  v1::GetCostReportRequest by_outcome =
      Report(day, day + absl::Hours(72), {v1::COST_DIMENSION_OUTCOME});
  by_outcome.mutable_filter()->add_pools("l40s-cheap");
  const std::vector<v1::CostReportRow> outcomes = All(by_outcome);
  ASSERT_EQ(outcomes.size(), 2u);
  EXPECT_EQ(outcomes[0].outcome(), v1::RUN_OUTCOME_COLLECTIVE_TIMEOUT);
  EXPECT_EQ(outcomes[0].wasted_gpu_microseconds(), 4 * kHour);
  EXPECT_EQ(outcomes[0].internal_cost_per_successful_step(), "");
  EXPECT_EQ(outcomes[1].outcome(), v1::RUN_OUTCOME_SUCCEEDED);
  EXPECT_EQ(outcomes[1].wasted_gpu_microseconds(), 3 * kHour);
  EXPECT_FALSE(outcomes[1].has_pool_occupancy());  // not grouped by pool
}

// A failed run's steps kept by its checkpoints are successful steps (as the
// planner counts them); its GPU time on the other steps is wasted.
TEST_F(CostTest, FailedRunAddsTheStepsItKeptAndWastesTheRest) {
  CreatePool(TrainingPool("a100-train", kA100, 1, 8, 4'000'000), std::nullopt);
  const absl::Time day = DayStart(5);
  Upload(TimedRun("a100-train", kA100, day + absl::Hours(1), absl::Hours(1),
                  3600, 3600));
  const v1::GetCostReportRequest request = Report(day, day + absl::Hours(24));
  std::vector<v1::CostReportRow> rows = All(request);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].internal_cost_per_successful_step(), "0.001111111");
  EXPECT_FALSE(rows[0].has_list_price());  // the pool has no list price
  EXPECT_EQ(rows[0].list_price_cost_per_successful_step(), "");

  // It kept 1800 of 3600 steps before it was preempted: those count, and
  // the half hour spent on the others is wasted.
  Upload(TimedRun("a100-train", kA100, day + absl::Hours(3), absl::Hours(1),
                  3600, 1800, v1::RUN_OUTCOME_PREEMPTED));
  rows = All(request);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].runs(), 2);
  EXPECT_EQ(rows[0].successful_runs(), 1);
  EXPECT_EQ(rows[0].failed_runs(), 1);
  EXPECT_EQ(rows[0].gpu_microseconds(), 2 * kHour);
  EXPECT_EQ(rows[0].wasted_gpu_microseconds(), kHour / 2);
  EXPECT_EQ(rows[0].successful_steps(), 5400);
  EXPECT_EQ(rows[0].internal_cost_micros(), 8'000'000);
  EXPECT_EQ(rows[0].internal_cost_per_successful_step(), "0.001481481");

  // One that kept none adds its GPU time, all of it wasted, and no step.
  Upload(TimedRun("a100-train", kA100, day + absl::Hours(5), absl::Hours(1),
                  3600, 0, v1::RUN_OUTCOME_FAILED));
  rows = All(request);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].failed_runs(), 2);
  EXPECT_EQ(rows[0].wasted_gpu_microseconds(), kHour * 3 / 2);
  EXPECT_EQ(rows[0].successful_steps(), 5400);
  EXPECT_EQ(rows[0].internal_cost_micros(), 12'000'000);
  EXPECT_EQ(rows[0].internal_cost_per_successful_step(), "0.002222222");
}

TEST_F(CostTest, ARunCountsOnTheUtcDayItEnded) {
  CreatePool(TrainingPool("a100-train", kA100, 1, 8, 4'000'000), std::nullopt);
  const absl::Time day = DayStart(7);
  // 22:00-23:30 on `day`; 23:30-00:30 across midnight, so on the next day.
  Upload(TimedRun("a100-train", kA100, day + absl::Hours(22), absl::Minutes(90),
                  5400, 5400));
  Upload(TimedRun("a100-train", kA100, day + absl::Minutes(23 * 60 + 30),
                  absl::Hours(1), 3600, 3600));

  const std::vector<v1::CostReportRow> rows =
      All(Report(day, day + absl::Hours(48),
                 {v1::COST_DIMENSION_DAY, v1::COST_DIMENSION_POOL}));
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].period_start_time().seconds(), absl::ToUnixSeconds(day));
  EXPECT_EQ(rows[0].gpu_microseconds(), kHour * 3 / 2);
  EXPECT_EQ(rows[0].internal_cost_micros(), 6'000'000);
  EXPECT_EQ(rows[0].pool_occupancy().available_gpu_hours(), 192.0);  // 8 x 24
  EXPECT_EQ(rows[1].period_start_time().seconds(),
            absl::ToUnixSeconds(day + absl::Hours(24)));
  EXPECT_EQ(rows[1].runs(), 1);
  EXPECT_EQ(rows[1].gpu_microseconds(), kHour);
  EXPECT_EQ(rows[1].internal_cost_micros(), 4'000'000);

  // A range of `day` alone leaves out the run that ended after midnight.
  const std::vector<v1::CostReportRow> first =
      All(Report(day, day + absl::Hours(24)));
  ASSERT_EQ(first.size(), 1u);
  EXPECT_EQ(first[0].runs(), 1);
  EXPECT_EQ(first[0].gpu_microseconds(), kHour * 3 / 2);
}

TEST_F(CostTest, ReportWithNoRunsHasNoRows) {
  CreatePool(TrainingPool("a100-train", kA100), std::nullopt);
  v1::GetCostReportResponse response;
  grpc::Status status = Get(
      Report(DayStart(30), DayStart(0), {v1::COST_DIMENSION_SKU}), &response);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_THAT(response.rows(), IsEmpty());
  EXPECT_EQ(response.next_page_token(), "");
}

TEST_F(CostTest, CostIsChargedAtTheRateWhenTheRunWasStored) {
  CreatePool(TrainingPool("a100-train", kA100, 1, 8, 4'000'000), std::nullopt);
  const absl::Time day = DayStart(3);
  Upload(TimedRun("a100-train", kA100, day + absl::Hours(1), absl::Hours(1),
                  3600, 3600));
  v1::UpdatePoolRequest update;
  update.mutable_pool()->set_name("a100-train");
  update.mutable_pool()->set_internal_rate_micros_per_gpu_hour(5'000'000);
  update.mutable_update_mask()->add_paths("internal_rate_micros_per_gpu_hour");
  v1::UpdatePoolResponse updated;
  ASSERT_TRUE(catalog_->UpdatePool(Deadline().get(), update, &updated).ok());
  Upload(TimedRun("a100-train", kA100, day + absl::Hours(3), absl::Hours(1),
                  3600, 3600));
  const std::vector<v1::CostReportRow> rows =
      All(Report(day, day + absl::Hours(24)));
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].internal_cost_micros(), 9'000'000);  // $4 + $5
  EXPECT_EQ(rows[0].internal_cost_per_successful_step(), "0.001250000");
}

// One case per validation rule: the named field.
struct InvalidReport {
  const char* name;
  std::function<void(v1::GetCostReportRequest&)> breaks;
  const char* field;
};

void PrintTo(const InvalidReport& c, std::ostream* out) { *out << c.name; }

class CostValidationTest : public CostTest,
                           public ::testing::WithParamInterface<InvalidReport> {
};

TEST_P(CostValidationTest, IsInvalidArgumentNamingTheField) {
  CreatePool(TrainingPool("a100-train", kA100), std::nullopt);
  v1::GetCostReportRequest request = Report(DayStart(10), DayStart(0));
  GetParam().breaks(request);
  v1::GetCostReportResponse response;
  grpc::Status status = Get(request, &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT)
      << status.error_message();
  EXPECT_THAT(ViolatedFields(status), ElementsAre(GetParam().field));
}

INSTANTIATE_TEST_SUITE_P(
    Rules, CostValidationTest,
    ::testing::Values(
        InvalidReport{"MissingStart", [](auto& r) { r.clear_start_time(); },
                      "start_time"},
        InvalidReport{"MissingEnd", [](auto& r) { r.clear_end_time(); },
                      "end_time"},
        InvalidReport{"StartNotMidnight",
                      [](auto& r) {
                        r.mutable_start_time()->set_seconds(
                            r.start_time().seconds() + 3600);
                      },
                      "start_time"},
        InvalidReport{"EndWithNanos",
                      [](auto& r) { r.mutable_end_time()->set_nanos(1); },
                      "end_time"},
        InvalidReport{"StartAfterEnd",
                      [](auto& r) {
                        std::swap(*r.mutable_start_time(),
                                  *r.mutable_end_time());
                      },
                      "start_time"},
        InvalidReport{"EmptyRange",
                      [](auto& r) { *r.mutable_end_time() = r.start_time(); },
                      "end_time"},
        InvalidReport{
            "UnspecifiedDimension",
            [](auto& r) { r.add_group_by(v1::COST_DIMENSION_UNSPECIFIED); },
            "group_by[0]"},
        InvalidReport{
            "UnknownDimension",
            [](auto& r) { r.add_group_by(static_cast<v1::CostDimension>(99)); },
            "group_by[0]"},
        InvalidReport{"RepeatedDimension",
                      [](auto& r) {
                        r.add_group_by(v1::COST_DIMENSION_SKU);
                        r.add_group_by(v1::COST_DIMENSION_SKU);
                      },
                      "group_by[1]"},
        InvalidReport{"TwoPeriods",
                      [](auto& r) {
                        r.add_group_by(v1::COST_DIMENSION_DAY);
                        r.add_group_by(v1::COST_DIMENSION_MONTH);
                      },
                      "group_by[1]"},
        InvalidReport{"UnspecifiedMethod",
                      [](auto& r) {
                        r.mutable_filter()->add_methods(
                            v1::FINE_TUNE_METHOD_UNSPECIFIED);
                      },
                      "filter.methods[0]"},
        InvalidReport{
            "UnknownOutcome",
            [](auto& r) {
              r.mutable_filter()->add_outcomes(v1::RUN_OUTCOME_SUCCEEDED);
              r.mutable_filter()->add_outcomes(static_cast<v1::RunOutcome>(42));
            },
            "filter.outcomes[1]"},
        InvalidReport{"EmptyPoolName",
                      [](auto& r) { r.mutable_filter()->add_pools(""); },
                      "filter.pools[0]"},
        InvalidReport{"FamilyIsNotASku",
                      [](auto& r) { r.mutable_filter()->add_skus("A100"); },
                      "filter.skus[0]"},
        InvalidReport{"NegativePageSize", [](auto& r) { r.set_page_size(-1); },
                      "page_size"},
        InvalidReport{"ForgedPageToken",
                      [](auto& r) { r.set_page_token("bm90IGEgdG9rZW4"); },
                      "page_token"}),
    [](const auto& info) { return std::string(info.param.name); });

TEST_F(CostTest, PagesAreDeterministicAndBoundToTheirRequest) {
  CreatePool(TrainingPool("a100-train", kA100), std::nullopt);
  CreatePool(TrainingPool("h100-train", kH100, 1, 8, 6'000'000), 9'000'000);
  const absl::Time day = DayStart(12);
  for (int d = 0; d < 4; ++d) {
    for (const auto& [pool, sku] :
         {std::pair{"a100-train", kA100}, std::pair{"h100-train", kH100}}) {
      Upload(TimedRun(pool, sku, day + absl::Hours(24 * d + 2), absl::Hours(1),
                      3000, 2900));
    }
  }
  const v1::GetCostReportRequest request =
      Report(day, day + absl::Hours(24 * 4),
             {v1::COST_DIMENSION_DAY, v1::COST_DIMENSION_SKU});
  const std::vector<v1::CostReportRow> whole = All(request);
  ASSERT_EQ(whole.size(), 8u);
  std::vector<v1::CostReportRow> paged = All(request, 3);
  ASSERT_EQ(paged.size(), whole.size());
  for (size_t i = 0; i < whole.size(); ++i) {
    EXPECT_EQ(paged[i].SerializeAsString(), whole[i].SerializeAsString());
  }
  EXPECT_EQ(whole[0].sku(), kA100);
  EXPECT_EQ(whole[1].sku(), kH100);
  EXPECT_EQ(whole[1].period_start_time().seconds(), absl::ToUnixSeconds(day));

  // A token of one request is refused by another.
  v1::GetCostReportRequest first = request;
  first.set_page_size(3);
  v1::GetCostReportResponse response;
  ASSERT_TRUE(Get(first, &response).ok());
  ASSERT_NE(response.next_page_token(), "");
  v1::GetCostReportRequest other =
      Report(day, day + absl::Hours(24 * 4), {v1::COST_DIMENSION_DAY});
  other.set_page_token(response.next_page_token());
  grpc::Status status = Get(other, &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(ViolatedFields(status), ElementsAre("page_token"));
}

// The report, from the rollups, equals an independent GROUP BY over the raw
// runs, for random runs uploaded concurrently and a range of groupings and
// filters.
// Long: the independent GROUP BY is written out here, beside the report it
// checks, so that it shares no code with the service.
TEST_F(CostTest, ReportEqualsAGroupByOverTheRawRuns) {
  CreatePool(TrainingPool("p-a100", kA100, 2, 8, 3'210'987), 4'500'000);
  CreatePool(TrainingPool("p-l40s", kL40s, 4, 4, 1'234'567), std::nullopt);
  CreatePool(TrainingPool("p-h100", kH100, 1, 8, 5'500'001), 9'876'543);
  const std::vector<std::pair<std::string, std::string>> pools = {
      {"p-a100", kA100}, {"p-l40s", kL40s}, {"p-h100", kH100}};
  const std::vector<v1::RunOutcome> outcomes = {
      v1::RUN_OUTCOME_SUCCEEDED,     v1::RUN_OUTCOME_SUCCEEDED,
      v1::RUN_OUTCOME_SUCCEEDED,     v1::RUN_OUTCOME_FAILED,
      v1::RUN_OUTCOME_OUT_OF_MEMORY, v1::RUN_OUTCOME_COLLECTIVE_TIMEOUT,
      v1::RUN_OUTCOME_PREEMPTED,     v1::RUN_OUTCOME_HARDWARE_ERROR};
  const std::vector<std::string> teams = {"", "vision", "nlp"};
  const std::vector<std::string> models = {"Llama-3.1-8B", "Llama-2-7B"};

  const uint32_t seed = std::random_device{}();
  SCOPED_TRACE(absl::StrCat("seed ", seed));
  std::mt19937 random(seed);
  std::vector<v1::BenchmarkRun> runs;
  for (int i = 0; i < 240; ++i) {
    const auto& [pool, sku] = pools[random() % pools.size()];
    const int wall_seconds = 60 + static_cast<int>(random() % 30000);
    const absl::Time start = DayStart(40) +
                             absl::Seconds(random() % (35 * 86400)) +
                             absl::Microseconds(random() % 1'000'000);
    const int64_t attempted = random() % (wall_seconds + 1);
    const int64_t succeeded = attempted == 0 ? 0 : random() % (attempted + 1);
    v1::BenchmarkRun run = TimedRun(
        pool, sku, start,
        absl::Seconds(wall_seconds) + absl::Microseconds(random() % 1'000'000),
        attempted, succeeded, outcomes[random() % outcomes.size()],
        static_cast<int>(random() % 4));
    run.set_team(teams[random() % teams.size()]);
    run.mutable_recipe()->set_model(models[random() % models.size()]);
    run.mutable_recipe()->set_lora_rank(random() % 2 == 0 ? 8 : 16);
    if (random() % 3 == 0) {
      run.mutable_recipe()->set_method(v1::FINE_TUNE_METHOD_FULL);
      run.mutable_recipe()->clear_lora_rank();
      run.mutable_recipe()->clear_target_modules();
    }
    runs.push_back(run);
  }
  std::vector<std::thread> uploaders;
  for (int t = 0; t < 4; ++t) {
    uploaders.emplace_back([&, t] {
      for (size_t i = t; i < runs.size(); i += 4) Upload(runs[i]);
    });
  }
  for (auto& thread : uploaders) thread.join();
  ASSERT_EQ(server_.db().QueryValue("SELECT count(*) FROM benchmark_runs"),
            "240");

  struct Case {
    int first_day_ago, last_day_ago;  // [DayStart(first), DayStart(last))
    std::vector<v1::CostDimension> group_by;
    std::function<void(v1::CostFilter&)> filter;
  };
  const std::vector<Case> cases = {
      {45, 0, {}, [](auto&) {}},
      {45, 0, {v1::COST_DIMENSION_SKU, v1::COST_DIMENSION_DAY}, [](auto&) {}},
      {30,
       10,
       {v1::COST_DIMENSION_POOL, v1::COST_DIMENSION_TEAM,
        v1::COST_DIMENSION_OUTCOME},
       [](auto&) {}},
      {45,
       0,
       {v1::COST_DIMENSION_WEEK, v1::COST_DIMENSION_RECIPE_KEY,
        v1::COST_DIMENSION_MODEL, v1::COST_DIMENSION_METHOD},
       [](auto&) {}},
      {45,
       0,
       {v1::COST_DIMENSION_MONTH, v1::COST_DIMENSION_SKU},
       [](v1::CostFilter& f) {
         f.add_outcomes(v1::RUN_OUTCOME_SUCCEEDED);
         f.add_outcomes(v1::RUN_OUTCOME_FAILED);
         f.add_teams("vision");
         f.add_teams("ml-platform");
       }},
      {45,
       0,
       {v1::COST_DIMENSION_DAY, v1::COST_DIMENSION_POOL},
       [](v1::CostFilter& f) {
         f.add_pools("p-a100");
         f.add_pools("p-l40s");
         f.add_methods(v1::FINE_TUNE_METHOD_LORA);
         f.add_models("Llama-2-7B");
       }},
      {45,
       0,
       {v1::COST_DIMENSION_TEAM},
       [](v1::CostFilter& f) { f.add_skus(kH100); }},
  };

  for (size_t c = 0; c < cases.size(); ++c) {
    SCOPED_TRACE(absl::StrCat("case ", c));
    const Case& test = cases[c];
    v1::GetCostReportRequest request =
        Report(DayStart(test.first_day_ago), DayStart(test.last_day_ago),
               test.group_by);
    test.filter(*request.mutable_filter());

    std::vector<std::string> reported;
    for (const v1::CostReportRow& row : All(request, 7)) {
      std::string period;
      if (row.has_period_start_time()) {
        period = absl::FormatTime(
            "%Y-%m-%d",
            absl::FromUnixSeconds(row.period_start_time().seconds()),
            absl::UTCTimeZone());
      }
      const std::string method =
          row.method() == v1::FINE_TUNE_METHOD_UNSPECIFIED
              ? ""
              : std::string(
                    absl::StripPrefix(v1::FineTuneMethod_Name(row.method()),
                                      "FINE_TUNE_METHOD_"));
      const std::string outcome =
          row.outcome() == v1::RUN_OUTCOME_UNSPECIFIED
              ? ""
              : std::string(absl::StripPrefix(
                    v1::RunOutcome_Name(row.outcome()), "RUN_OUTCOME_"));
      reported.push_back(absl::StrJoin(
          {period, row.sku(), row.pool(), row.recipe_key(), row.model(), method,
           row.team(), outcome, absl::StrCat(row.runs()),
           absl::StrCat(row.successful_runs()), absl::StrCat(row.retries()),
           absl::StrCat(row.steps_attempted()),
           absl::StrCat(row.successful_steps()),
           absl::StrCat(row.gpu_microseconds()),
           absl::StrCat(row.wasted_gpu_microseconds()),
           absl::StrCat(row.internal_cost_micros()),
           row.internal_cost_per_successful_step(),
           row.has_list_price() ? absl::StrCat(row.list_price_cost_micros())
                                : "-",
           row.list_price_cost_per_successful_step()},
          "|"));
    }

    // The independent aggregate: raw runs joined with the pools (whose
    // rates never changed in this test), nothing of migration 0004.
    auto dimension = [&](v1::CostDimension d, const std::string& column) {
      for (int g : test.group_by) {
        if (g == d) return column;
      }
      return std::string("''::text");
    };
    std::string period = "''::text";
    for (int g : test.group_by) {
      const char* unit = g == v1::COST_DIMENSION_DAY     ? "day"
                         : g == v1::COST_DIMENSION_WEEK  ? "week"
                         : g == v1::COST_DIMENSION_MONTH ? "month"
                                                         : nullptr;
      if (unit != nullptr) {
        period = absl::StrCat("to_char(date_trunc('", unit,
                              "', ended_at AT TIME ZONE 'UTC'), 'YYYY-MM-DD')");
      }
    }
    auto in_list = [](const std::string& column, const auto& values,
                      auto name) {
      if (values.empty()) return std::string();
      std::vector<std::string> quoted;
      for (const auto& v : values)
        quoted.push_back(absl::StrCat("'", name(v), "'"));
      return absl::StrCat(" AND ", column, " IN (", absl::StrJoin(quoted, ","),
                          ")");
    };
    auto same = [](const std::string& s) { return s; };
    const v1::CostFilter& f = request.filter();
    std::string where = absl::StrCat(
        "(ended_at AT TIME ZONE 'UTC')::date >= '",
        absl::FormatTime("%Y-%m-%d", DayStart(test.first_day_ago),
                         absl::UTCTimeZone()),
        "' AND (ended_at AT TIME ZONE 'UTC')::date < '",
        absl::FormatTime("%Y-%m-%d", DayStart(test.last_day_ago),
                         absl::UTCTimeZone()),
        "'", in_list("r.sku_id", f.skus(), same),
        in_list("r.pool_name", f.pools(), same),
        in_list("r.model", f.models(), same),
        in_list("r.team", f.teams(), same),
        in_list(
            "r.method", f.methods(),
            [](int m) {
              return std::string(absl::StripPrefix(
                  v1::FineTuneMethod_Name(static_cast<v1::FineTuneMethod>(m)),
                  "FINE_TUNE_METHOD_"));
            }),
        in_list("r.outcome", f.outcomes(), [](int o) {
          return std::string(absl::StripPrefix(
              v1::RunOutcome_Name(static_cast<v1::RunOutcome>(o)),
              "RUN_OUTCOME_"));
        }));
    const std::string keys =
        absl::StrJoin({period, dimension(v1::COST_DIMENSION_SKU, "r.sku_id"),
                       dimension(v1::COST_DIMENSION_POOL, "r.pool_name"),
                       dimension(v1::COST_DIMENSION_RECIPE_KEY, "r.recipe_key"),
                       dimension(v1::COST_DIMENSION_MODEL, "r.model"),
                       dimension(v1::COST_DIMENSION_METHOD, "r.method"),
                       dimension(v1::COST_DIMENSION_TEAM, "r.team"),
                       dimension(v1::COST_DIMENSION_OUTCOME, "r.outcome")},
                      ", ");
    const std::string steps = "sum(steps_succeeded)";
    const std::string sql = absl::StrCat(
        "SELECT coalesce(string_agg(line, E'\\n' ORDER BY k COLLATE \"C\"), "
        "'') "
        "FROM (SELECT concat_ws(E'\\x01', ",
        keys, ") AS k, concat_ws('|', ", keys,
        ", count(*), count(*) FILTER (WHERE outcome = 'SUCCEEDED'), "
        "sum(retries), sum(steps_attempted), ",
        steps,
        ", sum(gpu_microseconds), "
        "sum(CASE WHEN steps_attempted = 0 AND outcome <> 'SUCCEEDED' "
        "THEN gpu_microseconds WHEN steps_attempted = 0 THEN 0 "
        "ELSE round(gpu_microseconds::numeric "
        "* (steps_attempted - steps_succeeded) / steps_attempted) END), "
        "round(sum(gpu_microseconds::numeric * "
        "p.internal_rate_micros_per_gpu_hour) "
        "/ 3.6e9), "
        "coalesce(to_char(round(sum(gpu_microseconds::numeric * "
        "p.internal_rate_micros_per_gpu_hour) / (3.6e15 * nullif(",
        steps,
        ", 0)), 9), 'FM999999990.000000000'), ''), "
        "CASE WHEN bool_and(p.list_price_micros_per_gpu_hour IS NOT NULL) THEN "
        "round(sum(gpu_microseconds::numeric * "
        "p.list_price_micros_per_gpu_hour) "
        "/ 3.6e9)::text ELSE '-' END, "
        "CASE WHEN bool_and(p.list_price_micros_per_gpu_hour IS NOT NULL) THEN "
        "coalesce(to_char(round(sum(gpu_microseconds::numeric * "
        "p.list_price_micros_per_gpu_hour) / (3.6e15 * nullif(",
        steps,
        ", 0)), 9), 'FM999999990.000000000'), '') ELSE '' END) AS line "
        "FROM benchmark_runs r JOIN pools p ON p.name = r.pool_name WHERE ",
        where, " GROUP BY ", keys, ") g");
    const std::string expected = server_.db().QueryValue(sql);
    EXPECT_EQ(absl::StrJoin(reported, "\n"), expected);
    EXPECT_FALSE(expected.empty());
  }
}

}  // namespace
}  // namespace placement
