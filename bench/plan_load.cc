// Load generator for PlacePlan (see bench/placeplan.sh).
//
//   plan_load seed --server H:P [--pools 50] [--runs 100000] [--clients 8]
//       creates the pools and uploads the runs through the public API.
//   plan_load load --server H:P --rpc plan|empty [--clients 16] [--seconds 10]
//       a closed loop: each client sends its next call when the previous one
//       answered; prints calls/s and latency percentiles. "empty" is
//       grpc.health.v1.Health/Check on the same server: the cost of a call
//       that does nothing. A call refused with RESOURCE_EXHAUSTED is
//       retried after the wait the server asks for (its
//       grpc-retry-pushback-ms), else after a jittered backoff
//       (--backoff_ms), as a well-behaved client does.
//
//   plan_load compare --server H:P [--clients 16] [--seconds 4] [--rounds 5]
//       rounds of the empty RPC and of PlacePlan in turn, on the same
//       connections; prints both, and their ratio overall and per round;
//       then what a call of each costs the server side in CPU (the machine's
//       CPU time less the load generator's), which does not depend on how
//       the load generator and the server shared the cores.
//
// Like h2load, the load clients send ready-made request bytes and take the
// answer's bytes without parsing them: the load generator shares the
// machine's cores with placementd, and what is measured is the server. Every
// 64th answer (and each client's first) is parsed and checked. --parse
// parses every answer, as a typed client does.
#include <grpcpp/alarm.h>
#include <grpcpp/generic/generic_stub.h>
#include <grpcpp/grpcpp.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <random>
#include <thread>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "bench/fleet.h"
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
ABSL_FLAG(bool, parse, false, "load: parse every answer (default: 1 in 64)");
ABSL_FLAG(int, rounds, 5, "compare: rounds of each RPC, in turn");
ABSL_FLAG(int, backoff_ms, 5,
          "load: after a RESOURCE_EXHAUSTED without the server's "
          "grpc-retry-pushback-ms, wait a random time up to this, doubled at "
          "each refusal in a row (at most 64 times); 0: retry at once");
ABSL_FLAG(int, load_threads, 2,
          "load, compare: threads that drive the clients' calls (each client "
          "is a closed loop on its own connection, not a thread)");
ABSL_FLAG(bool, honor_pushback, true,
          "load: after a RESOURCE_EXHAUSTED that carries "
          "grpc-retry-pushback-ms, wait that long before the next call (as "
          "gRPC's own retries do)");

namespace {

namespace v1 = placement::v1;
using placement::testing::Deadline;

using placement::bench::kRecipes;
using placement::bench::PoolName;
using placement::bench::RecipeNumber;
using placement::bench::Spec;

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
        *run.mutable_recipe() =
            RecipeNumber(static_cast<int>(i / pools % kRecipes));
        run.set_peak_memory_gb(18 + (i % 17));
        run.set_retries(static_cast<int>(i % 5 == 0));
        if (i % 23 == 0) {
          run.set_outcome(v1::RUN_OUTCOME_COLLECTIVE_TIMEOUT);
          run.set_steps_succeeded(300);
        }
        v1::UploadBenchmarkRunRequest request;
        *request.mutable_run() = run;
        v1::UploadBenchmarkRunResponse response;
        if (!telemetry
                 ->UploadBenchmarkRun(Deadline(60).get(), request, &response)
                 .ok()) {
          ++failures;
        }
      }
    });
  }
  for (auto& t : threads) t.join();
  std::printf(
      "seeded pools=%d runs=%lld seconds=%.1f failures=%lld\n", pools,
      static_cast<long long>(total),
      std::chrono::duration<double>(std::chrono::steady_clock::now() - begin)
          .count(),
      static_cast<long long>(failures.load()));
  return failures == 0 ? 0 : 1;
}

// CPU time used so far, in seconds: by the whole machine (all cores), and by
// this process (the load generator). Their difference over a round is what
// the server side (placementd and PostgreSQL) spent, give or take the
// machine's background: a cost per call that does not depend on how the
// cores were shared, unlike throughput.
struct CpuClock {
  double machine = 0;
  double load_generator = 0;

  static CpuClock Now() {
    CpuClock clock;
    std::ifstream stat("/proc/stat");
    std::string cpu;
    // user nice system idle iowait irq softirq steal
    int64_t ticks[8] = {};
    stat >> cpu;
    for (int64_t& t : ticks) stat >> t;
    const double hz = static_cast<double>(sysconf(_SC_CLK_TCK));
    clock.machine = (ticks[0] + ticks[1] + ticks[2] + ticks[5] + ticks[6]) / hz;
    rusage self{};
    getrusage(RUSAGE_SELF, &self);
    auto seconds = [](const timeval& t) { return t.tv_sec + t.tv_usec / 1e6; };
    clock.load_generator = seconds(self.ru_utime) + seconds(self.ru_stime);
    return clock;
  }
};

// The calls of one closed-loop round of one RPC.
struct Round {
  std::string rpc;
  std::vector<double> latencies_ms;  // of answered calls, sorted
  int64_t errors = 0;
  std::vector<int64_t> refused = std::vector<int64_t>(17);  // by status code
  // Refusals that carried the server's pushback, and the waits it asked.
  int64_t pushbacks = 0;
  double pushback_ms = 0;
  // The first message of each status code, to tell refusals apart.
  std::vector<std::string> first_message = std::vector<std::string>(17);
  double seconds = 0;
  double server_cpu_seconds = 0;  // everything but the load generator
  double load_generator_cpu_seconds = 0;

  double CallsPerSecond() const { return latencies_ms.size() / seconds; }
  // Microseconds of CPU per answered call.
  double ServerCpuPerCall() const { return PerCallMicros(server_cpu_seconds); }
  double LoadGeneratorCpuPerCall() const {
    return PerCallMicros(load_generator_cpu_seconds);
  }
  double PerCallMicros(double cpu_seconds) const {
    return cpu_seconds * 1e6 / std::max<size_t>(latencies_ms.size(), 1);
  }
  double Percentile(double q) const {
    return latencies_ms.empty() ? 0.0
                                : latencies_ms[static_cast<size_t>(
                                      q * (latencies_ms.size() - 1))];
  }
  void Print() const {
    std::printf(
        "%s calls=%zu clients=%d seconds=%.1f calls_per_s=%.0f p50_ms=%.3f "
        "p99_ms=%.3f errors=%lld cpu_us_per_call: server=%.0f "
        "load_generator=%.0f\n",
        rpc.c_str(), latencies_ms.size(), absl::GetFlag(FLAGS_clients), seconds,
        CallsPerSecond(), Percentile(0.5), Percentile(0.99),
        static_cast<long long>(errors), ServerCpuPerCall(),
        LoadGeneratorCpuPerCall());
    for (int code = 1; code < 17; ++code) {
      if (refused[code] > 0) {
        std::printf("  refused with code %d: %lld (first: %s)\n", code,
                    static_cast<long long>(refused[code]),
                    first_message[code].c_str());
      }
    }
    if (pushbacks > 0) {
      std::printf("  server pushback on %lld refusals, mean %.1f ms\n",
                  static_cast<long long>(pushbacks), pushback_ms / pushbacks);
    }
  }
};

// One channel per client: separate HTTP/2 connections, as separate
// orchestrators would have. Kept across rounds, and connected before the
// first: a client whose connection is not up would otherwise fail its calls
// at once, again and again, and its round would count fewer calls.
std::vector<std::shared_ptr<grpc::Channel>> ClientChannels() {
  std::vector<std::shared_ptr<grpc::Channel>> channels;
  for (int c = 0; c < absl::GetFlag(FLAGS_clients); ++c) {
    grpc::ChannelArguments args;
    args.SetInt("grpc.channel_id", c);  // distinct channels
    channels.push_back(grpc::CreateCustomChannel(
        absl::GetFlag(FLAGS_server), grpc::InsecureChannelCredentials(), args));
  }
  const auto deadline =
      std::chrono::system_clock::now() + std::chrono::seconds(10);
  for (const auto& channel : channels) {
    if (!channel->WaitForConnected(deadline)) {
      std::fprintf(stderr, "plan_load: cannot connect to %s\n",
                   absl::GetFlag(FLAGS_server).c_str());
      std::exit(1);
    }
  }
  return channels;
}

// Ready-made request bytes: the recipes for plans, nothing for the check.
std::vector<std::string> RequestBytes(bool plan) {
  std::vector<std::string> requests;
  if (!plan) {
    requests.push_back(
        grpc::health::v1::HealthCheckRequest().SerializeAsString());
    return requests;
  }
  for (int i = 0; i < kRecipes; ++i) {
    v1::PlacePlanRequest request;
    *request.mutable_recipe() = RecipeNumber(i);
    request.set_total_steps(20'000);
    requests.push_back(request.SerializeAsString());
  }
  return requests;
}

// What the clients of one round share: what they send, until when, and the
// tallies each adds to (its own latencies; errors and refusals together).
struct RoundClients {
  bool plan = false;
  bool parse_all = false;
  std::vector<std::string> requests;
  std::chrono::milliseconds call_deadline{0};
  std::chrono::steady_clock::time_point end;
  std::vector<std::vector<double>> latencies;  // by client
  std::atomic<int64_t> errors{0};
  // Refusals by status code: under overload placementd sheds load with
  // RESOURCE_EXHAUSTED, or the caller's deadline passes.
  std::vector<std::atomic<int64_t>> by_code =
      std::vector<std::atomic<int64_t>>(17);
  std::atomic<int64_t> pushbacks{0};
  std::atomic<int64_t> pushback_us{0};
  absl::Mutex mu;
  std::vector<std::string> first_message ABSL_GUARDED_BY(mu) =
      std::vector<std::string>(17);
};

// The wait the server asked for with a refusal (gRPC's
// grpc-retry-pushback-ms), in milliseconds; -1 for none.
int64_t ServerPushbackMs(const grpc::ClientContext& context) {
  const auto& trailers = context.GetServerTrailingMetadata();
  const auto it = trailers.find("grpc-retry-pushback-ms");
  if (it == trailers.end()) return -1;
  int64_t ms = -1;
  const std::string text(it->second.data(), it->second.size());
  if (!absl::SimpleAtoi(text, &ms)) return -1;
  return ms;
}

// Whether an answer is what a typed client would get: a plan with
// candidates, or a health check's answer.
bool AnswerIsGood(bool plan, const grpc::ByteBuffer& answer) {
  grpc::Slice bytes;
  bool good = answer.DumpToSingleSlice(&bytes).ok();
  if (plan) {
    v1::PlacePlanResponse response;
    good = good && response.ParseFromArray(bytes.begin(), bytes.size()) &&
           response.candidates_size() > 0;
  } else {
    grpc::health::v1::HealthCheckResponse response;
    good = good && response.ParseFromArray(bytes.begin(), bytes.size());
  }
  return good;
}

// One client's closed loop, driven by completion-queue events rather than a
// thread of its own: 480 threads blocked in calls cost the two cores this
// shares with placementd more than the calls do (a load generator should
// be event-driven, as h2load is). The behaviour is the blocking client's:
// its next call as soon as the previous one is answered or fails; after a
// RESOURCE_EXHAUSTED it waits what the server's pushback asks, else a
// jittered exponential backoff; a call past its deadline is retried at
// once. All of a client's events arrive on one queue, so one thread at a
// time touches it.
class AsyncClient {
 public:
  AsyncClient(int c, std::shared_ptr<grpc::Channel> channel,
              RoundClients& round, grpc::CompletionQueue& cq,
              std::atomic<int>& running)
      : c_(c),
        stub_(std::move(channel)),
        round_(round),
        cq_(cq),
        running_(running),
        random_(static_cast<unsigned>(c) + 1),
        backoff_limit_ms_(absl::GetFlag(FLAGS_backoff_ms)) {}

  void Start() { Next(); }

  // A call finished or a backoff ended.
  void OnEvent() {
    if (backing_off_) {
      backing_off_ = false;
      Next();
      return;
    }
    OnAnswer();
  }

 private:
  void Next() {
    if (std::chrono::steady_clock::now() >= round_.end) {
      --running_;
      return;
    }
    start_ = std::chrono::steady_clock::now();
    const grpc::Slice request_slice(
        round_.requests[(c_ + calls_) % round_.requests.size()]);
    const grpc::ByteBuffer request(&request_slice, 1);
    context_ = std::make_unique<grpc::ClientContext>();
    context_->set_deadline(std::chrono::system_clock::now() +
                           round_.call_deadline);
    // A dropped connection makes the call wait for the next one (within
    // its deadline) instead of failing at once.
    context_->set_wait_for_ready(true);
    answer_.Clear();
    call_ =
        stub_.PrepareUnaryCall(context_.get(),
                               round_.plan ? "/placement.v1.PlacementService/"
                                             "PlacePlan"
                                           : "/grpc.health.v1.Health/Check",
                               request, &cq_);
    call_->StartCall();
    call_->Finish(&answer_, &status_, this);
  }

  void OnAnswer() {
    if (!status_.ok()) {
      ++round_.errors;
      const int code = static_cast<int>(status_.error_code()) % 17;
      if (++round_.by_code[code] == 1) {
        absl::MutexLock lock(&round_.mu);
        round_.first_message[code] = status_.error_message();
      }
      if (status_.error_code() == grpc::StatusCode::RESOURCE_EXHAUSTED) {
        BackOff();
        return;
      }
      Next();  // latency percentiles are of answered calls
      return;
    }
    backoff_limit_ms_ = absl::GetFlag(FLAGS_backoff_ms);
    if ((round_.parse_all || calls_ % 64 == 0) &&
        !AnswerIsGood(round_.plan, answer_)) {
      ++round_.errors;
    }
    ++calls_;
    round_.latencies[c_].push_back(
        std::chrono::duration<double, std::milli>(
            std::chrono::steady_clock::now() - start_)
            .count());
    Next();
  }

  // Waits as the server asks (its pushback), else a random time up to the
  // backoff limit ("full jitter"), doubled at each refusal in a row; never
  // past the round's end (its length is what rates divide by).
  void BackOff() {
    std::chrono::microseconds wait{0};
    const int64_t pushback_ms = ServerPushbackMs(*context_);
    if (pushback_ms >= 0 && absl::GetFlag(FLAGS_honor_pushback)) {
      ++round_.pushbacks;
      round_.pushback_us += pushback_ms * 1000;
      wait = std::chrono::milliseconds(pushback_ms);
    } else if (backoff_limit_ms_ > 0) {
      std::uniform_int_distribution<int> wait_us(0, backoff_limit_ms_ * 1000);
      wait = std::chrono::microseconds(wait_us(random_));
      backoff_limit_ms_ =
          std::min(2 * backoff_limit_ms_, 64 * absl::GetFlag(FLAGS_backoff_ms));
    }
    const auto until =
        std::min(std::chrono::steady_clock::now() + wait, round_.end);
    backing_off_ = true;
    alarm_.Set(&cq_,
               std::chrono::system_clock::now() +
                   (until - std::chrono::steady_clock::now()),
               this);
  }

  const int c_;
  grpc::GenericStub stub_;
  RoundClients& round_;
  grpc::CompletionQueue& cq_;
  std::atomic<int>& running_;
  std::minstd_rand random_;
  int backoff_limit_ms_;
  int64_t calls_ = 0;
  bool backing_off_ = false;
  std::chrono::steady_clock::time_point start_;
  std::unique_ptr<grpc::ClientContext> context_;
  std::unique_ptr<grpc::GenericClientAsyncResponseReader> call_;
  grpc::ByteBuffer answer_;
  grpc::Status status_;
  grpc::Alarm alarm_;
};

Round RunRound(const std::vector<std::shared_ptr<grpc::Channel>>& channels,
               const std::string& rpc, std::chrono::seconds duration) {
  const int clients = static_cast<int>(channels.size());
  RoundClients shared;
  shared.plan = rpc == "plan";
  shared.parse_all = absl::GetFlag(FLAGS_parse);
  shared.requests = RequestBytes(shared.plan);
  shared.call_deadline =
      std::chrono::milliseconds(absl::GetFlag(FLAGS_deadline_ms));
  shared.latencies.resize(clients);
  // The clients, spread over a few completion queues, a thread each.
  const int threads = std::max(1, absl::GetFlag(FLAGS_load_threads));
  std::vector<std::unique_ptr<grpc::CompletionQueue>> queues;
  for (int t = 0; t < threads; ++t) {
    queues.push_back(std::make_unique<grpc::CompletionQueue>());
  }
  std::atomic<int> running{clients};
  std::vector<std::unique_ptr<AsyncClient>> async_clients;
  for (int c = 0; c < clients; ++c) {
    async_clients.push_back(std::make_unique<AsyncClient>(
        c, channels[c], shared, *queues[c % threads], running));
  }
  const CpuClock cpu_begin = CpuClock::Now();
  const auto begin = std::chrono::steady_clock::now();
  shared.end = begin + duration;
  std::vector<std::thread> pollers;
  for (int t = 0; t < threads; ++t) {
    pollers.emplace_back([&, t] {
      void* tag = nullptr;
      bool ok = false;
      while (queues[t]->Next(&tag, &ok)) {
        static_cast<AsyncClient*>(tag)->OnEvent();
      }
    });
  }
  for (auto& client : async_clients) client->Start();
  // Every client stops at the round's end, once its last call is answered.
  while (running.load() > 0) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  for (auto& queue : queues) queue->Shutdown();
  for (auto& t : pollers) t.join();
  const CpuClock cpu_end = CpuClock::Now();
  Round round;
  round.rpc = rpc;
  round.seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - begin)
          .count();
  round.load_generator_cpu_seconds =
      cpu_end.load_generator - cpu_begin.load_generator;
  round.server_cpu_seconds =
      cpu_end.machine - cpu_begin.machine - round.load_generator_cpu_seconds;
  for (const auto& l : shared.latencies) {
    round.latencies_ms.insert(round.latencies_ms.end(), l.begin(), l.end());
  }
  std::sort(round.latencies_ms.begin(), round.latencies_ms.end());
  round.errors = shared.errors.load();
  round.pushbacks = shared.pushbacks.load();
  {
    absl::MutexLock lock(&shared.mu);
    round.first_message = shared.first_message;
  }
  round.pushback_ms = shared.pushback_us.load() / 1000.0;
  for (int code = 0; code < 17; ++code) {
    round.refused[code] = shared.by_code[code];
  }
  return round;
}

// What a plan answer looks like, for the record.
void DescribePlanAnswer(const std::shared_ptr<grpc::Channel>& channel) {
  v1::PlacePlanRequest request;
  *request.mutable_recipe() = RecipeNumber(0);
  request.set_total_steps(20'000);
  v1::PlacePlanResponse response;
  grpc::Status status = v1::PlacementService::NewStub(channel)->PlacePlan(
      Deadline().get(), request, &response);
  std::printf("response: %zu bytes, %d candidates, %d rejections%s\n",
              response.ByteSizeLong(), response.candidates_size(),
              response.rejections_size(), status.ok() ? "" : " (failed)");
}

int Load() {
  const std::vector<std::shared_ptr<grpc::Channel>> channels = ClientChannels();
  const std::string rpc = absl::GetFlag(FLAGS_rpc);
  if (rpc == "plan") DescribePlanAnswer(channels.front());
  const Round round = RunRound(
      channels, rpc, std::chrono::seconds(absl::GetFlag(FLAGS_seconds)));
  round.Print();
  return round.errors == 0 ? 0 : 1;
}

// Rounds of the empty RPC and of PlacePlan in turn on the same connections,
// so that whatever else the machine does weighs on both alike.
int Compare() {
  const std::vector<std::shared_ptr<grpc::Channel>> channels = ClientChannels();
  DescribePlanAnswer(channels.front());
  const auto duration = std::chrono::seconds(absl::GetFlag(FLAGS_seconds));
  Round empty_total, plan_total;
  empty_total.rpc = "empty";
  plan_total.rpc = "plan";
  std::vector<double> ratios;
  for (int r = 0; r < absl::GetFlag(FLAGS_rounds); ++r) {
    Round rounds[] = {RunRound(channels, "empty", duration),
                      RunRound(channels, "plan", duration)};
    for (Round& round : rounds) {
      Round& total = round.rpc == "empty" ? empty_total : plan_total;
      total.latencies_ms.insert(total.latencies_ms.end(),
                                round.latencies_ms.begin(),
                                round.latencies_ms.end());
      total.errors += round.errors;
      total.seconds += round.seconds;
      total.server_cpu_seconds += round.server_cpu_seconds;
      total.load_generator_cpu_seconds += round.load_generator_cpu_seconds;
      for (int code = 0; code < 17; ++code) {
        total.refused[code] += round.refused[code];
        if (total.first_message[code].empty()) {
          total.first_message[code] = round.first_message[code];
        }
      }
    }
    ratios.push_back(rounds[1].CallsPerSecond() / rounds[0].CallsPerSecond());
    std::printf("round %d: empty %.0f calls/s, plan %.0f calls/s, ratio %.2f\n",
                r + 1, rounds[0].CallsPerSecond(), rounds[1].CallsPerSecond(),
                ratios.back());
  }
  for (Round* total : {&empty_total, &plan_total}) {
    std::sort(total->latencies_ms.begin(), total->latencies_ms.end());
    total->Print();
  }
  std::sort(ratios.begin(), ratios.end());
  std::printf(
      "ratio PlacePlan/empty = %.2f overall, %.2f median of %zu rounds "
      "(%.2f-%.2f) (target >= 0.5)\n",
      plan_total.CallsPerSecond() / empty_total.CallsPerSecond(),
      ratios[ratios.size() / 2], ratios.size(), ratios.front(), ratios.back());
  // The same comparison by what each call costs the server, whatever the
  // load generator (which shares the cores) costs.
  std::printf(
      "server CPU per call: empty %.0f us, PlacePlan %.0f us; "
      "ratio empty/PlacePlan = %.2f\n",
      empty_total.ServerCpuPerCall(), plan_total.ServerCpuPerCall(),
      empty_total.ServerCpuPerCall() / plan_total.ServerCpuPerCall());
  return empty_total.errors + plan_total.errors == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<char*> args = absl::ParseCommandLine(argc, argv);
  const std::string mode = args.size() > 1 ? args[1] : "";
  if (mode == "seed") return Seed();
  if (mode == "load") return Load();
  if (mode == "compare") return Compare();
  std::cerr << "usage: plan_load seed|load|compare [flags]\n";
  return 2;
}
