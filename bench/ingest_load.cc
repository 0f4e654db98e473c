// Load generator for telemetry ingestion (see bench/ingest.sh).
//
//   ingest_load samples --server H:P --samples N [--streams S] [--batch B]
//       streams N step samples through StreamStepSamples over S concurrent
//       streams (one run each) in batches of B, and prints samples/s.
//   ingest_load csv --samples N --out FILE
//       writes the same shape of rows as CSV for a plain COPY baseline.
//   ingest_load runs --server H:P --runs N [--clients C]
//       uploads N runs with C concurrent clients, and prints runs/s.
#include <atomic>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <thread>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "placement/v1/catalog.grpc.pb.h"
#include "placement/v1/telemetry.grpc.pb.h"
#include "tests/support/fixtures.h"

ABSL_FLAG(std::string, server, "127.0.0.1:50051", "placementd address");
ABSL_FLAG(int64_t, samples, 1'000'000, "samples to send");
ABSL_FLAG(int, streams, 4, "concurrent streams (one run each)");
ABSL_FLAG(int, batch, 2000, "samples per message");
ABSL_FLAG(int64_t, runs, 4000, "runs to upload");
ABSL_FLAG(int, clients, 8, "concurrent upload clients");
ABSL_FLAG(double, rate, 0,
          "runs: uploads per second over all clients (0: as fast as possible)");
ABSL_FLAG(std::string, out, "", "csv: the file to write");

namespace {

using placement::testing::Deadline;
using placement::testing::NewUuid;
namespace v1 = placement::v1;

constexpr char kPool[] = "bench-l40s";
constexpr char kSku[] = "L40S-PCIE-48GB";

void FillSample(int64_t step, int64_t start_seconds, v1::StepSample* s) {
  s->set_step(step);
  // 20 steps a second: a million steps span 14 hours.
  s->mutable_time()->set_seconds(start_seconds + step / 20);
  s->mutable_time()->set_nanos(static_cast<int32_t>((step % 20) * 50'000'000));
  s->set_step_time_seconds(0.25 + (step % 13) * 0.001);
  s->set_memory_allocated_gb(30.5 + (step % 5) * 0.125);
  s->set_memory_reserved_gb(33.0);
  s->set_tokens(8192);
  s->set_loss(2.5 - (step % 1000) * 0.0005);
}

int Samples() {
  auto channel = grpc::CreateChannel(absl::GetFlag(FLAGS_server),
                                     grpc::InsecureChannelCredentials());
  const int64_t total = absl::GetFlag(FLAGS_samples);
  const int streams = std::max(1, absl::GetFlag(FLAGS_streams));
  const int batch = std::max(1, absl::GetFlag(FLAGS_batch));
  const int64_t start_seconds = absl::ToUnixSeconds(absl::Now()) - 2 * 86400;
  std::atomic<int64_t> stored{0};
  std::atomic<int> failures{0};

  const auto begin = std::chrono::steady_clock::now();
  std::vector<std::thread> threads;
  for (int t = 0; t < streams; ++t) {
    threads.emplace_back([&, t] {
      auto stub = v1::TelemetryService::NewStub(channel);
      const int64_t share = total / streams + (t < total % streams ? 1 : 0);
      auto context = Deadline(3600);
      v1::StreamStepSamplesResponse response;
      auto writer = stub->StreamStepSamples(context.get(), &response);
      v1::StreamStepSamplesRequest request;
      request.set_run_id(NewUuid());
      for (int64_t step = 0; step < share;) {
        request.clear_samples();
        for (int i = 0; i < batch && step < share; ++i, ++step) {
          FillSample(step, start_seconds, request.add_samples());
        }
        if (!writer->Write(request)) break;
      }
      writer->WritesDone();
      grpc::Status status = writer->Finish();
      if (!status.ok()) {
        std::cerr << "stream failed: " << status.error_message() << "\n";
        ++failures;
      }
      stored += response.samples_stored();
    });
  }
  for (auto& thread : threads) thread.join();
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - begin)
          .count();
  std::printf(
      "stream_step_samples samples=%lld seconds=%.3f samples_per_s=%.0f\n",
      static_cast<long long>(stored.load()), seconds, stored.load() / seconds);
  return failures == 0 && stored == total ? 0 : 1;
}

// The same rows (shape and count) as CSV for `COPY step_samples FROM ... CSV`.
int Csv() {
  std::ofstream out(absl::GetFlag(FLAGS_out));
  const int64_t total = absl::GetFlag(FLAGS_samples);
  const int streams = std::max(1, absl::GetFlag(FLAGS_streams));
  const absl::Time start = absl::Now() - absl::Hours(48);
  const std::string partition =
      absl::FormatTime("%Y-%m-%d %H:%M:%E6S+00", start, absl::UTCTimeZone());
  for (int t = 0; t < streams; ++t) {
    const std::string run_id = NewUuid();
    const int64_t share = total / streams + (t < total % streams ? 1 : 0);
    for (int64_t step = 0; step < share; ++step) {
      v1::StepSample s;
      FillSample(step, absl::ToUnixSeconds(start), &s);
      const absl::Time time = absl::FromUnixSeconds(s.time().seconds()) +
                              absl::Nanoseconds(s.time().nanos());
      out << run_id << ',' << partition << ',' << step << ','
          << absl::FormatTime("%Y-%m-%d %H:%M:%E6S+00", time,
                              absl::UTCTimeZone())
          << ',' << s.step_time_seconds() << ',' << s.memory_allocated_gb()
          << ',' << s.memory_reserved_gb() << ',' << s.tokens() << ','
          << s.loss() << '\n';
    }
  }
  return out.good() ? 0 : 1;
}

int Runs() {
  auto channel = grpc::CreateChannel(absl::GetFlag(FLAGS_server),
                                     grpc::InsecureChannelCredentials());
  const int64_t total = absl::GetFlag(FLAGS_runs);
  const int clients = std::max(1, absl::GetFlag(FLAGS_clients));
  const double rate = absl::GetFlag(FLAGS_rate);
  std::atomic<int64_t> next{0};
  std::atomic<int64_t> failures{0};
  const auto begin = std::chrono::steady_clock::now();
  std::vector<std::thread> threads;
  for (int c = 0; c < clients; ++c) {
    threads.emplace_back([&, c] {
      auto stub = v1::TelemetryService::NewStub(channel);
      for (int64_t i = next++; i < total; i = next++) {
        if (rate > 0) {  // upload i is due i / rate seconds after the start
          std::this_thread::sleep_until(
              begin + std::chrono::duration_cast<std::chrono::nanoseconds>(
                          std::chrono::duration<double>(i / rate)));
        }
        v1::UploadBenchmarkRunRequest request;
        *request.mutable_run() = placement::testing::SucceededRun(kPool, kSku);
        // Spread the runs over a few recipes, as a fleet of agents would.
        request.mutable_run()->mutable_recipe()->set_sequence_length(
            512 << (i % 4));
        request.mutable_run()->set_retries(static_cast<int>((i + c) % 3));
        v1::UploadBenchmarkRunResponse response;
        if (!stub->UploadBenchmarkRun(Deadline(30).get(), request, &response)
                 .ok()) {
          ++failures;
        }
      }
    });
  }
  for (auto& thread : threads) thread.join();
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - begin)
          .count();
  std::printf(
      "upload_benchmark_run runs=%lld clients=%d seconds=%.3f runs_per_s=%.0f "
      "failures=%lld\n",
      static_cast<long long>(total), clients, seconds, total / seconds,
      static_cast<long long>(failures.load()));
  return failures == 0 ? 0 : 1;
}

int CreatePool() {
  auto stub = v1::CatalogService::NewStub(grpc::CreateChannel(
      absl::GetFlag(FLAGS_server), grpc::InsecureChannelCredentials()));
  v1::CreatePoolRequest request;
  *request.mutable_pool() =
      placement::testing::TrainingPool(kPool, kSku, 64, 8, 1'100'000);
  request.set_request_id("bench-pool");
  v1::CreatePoolResponse response;
  grpc::Status status = stub->CreatePool(Deadline().get(), request, &response);
  if (!status.ok()) std::cerr << status.error_message() << "\n";
  return status.ok() ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<char*> args = absl::ParseCommandLine(argc, argv);
  const std::string mode = args.size() > 1 ? args[1] : "";
  if (mode == "samples") return Samples();
  if (mode == "csv") return Csv();
  if (mode == "runs") return CreatePool() || Runs();
  if (mode == "pool") return CreatePool();
  std::cerr << "usage: ingest_load samples|csv|runs|pool [flags]\n";
  return 2;
}
