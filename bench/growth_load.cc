// Load generator and seeder for bench/growth.sh: what PlacePlan and a
// replica's refresh cost as the fleet's evidence grows.
//
//   growth_load rollups --from A --to B --runs_per_rollup K --out FILE
//       writes evidence rollups A..B-1 (recipe r / 7 on SKU r % 7) as COPY
//       text for `COPY evidence_rollups (...)`, each summing K synthetic runs
//       with the service's own rollup code (core::EvidenceRollup).
//   growth_load plan --server H:P --pids P,Q [--clients 4] [--seconds 5]
//       a closed loop of PlacePlan over the 24 recipes of bench/fleet.h, each
//       request different (total_steps counts up), so that every call misses
//       the plan cache and the planner runs; prints p50/p99 and the CPU the
//       processes P,Q... and their children (placementd, the postmaster and
//       its backends) spent per plan.
//   growth_load plan_ab --server H:P --pids P,Q --other_server H:P
//                       --other_pids P,Q [--pause_pids P,P] [--rounds 6]
//                       [--clients 4] [--seconds 5]
//       the same load on two servers (A: --server, B: --other_server, e.g.
//       one over a small history and one over a large one), in rounds that
//       alternate A B, B A, ... so that what else the machine does weighs
//       on both alike; the placementd of the side not measured is stopped
//       (SIGSTOP; --pause_pids lists A's then B's) so that its background
//       work does not land in the other's figures. Prints each round's
//       p50/p99/CPU per plan of both and their ratio B / A, then the
//       median of the per-round ratios.
//   growth_load refresh --server H:P --replica_pid P [--changes 10]
//       uploads one run at a time through H:P and, after each, waits until
//       the replica P (another placementd on the same database) has stopped
//       using CPU; prints the CPU the replica spent per change.
#include <dirent.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <set>
#include <sstream>
#include <thread>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "bench/fleet.h"
#include "core/evidence/evidence.h"
#include "core/recipe.h"
#include "placement/v1/placement.grpc.pb.h"
#include "placement/v1/telemetry.grpc.pb.h"
#include "services/api/recipe_convert.h"
#include "tests/support/fixtures.h"

ABSL_FLAG(std::string, server, "127.0.0.1:50051", "placementd address");
ABSL_FLAG(int64_t, from, 0, "rollups: first rollup");
ABSL_FLAG(int64_t, to, 100, "rollups: one past the last rollup");
ABSL_FLAG(int, runs_per_rollup, 10, "rollups: synthetic runs summed in each");
ABSL_FLAG(int, recipes_per_model, 64,
          "rollups: distinct recipes of one model (the fleet's recipes spread "
          "over more models as it grows)");
ABSL_FLAG(std::string, out, "", "rollups: the file to write");
ABSL_FLAG(std::string, pids, "",
          "plan: processes whose CPU (with their children's) is the server's");
ABSL_FLAG(int, clients, 4, "plan: concurrent clients (closed loop)");
ABSL_FLAG(int, seconds, 5, "plan: how long to run");
ABSL_FLAG(std::string, other_server, "",
          "plan_ab: the second server (B), compared with --server (A)");
ABSL_FLAG(std::string, other_pids, "",
          "plan_ab: processes whose CPU is the second server's");
ABSL_FLAG(std::string, pause_pids, "",
          "plan_ab: A's placementd, B's placementd: each stopped while the "
          "other is measured");
ABSL_FLAG(int, rounds, 6, "plan_ab: rounds (each measures A and B once)");
ABSL_FLAG(int, replica_pid, 0, "refresh: the replica placementd");
ABSL_FLAG(int, changes, 10, "refresh: changes to make, one at a time");

namespace {

namespace v1 = placement::v1;
using placement::bench::RecipeNumber;
using placement::testing::Deadline;

// The seven SKUs of bench/fleet.h's pools.
constexpr const char* kSkus[] = {
    "L40S-PCIE-48GB", "A100-SXM4-80GB", "A100-PCIE-40GB", "A100-SXM4-40GB",
    "A100-PCIE-80GB", "H100-SXM5-80GB", "H200-SXM-141GB"};
constexpr int kSkuCount = std::size(kSkus);
constexpr double kSkuMemoryGb[] = {48, 80, 40, 40, 80, 80, 141};
constexpr double kSkuSpeed[] = {0.45, 1.0, 0.8, 0.9, 0.95, 2.2, 2.5};

// Recipe j of the fleet: the 24 that plans ask for first, then 64 more
// of each of their four models, then models of 64 recipes each.
v1::Recipe FleetRecipe(int64_t j) {
  if (j < placement::bench::kRecipes) return RecipeNumber(static_cast<int>(j));
  const int per_model = std::max(1, absl::GetFlag(FLAGS_recipes_per_model));
  const int64_t k = j - placement::bench::kRecipes;
  v1::Recipe r = RecipeNumber(static_cast<int>(k % 4));
  const int64_t variant = k < 4 * per_model ? k / 4 : k % per_model;
  if (k >= 4 * per_model) {
    r.set_model(absl::StrCat("fleet-model-", k / per_model));
  }
  // Never micro batch 2: the 24 recipes above have it.
  static constexpr int kMicroBatch[] = {1, 3, 4, 8};
  static constexpr int kRank[] = {8, 16, 32, 64};
  r.set_sequence_length(512 << (variant % 4));
  r.set_micro_batch_size(kMicroBatch[variant / 4 % 4]);
  r.set_lora_rank(kRank[variant / 16 % 4]);
  if (variant >= 64) r.set_gradient_accumulation_steps(2 + variant / 64);
  return r;
}

// A small deterministic generator: the same rollups on every run.
uint64_t Mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9;
  x = (x ^ (x >> 27)) * 0x94d049bb133111eb;
  return x ^ (x >> 31);
}
double Unit(uint64_t x) { return (Mix(x) >> 11) * 0x1.0p-53; }

std::string Counts(const placement::core::LogHistogram& h) {
  return absl::StrCat("{", absl::StrJoin(h.counts, ","), "}");
}

std::string Hex(const std::string& bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  out.reserve(bytes.size() * 2);
  for (unsigned char c : bytes) {
    out.push_back(kDigits[c >> 4]);
    out.push_back(kDigits[c & 15]);
  }
  return out;
}

int Rollups() {
  std::ofstream out(absl::GetFlag(FLAGS_out));
  const int runs = std::max(1, absl::GetFlag(FLAGS_runs_per_rollup));
  const absl::Time end = absl::Now() - absl::Hours(2);
  for (int64_t r = absl::GetFlag(FLAGS_from); r < absl::GetFlag(FLAGS_to);
       ++r) {
    const int sku = static_cast<int>(r % kSkuCount);
    const placement::core::Recipe recipe =
        placement::services::RecipeFromProto(FleetRecipe(r / kSkuCount));
    std::string recipe_bytes;
    placement::services::RecipeToProto(recipe).SerializeToString(&recipe_bytes);
    placement::core::EvidenceRollup rollup;
    int64_t gpu_us = 0;
    const double seq_factor = recipe.sequence_length / 1024.0;
    for (int i = 0; i < runs; ++i) {
      const uint64_t seed = static_cast<uint64_t>(r) * 1000 + i;
      placement::core::MeasuredRun run;
      run.recipe_key = placement::core::RecipeKey(recipe);
      run.sku_id = kSkus[sku];
      run.gpu_count = 1;
      run.ended = end;
      run.started = end - absl::Seconds(600 + 3000 * Unit(seed));
      run.steps_attempted = 1000;
      const bool failed = Unit(seed + 1) < 0.05;
      run.steps_succeeded = failed ? 400 : 1000;
      run.outcome = failed ? placement::core::RunOutcome::kFailed
                           : placement::core::RunOutcome::kSucceeded;
      const double step =
          0.3 * seq_factor / kSkuSpeed[sku] * (0.9 + 0.2 * Unit(seed + 2));
      run.step_time_mean_s = step;
      run.step_time_p50_s = step;
      run.step_time_p95_s = step * 1.15;
      run.peak_memory_gb =
          std::min(kSkuMemoryGb[sku] * 0.9,
                   14 + 4 * seq_factor * recipe.micro_batch_size / 2.0 +
                       2 * Unit(seed + 3));
      run.offload = placement::core::Offload::kNone;
      run.interconnect = placement::core::Interconnect::kNone;
      run.retries = Unit(seed + 4) < 0.1 ? 1 : 0;
      rollup.Add(run);
      gpu_us += absl::ToInt64Microseconds(run.ended - run.started);
    }
    out << placement::core::RecipeKey(recipe) << '\t' << kSkus[sku] << "\t\\\\x"
        << Hex(recipe_bytes) << '\t' << recipe.model << '\t'
        << placement::core::FineTuneMethodName(recipe.method) << '\t'
        << rollup.runs << '\t' << rollup.successful_runs << '\t'
        << rollup.offload_runs << '\t' << rollup.retries << '\t'
        << rollup.collective_runs << '\t' << rollup.nvlink_runs << '\t'
        << rollup.pcie_runs << '\t' << rollup.host_memory_runs << '\t'
        << rollup.steps_attempted << '\t' << rollup.steps_succeeded << '\t'
        << gpu_us << '\t' << rollup.max_peak_memory_gb << '\t'
        << Counts(rollup.step_time_p50_hist) << '\t'
        << Counts(rollup.step_time_p95_hist) << '\t'
        << Counts(rollup.peak_memory_hist) << '\n';
  }
  return out.good() ? 0 : 1;
}

// The parent of `pid`; false once it is gone.
bool ParentOf(int pid, int* parent) {
  std::ifstream stat(absl::StrCat("/proc/", pid, "/stat"));
  std::string line;
  if (!std::getline(stat, line)) return false;
  // The command name is in parentheses and may hold spaces.
  const size_t close = line.rfind(')');
  if (close == std::string::npos) return false;
  std::vector<std::string> fields =
      absl::StrSplit(line.substr(close + 2), ' ');  // from field 3, state
  return fields.size() > 1 && absl::SimpleAtoi(fields[1], parent);
}

// Seconds `pid` has run on a CPU, summed over its threads, to the
// nanosecond (schedstat: /proc/PID/stat counts in 10 ms ticks, too coarse
// for one refresh of a small snapshot).
double ProcessCpu(int pid) {
  int64_t total_ns = 0;
  const std::string tasks = absl::StrCat("/proc/", pid, "/task");
  DIR* dir = opendir(tasks.c_str());
  if (dir == nullptr) return 0;
  while (dirent* entry = readdir(dir)) {
    if (entry->d_name[0] == '.') continue;
    std::ifstream schedstat(
        absl::StrCat(tasks, "/", entry->d_name, "/schedstat"));
    int64_t ns = 0;
    if (schedstat >> ns) total_ns += ns;
  }
  closedir(dir);
  return total_ns / 1e9;
}

// CPU seconds of `roots` and their children (a postmaster's backends).
double TreeCpu(const std::vector<int>& roots) {
  const std::set<int> root_set(roots.begin(), roots.end());
  double total = 0;
  DIR* proc = opendir("/proc");
  if (proc == nullptr) return 0;
  while (dirent* entry = readdir(proc)) {
    int pid = 0;
    if (!absl::SimpleAtoi(entry->d_name, &pid)) continue;
    int parent = 0;
    if (root_set.count(pid) > 0 ||
        (ParentOf(pid, &parent) && root_set.count(parent) > 0)) {
      total += ProcessCpu(pid);
    }
  }
  closedir(proc);
  return total;
}

std::vector<int> Pids(const std::string& list) {
  std::vector<int> pids;
  for (absl::string_view part : absl::StrSplit(list, ',', absl::SkipEmpty())) {
    int pid = 0;
    if (absl::SimpleAtoi(part, &pid)) pids.push_back(pid);
  }
  return pids;
}

// The 1-minute load average, as /proc/loadavg writes it.
std::string LoadAverage() {
  std::ifstream in("/proc/loadavg");
  std::string one;
  in >> one;
  return one;
}

double Percentile(const std::vector<double>& sorted, double q) {
  return sorted.empty() ? 0
                        : sorted[static_cast<size_t>(q * (sorted.size() - 1))];
}

struct PlanTarget {
  std::vector<std::shared_ptr<grpc::Channel>> channels;
  std::vector<int> pids;
  int64_t next_request = 0;  // total_steps offset: every call a new request
  int candidates = 0;
};

struct PlanFigures {
  size_t calls = 0;
  double seconds = 0;
  double p50_ms = 0;
  double p99_ms = 0;
  double cpu_us_per_plan = 0;
  int64_t errors = 0;
};

// Connects `clients` channels to `server` and makes one plan (not timed):
// the answer's size, and a loaded snapshot.
bool Connect(const std::string& server, const std::string& pids, int clients,
             PlanTarget* target) {
  target->pids = Pids(pids);
  for (int c = 0; c < clients; ++c) {
    grpc::ChannelArguments args;
    args.SetInt("grpc.channel_id", c);  // distinct connections
    target->channels.push_back(grpc::CreateCustomChannel(
        server, grpc::InsecureChannelCredentials(), args));
  }
  v1::PlacePlanRequest request;
  *request.mutable_recipe() = RecipeNumber(0);
  request.set_total_steps(19'999);
  v1::PlacePlanResponse response;
  grpc::Status status;
  // A placementd just started answers UNAVAILABLE until its snapshot is
  // loaded (seconds at 100,000 rollups).
  for (int attempt = 0; attempt < 300; ++attempt) {
    status = v1::PlacementService::NewStub(target->channels[0])
                 ->PlacePlan(Deadline(60).get(), request, &response);
    if (status.error_code() != grpc::StatusCode::UNAVAILABLE) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
  }
  if (!status.ok()) {
    std::cerr << "PlacePlan on " << server << ": " << status.error_message()
              << "\n";
    return false;
  }
  target->candidates = response.candidates_size();
  return true;
}

// A closed loop of PlacePlan for `seconds`, each request different (a plan
// cache miss), over the 24 recipes in turn.
PlanFigures RunPlans(PlanTarget& target, int seconds) {
  const int clients = static_cast<int>(target.channels.size());
  std::atomic<int64_t> counter{target.next_request}, errors{0};
  std::vector<std::vector<double>> latencies(clients);
  const double cpu_begin = TreeCpu(target.pids);
  const auto begin = std::chrono::steady_clock::now();
  const auto end = begin + std::chrono::seconds(seconds);
  std::vector<std::thread> threads;
  for (int c = 0; c < clients; ++c) {
    threads.emplace_back([&, c] {
      auto stub = v1::PlacementService::NewStub(target.channels[c]);
      while (std::chrono::steady_clock::now() < end) {
        const int64_t n = counter++;
        v1::PlacePlanRequest request;
        *request.mutable_recipe() =
            RecipeNumber(static_cast<int>(n % placement::bench::kRecipes));
        request.set_total_steps(20'000 + n);  // a new request: a cache miss
        v1::PlacePlanResponse response;
        const auto start = std::chrono::steady_clock::now();
        const grpc::Status status =
            stub->PlacePlan(Deadline(30).get(), request, &response);
        if (!status.ok() || response.candidates_size() == 0) {
          ++errors;
          continue;
        }
        latencies[c].push_back(std::chrono::duration<double, std::milli>(
                                   std::chrono::steady_clock::now() - start)
                                   .count());
      }
    });
  }
  for (auto& t : threads) t.join();
  target.next_request = counter.load();
  PlanFigures out;
  out.seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - begin)
          .count();
  const double cpu = TreeCpu(target.pids) - cpu_begin;
  std::vector<double> all;
  for (const auto& l : latencies) all.insert(all.end(), l.begin(), l.end());
  std::sort(all.begin(), all.end());
  out.calls = all.size();
  out.p50_ms = Percentile(all, 0.5);
  out.p99_ms = Percentile(all, 0.99);
  out.cpu_us_per_plan = cpu * 1e6 / std::max<size_t>(all.size(), 1);
  out.errors = errors.load();
  return out;
}

int Plan() {
  PlanTarget target;
  if (!Connect(absl::GetFlag(FLAGS_server), absl::GetFlag(FLAGS_pids),
               std::max(1, absl::GetFlag(FLAGS_clients)), &target)) {
    return 1;
  }
  const PlanFigures f = RunPlans(target, absl::GetFlag(FLAGS_seconds));
  std::printf(
      "plan calls=%zu clients=%zu candidates=%d seconds=%.1f plans_per_s=%.0f "
      "p50_ms=%.3f p99_ms=%.3f server_cpu_us_per_plan=%.0f errors=%lld\n",
      f.calls, target.channels.size(), target.candidates, f.seconds,
      f.calls / f.seconds, f.p50_ms, f.p99_ms, f.cpu_us_per_plan,
      static_cast<long long>(f.errors));
  return f.errors == 0 ? 0 : 1;
}

double Median(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

int PlanAb() {
  const int clients = std::max(1, absl::GetFlag(FLAGS_clients));
  const std::vector<int> pause = Pids(absl::GetFlag(FLAGS_pause_pids));
  PlanTarget sides[2];
  if (!Connect(absl::GetFlag(FLAGS_server), absl::GetFlag(FLAGS_pids), clients,
               &sides[0]) ||
      !Connect(absl::GetFlag(FLAGS_other_server),
               absl::GetFlag(FLAGS_other_pids), clients, &sides[1])) {
    return 1;
  }
  // Stops (or resumes) the placementd of `side`, where --pause_pids names
  // it.
  auto signal_side = [&](int side, int sig) {
    if (pause.size() == 2) kill(pause[side], sig);
  };
  const int seconds = absl::GetFlag(FLAGS_seconds);
  std::vector<double> p50_ratios, cpu_ratios;
  int64_t errors = 0;
  for (int round = 0; round < absl::GetFlag(FLAGS_rounds); ++round) {
    PlanFigures figures[2];
    for (int turn = 0; turn < 2; ++turn) {
      // A B, then B A: a drift of the machine's load within a round weighs
      // on each side first half of the time.
      const int side = (round + turn) % 2;
      signal_side(1 - side, SIGSTOP);
      signal_side(side, SIGCONT);
      // Settle: the resumed side catches up on what it missed while
      // stopped (a notification, a due re-read) before it is measured.
      std::this_thread::sleep_for(std::chrono::milliseconds(500));
      figures[side] = RunPlans(sides[side], seconds);
      errors += figures[side].errors;
    }
    const double p50_ratio = figures[1].p50_ms / figures[0].p50_ms;
    const double cpu_ratio =
        figures[1].cpu_us_per_plan / figures[0].cpu_us_per_plan;
    p50_ratios.push_back(p50_ratio);
    cpu_ratios.push_back(cpu_ratio);
    std::printf(
        "plan_ab round=%d first=%s a_calls=%zu a_p50_ms=%.3f a_p99_ms=%.3f "
        "a_cpu_us_per_plan=%.0f b_calls=%zu b_p50_ms=%.3f b_p99_ms=%.3f "
        "b_cpu_us_per_plan=%.0f p50_ratio=%.3f cpu_ratio=%.3f load=%s\n",
        round, round % 2 == 0 ? "A" : "B", figures[0].calls, figures[0].p50_ms,
        figures[0].p99_ms, figures[0].cpu_us_per_plan, figures[1].calls,
        figures[1].p50_ms, figures[1].p99_ms, figures[1].cpu_us_per_plan,
        p50_ratio, cpu_ratio, LoadAverage().c_str());
    std::fflush(stdout);
  }
  signal_side(0, SIGCONT);
  signal_side(1, SIGCONT);
  std::printf(
      "plan_ab rounds=%zu clients=%d seconds=%d a_candidates=%d "
      "b_candidates=%d median_p50_ratio=%.3f median_cpu_ratio=%.3f "
      "min_p50_ratio=%.3f max_p50_ratio=%.3f errors=%lld\n",
      p50_ratios.size(), clients, seconds, sides[0].candidates,
      sides[1].candidates, Median(p50_ratios), Median(cpu_ratios),
      *std::min_element(p50_ratios.begin(), p50_ratios.end()),
      *std::max_element(p50_ratios.begin(), p50_ratios.end()),
      static_cast<long long>(errors));
  return errors == 0 ? 0 : 1;
}

int Refresh() {
  const int replica = absl::GetFlag(FLAGS_replica_pid);
  auto stub = v1::TelemetryService::NewStub(grpc::CreateChannel(
      absl::GetFlag(FLAGS_server), grpc::InsecureChannelCredentials()));
  auto replica_cpu = [&] { return ProcessCpu(replica); };
  // The replica has settled when two reads of its CPU 100 ms apart differ
  // by less than 1 ms (its idle loop wakes every 100 ms and costs
  // microseconds).
  auto settle = [&](double from) {
    double last = from;
    for (int i = 0; i < 3000; ++i) {  // at most 60 s
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      const double now = replica_cpu();
      if (now - last < 0.001) return now;
      last = now;
    }
    return last;
  };
  settle(replica_cpu());
  std::vector<double> per_change_ms, wall_ms;
  for (int i = 0; i < absl::GetFlag(FLAGS_changes); ++i) {
    const double before = replica_cpu();
    const auto start = std::chrono::steady_clock::now();
    v1::UploadBenchmarkRunRequest request;
    *request.mutable_run() = placement::testing::SucceededRun(
        placement::bench::PoolName(0), placement::bench::Spec(0).sku);
    *request.mutable_run()->mutable_recipe() =
        RecipeNumber(i % placement::bench::kRecipes);
    v1::UploadBenchmarkRunResponse response;
    const grpc::Status status =
        stub->UploadBenchmarkRun(Deadline(30).get(), request, &response);
    if (!status.ok()) {
      std::cerr << "upload: " << status.error_message() << "\n";
      return 1;
    }
    // Long enough for the notification (coalesced over 50 ms) to arrive.
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    const double after = settle(replica_cpu());
    per_change_ms.push_back((after - before) * 1e3);
    wall_ms.push_back(std::chrono::duration<double, std::milli>(
                          std::chrono::steady_clock::now() - start)
                          .count());
  }
  std::vector<double> sorted = per_change_ms;
  std::sort(sorted.begin(), sorted.end());
  double sum = 0;
  for (double v : sorted) sum += v;
  std::sort(wall_ms.begin(), wall_ms.end());
  std::printf(
      "refresh changes=%zu replica_cpu_ms_per_change median=%.2f mean=%.2f "
      "min=%.2f max=%.2f wall_ms_per_change median=%.0f\n",
      sorted.size(), Percentile(sorted, 0.5), sum / sorted.size(),
      sorted.front(), sorted.back(), Percentile(wall_ms, 0.5));
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<char*> args = absl::ParseCommandLine(argc, argv);
  const std::string mode = args.size() > 1 ? args[1] : "";
  if (mode == "rollups") return Rollups();
  if (mode == "plan") return Plan();
  if (mode == "plan_ab") return PlanAb();
  if (mode == "refresh") return Refresh();
  std::cerr << "usage: growth_load rollups|plan|plan_ab|refresh [flags]\n";
  return 2;
}
