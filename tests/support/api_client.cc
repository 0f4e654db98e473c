#include "tests/support/api_client.h"

#include <algorithm>

#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "tests/support/fixtures.h"

namespace placement::testing {

ApiClient::ApiClient(const std::shared_ptr<grpc::Channel>& channel)
    : catalog_(v1::CatalogService::NewStub(channel)),
      telemetry_(v1::TelemetryService::NewStub(channel)),
      placement_(v1::PlacementService::NewStub(channel)) {}

void ApiClient::CreatePool(const v1::Pool& pool) {
  v1::CreatePoolRequest request;
  *request.mutable_pool() = pool;
  v1::CreatePoolResponse response;
  const grpc::Status status =
      catalog_->CreatePool(Deadline().get(), request, &response);
  ASSERT_TRUE(status.ok()) << status.error_message();
}

v1::UploadBenchmarkRunResponse ApiClient::UploadRun(
    const std::string& pool, const std::string& sku, const v1::Recipe& recipe,
    double gpu_hours, int64_t steps_ok, double peak_gb, v1::RunOutcome outcome,
    int retries, v1::Offload offload, const std::string& plan_id) {
  v1::BenchmarkRun run;
  run.set_run_id(NewUuid());
  run.set_agent_id("test-agent");
  run.set_pool(pool);
  run.set_sku(sku);
  *run.mutable_recipe() = recipe;
  const int gpus = std::max(1, recipe.gpu_count());
  run.set_gpu_count(gpus);
  run.mutable_recipe()->set_gpu_count(gpus);
  const int64_t wall_seconds = static_cast<int64_t>(gpu_hours * 3600 / gpus);
  const int64_t end = absl::ToUnixSeconds(absl::Now()) - 60;
  run.mutable_start_time()->set_seconds(end - wall_seconds);
  run.mutable_end_time()->set_seconds(end);
  const int64_t attempted = std::max<int64_t>(steps_ok, 100);
  run.set_steps_attempted(attempted);
  run.set_steps_succeeded(steps_ok);
  const double step = static_cast<double>(wall_seconds) / attempted;
  run.set_step_time_mean_seconds(step);
  run.set_step_time_p50_seconds(step);
  run.set_step_time_p95_seconds(step * 1.1);
  run.set_tokens_per_second(1000);
  run.set_peak_memory_gb(peak_gb);
  run.set_offload(offload);
  // Collectives across GPUs run over the pool's fabric: PCIe on an L40S.
  const bool pcie_only = sku.rfind("L40S", 0) == 0;
  run.set_interconnect(gpus == 1   ? v1::INTERCONNECT_NONE
                       : pcie_only ? v1::INTERCONNECT_PCIE
                                   : v1::INTERCONNECT_NVLINK);
  run.set_collectives_opened(gpus > 1);
  run.set_retries(retries);
  run.set_outcome(outcome);
  run.set_exclusive(true);
  run.set_plan_id(plan_id);
  v1::UploadBenchmarkRunRequest request;
  *request.mutable_run() = run;
  v1::UploadBenchmarkRunResponse response;
  const grpc::Status status =
      telemetry_->UploadBenchmarkRun(Deadline().get(), request, &response);
  EXPECT_TRUE(status.ok()) << status.error_message();
  return response;
}

v1::BenchmarkRun ApiClient::RunOf(const TimedRun& spec) {
  v1::BenchmarkRun run;
  run.set_run_id(NewUuid());
  run.set_agent_id("test-agent");
  run.set_pool(spec.pool);
  run.set_sku(spec.sku);
  *run.mutable_recipe() = spec.recipe;
  const int gpus = std::max(1, spec.recipe.gpu_count());
  run.set_gpu_count(gpus);
  run.mutable_recipe()->set_gpu_count(gpus);
  const double wall_s = spec.wall_s > 0
                            ? spec.wall_s
                            : (spec.retries + 1) * spec.startup_s +
                                  spec.steps_attempted * spec.step_s;
  const absl::Time end = absl::Now() - absl::Minutes(1);
  const absl::Time start = end - absl::Seconds(wall_s);
  run.mutable_start_time()->set_seconds(absl::ToUnixSeconds(start));
  run.mutable_start_time()->set_nanos(
      static_cast<int32_t>(absl::ToInt64Nanoseconds(
          start - absl::FromUnixSeconds(absl::ToUnixSeconds(start)))));
  run.mutable_end_time()->set_seconds(absl::ToUnixSeconds(end));
  run.mutable_end_time()->set_nanos(
      static_cast<int32_t>(absl::ToInt64Nanoseconds(
          end - absl::FromUnixSeconds(absl::ToUnixSeconds(end)))));
  run.set_steps_attempted(spec.steps_attempted);
  run.set_steps_succeeded(spec.steps_succeeded);
  run.set_step_time_mean_seconds(spec.step_s);
  run.set_step_time_p50_seconds(spec.step_s);
  run.set_step_time_p95_seconds(spec.step_s * 1.05);
  run.set_tokens_per_second(1000);
  run.set_peak_memory_gb(spec.peak_gb);
  run.set_offload(spec.offload);
  run.set_plan_id(spec.plan_id);
  run.set_failure_reason(spec.failure_reason);
  run.set_interconnect(spec.interconnect != v1::INTERCONNECT_UNSPECIFIED
                           ? spec.interconnect
                       : gpus == 1 ? v1::INTERCONNECT_NONE
                                   : v1::INTERCONNECT_NVLINK);
  run.set_collectives_opened(gpus > 1);
  run.set_outcome(spec.outcome);
  run.set_retries(spec.retries);
  for (v1::RunOutcome o : spec.retry_outcomes) run.add_retry_outcomes(o);
  run.set_exclusive(true);
  for (const v1::EvalResult& eval : spec.evals) *run.add_evals() = eval;
  return run;
}

v1::UploadBenchmarkRunResponse ApiClient::UploadTimedRun(const TimedRun& spec) {
  v1::UploadBenchmarkRunRequest request;
  *request.mutable_run() = RunOf(spec);
  v1::UploadBenchmarkRunResponse response;
  const grpc::Status status =
      telemetry_->UploadBenchmarkRun(Deadline().get(), request, &response);
  EXPECT_TRUE(status.ok()) << status.error_message();
  return response;
}

grpc::Status ApiClient::Upload(const v1::BenchmarkRun& run,
                               v1::UploadBenchmarkRunResponse* response) {
  v1::UploadBenchmarkRunRequest request;
  *request.mutable_run() = run;
  v1::UploadBenchmarkRunResponse ignored;
  return telemetry_->UploadBenchmarkRun(
      Deadline().get(), request, response != nullptr ? response : &ignored);
}

v1::ListEvalResultsResponse ApiClient::ListEvalResults(
    const v1::ListEvalResultsRequest& request) {
  v1::ListEvalResultsResponse response;
  const grpc::Status status =
      telemetry_->ListEvalResults(Deadline().get(), request, &response);
  EXPECT_TRUE(status.ok()) << status.error_message();
  return response;
}

grpc::Status ApiClient::Plan(const v1::PlacePlanRequest& request,
                             v1::PlacePlanResponse* response) {
  return placement_->PlacePlan(Deadline().get(), request, response);
}

v1::PlacePlanResponse ApiClient::PlanUntil(
    const v1::PlacePlanRequest& request,
    const std::function<bool(const v1::PlacePlanResponse&)>& done,
    absl::Duration timeout) {
  const absl::Time deadline = absl::Now() + timeout;
  v1::PlacePlanResponse response;
  grpc::Status status;
  do {
    response.Clear();
    // Until the change arrives the answer may also be an error (no training
    // pool yet on another replica).
    status = Plan(request, &response);
    if (status.ok() && done(response)) return response;
    absl::SleepFor(absl::Milliseconds(20));
  } while (absl::Now() < deadline);
  ADD_FAILURE() << "no plan as expected within "
                << absl::FormatDuration(timeout) << "; last answer: "
                << (status.ok() ? response.ShortDebugString()
                                : status.error_message());
  return response;
}

}  // namespace placement::testing
