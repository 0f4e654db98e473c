// Load and latency tool for the cost report (see bench/cost_bench.sh).
//
//   cost_load pools --server H:P
//       creates the benchmark's four pools through CatalogService.
//   cost_load upload --server H:P --runs N [--clients C] [--days D]
//       uploads N runs through UploadBenchmarkRun (the real path that
//       maintains the rollups), ending over the last D days.
//   cost_load report --server H:P [--days D] [--iterations I]
//       times GetCostReport grouped by SKU and day over the last D whole UTC
//       days (today included), and prints the latency and the report's
//       totals (to compare with the raw GROUP BY).
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <random>
#include <thread>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "placement/v1/catalog.grpc.pb.h"
#include "placement/v1/cost.grpc.pb.h"
#include "placement/v1/telemetry.grpc.pb.h"
#include "tests/support/fixtures.h"

ABSL_FLAG(std::string, server, "127.0.0.1:50051", "placementd address");
ABSL_FLAG(int64_t, runs, 1000, "upload: runs to upload");
ABSL_FLAG(int, clients, 8, "upload: concurrent clients");
ABSL_FLAG(int, days, 90, "days the runs and the report span");
ABSL_FLAG(int, iterations, 30, "report: timed calls");

namespace {

using placement::testing::Deadline;
namespace v1 = placement::v1;

struct BenchPool {
  const char* name;
  const char* sku;
  int nodes;
  int gpus_per_node;
  int64_t rate_micros;
  int64_t list_price_micros;  // 0: none
};

// Rates are illustrative internal figures, list prices public on-demand
// prices of the kind (rounded); L4 has none, to exercise the absent list
// price.
constexpr BenchPool kPools[] = {
    {"bench-a100", "A100-SXM4-80GB", 16, 8, 2'100'000, 4'100'000},
    {"bench-h100", "H100-SXM5-80GB", 8, 8, 4'500'000, 8'000'000},
    {"bench-l40s", "L40S-PCIE-48GB", 32, 4, 1'100'000, 1'900'000},
    {"bench-l4", "L4-PCIE-24GB", 16, 8, 500'000, 0},
};

std::shared_ptr<grpc::Channel> Channel() {
  return grpc::CreateChannel(absl::GetFlag(FLAGS_server),
                             grpc::InsecureChannelCredentials());
}

int CreatePools() {
  auto stub = v1::CatalogService::NewStub(Channel());
  for (const BenchPool& p : kPools) {
    v1::CreatePoolRequest request;
    *request.mutable_pool() = placement::testing::TrainingPool(
        p.name, p.sku, p.nodes, p.gpus_per_node, p.rate_micros);
    if (p.list_price_micros > 0) {
      request.mutable_pool()->set_list_price_micros_per_gpu_hour(
          p.list_price_micros);
    }
    request.set_request_id(std::string("bench-cost-") + p.name);
    v1::CreatePoolResponse response;
    grpc::Status status =
        stub->CreatePool(Deadline().get(), request, &response);
    if (!status.ok()) {
      std::cerr << p.name << ": " << status.error_message() << "\n";
      return 1;
    }
  }
  return 0;
}

int Upload() {
  auto channel = Channel();
  const int64_t total = absl::GetFlag(FLAGS_runs);
  const int clients = std::max(1, absl::GetFlag(FLAGS_clients));
  const int64_t span_seconds = int64_t{absl::GetFlag(FLAGS_days)} * 86400;
  const int64_t now = absl::ToUnixSeconds(absl::Now());
  std::atomic<int64_t> next{0}, failures{0};
  const auto begin = std::chrono::steady_clock::now();
  std::vector<std::thread> threads;
  for (int c = 0; c < clients; ++c) {
    threads.emplace_back([&, c] {
      std::mt19937_64 random(1234 + c);
      auto stub = v1::TelemetryService::NewStub(channel);
      for (int64_t i = next++; i < total; i = next++) {
        const BenchPool& p = kPools[i % std::size(kPools)];
        v1::UploadBenchmarkRunRequest request;
        v1::BenchmarkRun& run = *request.mutable_run();
        run = placement::testing::SucceededRun(p.name, p.sku);
        const int64_t wall = 600 + static_cast<int64_t>(random() % 14400);
        const int64_t end =
            now - 3600 - static_cast<int64_t>(random() % (span_seconds - 7200));
        run.mutable_start_time()->set_seconds(end - wall);
        run.mutable_end_time()->set_seconds(end);
        run.set_steps_attempted(wall * 9 / 10);
        run.set_step_time_mean_seconds(1.0);
        run.set_step_time_p50_seconds(1.0);
        run.set_step_time_p95_seconds(1.2);
        run.set_peak_memory_gb(20.5);  // fits every card, the 24 GB L4 too
        run.set_retries(static_cast<int>(random() % 4));
        const bool ok = random() % 10 < 8;
        run.set_outcome(ok ? v1::RUN_OUTCOME_SUCCEEDED
                           : v1::RUN_OUTCOME_COLLECTIVE_TIMEOUT);
        run.set_steps_succeeded(ok ? run.steps_attempted() *
                                         (10 - run.retries()) / 10
                                   : run.steps_attempted() / 2);
        v1::UploadBenchmarkRunResponse response;
        grpc::Status status =
            stub->UploadBenchmarkRun(Deadline(30).get(), request, &response);
        if (!status.ok()) {
          if (failures++ == 0) std::cerr << status.error_message() << "\n";
        }
      }
    });
  }
  for (auto& thread : threads) thread.join();
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - begin)
          .count();
  std::printf(
      "upload_benchmark_run runs=%lld seconds=%.1f runs_per_s=%.0f "
      "failures=%lld\n",
      static_cast<long long>(total), seconds, total / seconds,
      static_cast<long long>(failures.load()));
  return failures == 0 ? 0 : 1;
}

int Report() {
  auto stub = v1::CostService::NewStub(Channel());
  const int days = absl::GetFlag(FLAGS_days);
  const absl::CivilDay today =
      absl::ToCivilDay(absl::Now(), absl::UTCTimeZone());
  v1::GetCostReportRequest request;
  request.mutable_start_time()->set_seconds(absl::ToUnixSeconds(
      absl::FromCivil(today - (days - 1), absl::UTCTimeZone())));
  request.mutable_end_time()->set_seconds(
      absl::ToUnixSeconds(absl::FromCivil(today + 1, absl::UTCTimeZone())));
  request.add_group_by(v1::COST_DIMENSION_SKU);
  request.add_group_by(v1::COST_DIMENSION_DAY);
  request.set_page_size(1000);

  std::vector<double> millis;
  int64_t rows = 0, runs = 0, gpu_us = 0, wasted_us = 0, cost_micros = 0;
  for (int i = 0; i < absl::GetFlag(FLAGS_iterations) + 1; ++i) {
    const auto begin = std::chrono::steady_clock::now();
    v1::GetCostReportRequest page = request;
    rows = runs = gpu_us = wasted_us = cost_micros = 0;
    do {
      v1::GetCostReportResponse response;
      grpc::Status status =
          stub->GetCostReport(Deadline(60).get(), page, &response);
      if (!status.ok()) {
        std::cerr << "GetCostReport: " << status.error_message() << "\n";
        return 1;
      }
      for (const v1::CostReportRow& row : response.rows()) {
        ++rows;
        runs += row.runs();
        gpu_us += row.gpu_microseconds();
        wasted_us += row.wasted_gpu_microseconds();
        cost_micros += row.internal_cost_micros();
      }
      page.set_page_token(response.next_page_token());
    } while (!page.page_token().empty());
    const double ms = std::chrono::duration<double, std::milli>(
                          std::chrono::steady_clock::now() - begin)
                          .count();
    if (i > 0) millis.push_back(ms);  // the first call warms the caches
  }
  std::sort(millis.begin(), millis.end());
  double sum = 0;
  for (double ms : millis) sum += ms;
  std::printf(
      "cost_report rows=%lld runs=%lld gpu_microseconds=%lld "
      "wasted_gpu_microseconds=%lld internal_cost_micros=%lld\n",
      static_cast<long long>(rows), static_cast<long long>(runs),
      static_cast<long long>(gpu_us), static_cast<long long>(wasted_us),
      static_cast<long long>(cost_micros));
  std::printf("cost_report calls=%zu median_ms=%.2f mean_ms=%.2f p95_ms=%.2f\n",
              millis.size(), millis[millis.size() / 2], sum / millis.size(),
              millis[std::min(millis.size() - 1, millis.size() * 95 / 100)]);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<char*> args = absl::ParseCommandLine(argc, argv);
  const std::string mode = args.size() > 1 ? args[1] : "";
  if (mode == "pools") return CreatePools();
  if (mode == "upload") return Upload();
  if (mode == "report") return Report();
  std::cerr << "usage: cost_load pools|upload|report [flags]\n";
  return 2;
}
