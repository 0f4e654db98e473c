// Load generator for PlacePlan (see bench/placeplan.sh).
//
//   plan_load seed --server H:P [--pools 50] [--runs 100000] [--clients 8]
//       creates the pools and uploads the runs through the public API.
//   plan_load load --server H:P --rpc plan|empty [--clients 16] [--seconds 10]
//       a closed loop: each client sends its next call when the previous one
//       answered; prints calls/s and latency percentiles. "empty" is
//       grpc.health.v1.Health/Check on the same server: the cost of a call
//       that does nothing.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <thread>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "grpc/health/v1/health.grpc.pb.h"
#include "placement/v1/catalog.grpc.pb.h"
#include "placement/v1/placement.grpc.pb.h"
#include "placement/v1/telemetry.grpc.pb.h"
#include "tests/support/fixtures.h"

ABSL_FLAG(std::string, server, "127.0.0.1:50051", "placementd address");
ABSL_FLAG(int, pools, 50, "seed: pools to create");
ABSL_FLAG(int64_t, runs, 100'000, "seed: runs to upload");
ABSL_FLAG(int, clients, 16, "concurrent clients (closed loop)");
ABSL_FLAG(int, seconds, 10, "load: how long to run");
ABSL_FLAG(std::string, rpc, "plan", "load: plan or empty");
ABSL_FLAG(int, deadline_ms, 10000, "load: deadline of each call");

namespace {

namespace v1 = placement::v1;
using placement::testing::Deadline;

struct PoolSpec {
  const char* sku;
  double rate;  // per GPU-hour
};

// A mix like a real fleet: many L40S and A100s, some H100/H200.
constexpr PoolSpec kSpecs[] = {
    {"L40S-PCIE-48GB", 1.10}, {"A100-SXM4-80GB", 2.10},
    {"A100-PCIE-40GB", 1.40}, {"A100-SXM4-40GB", 1.70},
    {"A100-PCIE-80GB", 1.90}, {"H100-SXM5-80GB", 3.90},
    {"H200-SXM-141GB", 4.60}, {"L40S-PCIE-48GB", 1.05}};

std::string PoolName(int i) { return absl::StrCat("pool-", i); }
const PoolSpec& Spec(int i) { return kSpecs[i % std::size(kSpecs)]; }

// Recipes a platform would see: four models, three sequence lengths, two
// ranks.
v1::Recipe RecipeNumber(int i) {
  static const char* const kModels[] = {"Llama-3.1-8B", "Mistral-7B",
                                        "Qwen2.5-7B", "Qwen2.5-14B"};
  v1::Recipe r;
  r.set_model(kModels[i % 4]);
  r.set_method(v1::FINE_TUNE_METHOD_LORA);
  r.set_lora_rank(i / 12 % 2 == 0 ? 16 : 64);
  r.add_target_modules(std::string("all-linear"));
  r.set_sequence_length(1024 << (i / 4 % 3));
  r.set_micro_batch_size(2);
  r.set_activation_checkpointing(true);
  r.set_flash_attention(true);
  r.set_gpu_count(1);
  return r;
}
constexpr int kRecipes = 24;

int Seed() {
  auto channel = grpc::CreateChannel(absl::GetFlag(FLAGS_server),
                                     grpc::InsecureChannelCredentials());
  auto catalog = v1::CatalogService::NewStub(channel);
  const int pools = absl::GetFlag(FLAGS_pools);
  for (int i = 0; i < pools; ++i) {
    v1::CreatePoolRequest request;
    *request.mutable_pool() = placement::testing::TrainingPool(
        PoolName(i), Spec(i).sku, 4, 8,
        static_cast<int64_t>(Spec(i).rate * 1e6));
    request.set_request_id(PoolName(i));
    v1::CreatePoolResponse response;
    grpc::Status status =
        catalog->CreatePool(Deadline().get(), request, &response);
    if (!status.ok()) {
      std::cerr << "pool " << i << ": " << status.error_message() << "\n";
      return 1;
    }
  }
  const int64_t total = absl::GetFlag(FLAGS_runs);
  std::atomic<int64_t> next{0}, failures{0};
  const auto begin = std::chrono::steady_clock::now();
  std::vector<std::thread> threads;
  for (int c = 0; c < absl::GetFlag(FLAGS_clients); ++c) {
    threads.emplace_back([&] {
      auto telemetry = v1::TelemetryService::NewStub(channel);
      for (int64_t i = next++; i < total; i = next++) {
        const int pool = static_cast<int>(i % pools);
        v1::BenchmarkRun run =
            placement::testing::SucceededRun(PoolName(pool), Spec(pool).sku);
        *run.mutable_recipe() = RecipeNumber(static_cast<int>(i / pools % kRecipes));
        run.set_peak_memory_gb(18 + (i % 17));
        run.set_retries(static_cast<int>(i % 5 == 0));
        if (i % 23 == 0) {
          run.set_outcome(v1::RUN_OUTCOME_COLLECTIVE_TIMEOUT);
          run.set_steps_succeeded(300);
        }
        v1::UploadBenchmarkRunRequest request;
        *request.mutable_run() = run;
        v1::UploadBenchmarkRunResponse response;
        if (!telemetry->UploadBenchmarkRun(Deadline(60).get(), request, &response)
                 .ok()) {
          ++failures;
        }
      }
    });
  }
  for (auto& t : threads) t.join();
  std::printf("seeded pools=%d runs=%lld seconds=%.1f failures=%lld\n", pools,
              static_cast<long long>(total),
              std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                            begin)
                  .count(),
              static_cast<long long>(failures.load()));
  return failures == 0 ? 0 : 1;
}

int Load() {
  const std::string rpc = absl::GetFlag(FLAGS_rpc);
  const int clients = absl::GetFlag(FLAGS_clients);
  const auto duration = std::chrono::seconds(absl::GetFlag(FLAGS_seconds));
  std::vector<std::vector<double>> latencies(clients);
  std::atomic<int64_t> errors{0};
  // Refusals by status code: under overload placementd sheds load with
  // RESOURCE_EXHAUSTED, or the caller's deadline passes.
  std::vector<std::atomic<int64_t>> by_code(17);
  const auto call_deadline =
      std::chrono::milliseconds(absl::GetFlag(FLAGS_deadline_ms));
  // One channel per client: separate HTTP/2 connections, as separate
  // orchestrators would have.
  std::vector<std::thread> threads;
  const auto begin = std::chrono::steady_clock::now();
  const auto end = begin + duration;
  for (int c = 0; c < clients; ++c) {
    threads.emplace_back([&, c] {
      grpc::ChannelArguments args;
      args.SetInt("grpc.channel_id", c);  // distinct channels
      auto channel = grpc::CreateCustomChannel(
          absl::GetFlag(FLAGS_server), grpc::InsecureChannelCredentials(), args);
      auto placement = v1::PlacementService::NewStub(channel);
      auto health = grpc::health::v1::Health::NewStub(channel);
      int i = c;
      while (std::chrono::steady_clock::now() < end) {
        const auto start = std::chrono::steady_clock::now();
        grpc::Status status;
        if (rpc == "plan") {
          v1::PlacePlanRequest request;
          *request.mutable_recipe() = RecipeNumber(i++ % kRecipes);
          request.set_total_steps(20'000);
          v1::PlacePlanResponse response;
          grpc::ClientContext context;
          context.set_deadline(std::chrono::system_clock::now() + call_deadline);
          status = placement->PlacePlan(&context, request, &response);
          if (status.ok() && response.candidates_size() == 0) ++errors;
          if (c == 0 && i == kRecipes) {
            std::printf("response: %zu bytes, %d candidates, %d rejections\n",
                        response.ByteSizeLong(), response.candidates_size(),
                        response.rejections_size());
          }
        } else {
          grpc::health::v1::HealthCheckRequest request;
          grpc::health::v1::HealthCheckResponse response;
          grpc::ClientContext context;
          context.set_deadline(std::chrono::system_clock::now() + call_deadline);
          status = health->Check(&context, request, &response);
        }
        if (!status.ok()) {
          ++errors;
          ++by_code[static_cast<int>(status.error_code()) % 17];
          continue;  // latency percentiles are of answered calls
        }
        latencies[c].push_back(std::chrono::duration<double, std::milli>(
                                   std::chrono::steady_clock::now() - start)
                                   .count());
      }
    });
  }
  for (auto& t : threads) t.join();
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - begin)
          .count();
  std::vector<double> all;
  for (const auto& l : latencies) all.insert(all.end(), l.begin(), l.end());
  std::sort(all.begin(), all.end());
  auto pct = [&](double q) {
    return all.empty() ? 0.0 : all[static_cast<size_t>(q * (all.size() - 1))];
  };
  std::printf("%s calls=%zu clients=%d seconds=%.1f calls_per_s=%.0f p50_ms=%.3f p99_ms=%.3f errors=%lld\n",
              rpc.c_str(), all.size(), clients, seconds, all.size() / seconds,
              pct(0.5), pct(0.99), static_cast<long long>(errors.load()));
  for (int code = 1; code < 17; ++code) {
    if (by_code[code] > 0) {
      std::printf("  refused with code %d: %lld\n", code,
                  static_cast<long long>(by_code[code].load()));
    }
  }
  return errors == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<char*> args = absl::ParseCommandLine(argc, argv);
  const std::string mode = args.size() > 1 ? args[1] : "";
  if (mode == "seed") return Seed();
  if (mode == "load") return Load();
  std::cerr << "usage: plan_load seed|load [flags]\n";
  return 2;
}
