// placement-agent: names a GPU node's exact SKU and records benchmark runs
// of training commands as evidence for the placement service. See
// docs/AGENT.md.
#include <google/protobuf/struct.pb.h>
#include <google/protobuf/util/json_util.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdlib>
#include <initializer_list>
#include <iostream>
#include <mutex>
#include <thread>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "clients/agent/command_runner.h"
#include "clients/agent/gpu_probe.h"
#include "clients/agent/recipe_input.h"
#include "clients/agent/run_record.h"
#include "clients/agent/sku_naming.h"
#include "clients/agent/spool.h"
#include "clients/agent/uploader.h"
#include "clients/common/channel.h"
#include "clients/common/rpc_errors.h"
#include "common/proto_time.h"
#include "common/uuid.h"
#include "placement/v1/catalog.grpc.pb.h"
#include "placement/v1/placement.grpc.pb.h"

ABSL_FLAG(std::string, server, "",
          "placementd host:port (default: $PLACEMENT_SERVER, else "
          "127.0.0.1:50051)");
ABSL_FLAG(
    std::string, token_file, "",
    "file holding the bearer token (default: $PLACEMENT_TOKEN, else "
    "$PLACEMENT_TOKEN_FILE, else ~/.config/placement/token if it exists)");
ABSL_FLAG(std::string, ca_file, "",
          "PEM CA bundle: connect with TLS (default: plaintext)");
ABSL_FLAG(std::string, spool_dir, "",
          "where runs wait for upload (default: $PLACEMENT_SPOOL_DIR, else "
          "~/.local/state/placement/spool)");
ABSL_FLAG(bool, json, false, "detect: print JSON");
ABSL_FLAG(std::string, nvml_library, "libnvidia-ml.so.1",
          "NVML library to dlopen (\"\" skips NVML)");
ABSL_FLAG(std::string, nvidia_smi, "nvidia-smi",
          "nvidia-smi binary for the fallback");
ABSL_FLAG(std::string, pool, "",
          "run: the pool this node belongs to (default: $PLACEMENT_POOL, "
          "else $SLURM_JOB_PARTITION)");
ABSL_FLAG(std::string, recipe, "", "run: recipe file (YAML or JSON)");
ABSL_FLAG(std::string, sku, "",
          "run: the node's exact catalog SKU, stated by the operator instead "
          "of detected; checked against the catalog, never guessed");
ABSL_FLAG(std::string, plan_id, "",
          "run: the plan this run carries out (default: $PLACEMENT_PLAN_ID, "
          "which the Slurm plugin sets)");
ABSL_FLAG(std::string, team, "", "run: team charged (default: the pool's)");
ABSL_FLAG(std::string, agent_id, "",
          "run: this agent's id (default: host name)");
ABSL_FLAG(int, max_retries, 2, "run: restarts of a failed command");
ABSL_FLAG(absl::Duration, attempt_timeout, absl::Hours(24),
          "run: stop an attempt after this long (SIGTERM to its process "
          "group, SIGKILL 10 s later; recorded as FAILED, timed out); 0: "
          "never");
ABSL_FLAG(std::string, offload, "none",
          "run: none|cpu|nvme, the offload the job was configured with");
ABSL_FLAG(std::string, interconnect, "",
          "run: nvlink|pcie|host-memory, the link multi-GPU collectives used "
          "(default: from detection)");
ABSL_FLAG(bool, exclusive, true, "run: the GPUs were dedicated to the run");
ABSL_FLAG(std::string, report_peak, "",
          "run: which peak memory to report: allocated, reserved or "
          "device-used (default: the largest measured; a kind that was not "
          "measured falls back to it)");
ABSL_FLAG(absl::Duration, stream_interval, absl::Seconds(2),
          "run: how often samples are streamed while the command runs");
ABSL_FLAG(absl::Duration, memory_sample_interval, absl::Seconds(1),
          "run: how often NVML memory is sampled");
ABSL_FLAG(int, upload_attempts, 6,
          "calls per upload before leaving it in the spool (UNAVAILABLE is "
          "retried with jittered exponential backoff)");
ABSL_FLAG(absl::Duration, backoff_initial, absl::Milliseconds(250),
          "first backoff delay (it doubles, up to 10 s)");
ABSL_FLAG(absl::Duration, upload_after_stop, absl::Seconds(20),
          "run: once told to stop (SIGTERM, SIGINT), how long after the "
          "signal the agent may spend uploading before it leaves the run in "
          "the spool and exits 3 (Slurm kills a job KillWait, 30 s by "
          "default, after its SIGTERM); the run is spooled before any upload");

namespace placement::agent {
namespace {

constexpr int kExitOk = 0;
constexpr int kExitFailed = 1;
constexpr int kExitUsage = 2;
constexpr int kExitSpooled = 3;
constexpr int kExitKept = 4;

std::string ServerAddress() {
  return clients::ServerAddress(absl::GetFlag(FLAGS_server));
}

// The flag's value when given, else the first environment variable set.
std::string FlagOrEnv(const std::string& flag,
                      std::initializer_list<const char*> variables) {
  if (!flag.empty()) return flag;
  for (const char* name : variables) {
    const char* value = std::getenv(name);
    if (value != nullptr && *value != '\0') return value;
  }
  return "";
}

absl::StatusOr<std::string> SpoolDir() {
  const std::string dir = absl::GetFlag(FLAGS_spool_dir);
  if (!dir.empty()) return dir;
  return DefaultSpoolDir();
}

std::string HostName() {
  char name[256] = {};
  if (gethostname(name, sizeof(name) - 1) != 0 || name[0] == '\0') {
    return "unknown-host";
  }
  return name;
}

absl::StatusOr<Uploader> MakeUploader() {
  absl::StatusOr<std::string> token =
      ResolveToken(absl::GetFlag(FLAGS_token_file));
  if (!token.ok()) return token.status();
  absl::StatusOr<Connection> connection =
      Connection::Make(ServerAddress(), *token, absl::GetFlag(FLAGS_ca_file));
  if (!connection.ok()) return connection.status();
  Backoff backoff;
  backoff.attempts = std::max(1, absl::GetFlag(FLAGS_upload_attempts));
  backoff.initial = absl::GetFlag(FLAGS_backoff_initial);
  return Uploader(*std::move(connection), backoff);
}

// NVML, or null with why in `problem` (for the detection's message).
std::unique_ptr<Nvml> MaybeLoadNvml(std::string* problem = nullptr) {
  const std::string library = absl::GetFlag(FLAGS_nvml_library);
  if (library.empty()) {
    if (problem != nullptr) *problem = "not tried: --nvml_library is empty";
    return nullptr;
  }
  absl::StatusOr<std::unique_ptr<Nvml>> nvml = LoadNvml(library);
  if (!nvml.ok()) {
    if (problem != nullptr) *problem = std::string(nvml.status().message());
    return nullptr;
  }
  return *std::move(nvml);
}

std::string DescribeSeen(const NodeDetection& d) {
  std::vector<std::string> seen;
  for (size_t i = 0; i < d.gpus.size(); ++i) {
    seen.push_back(absl::StrCat(
        "GPU ", i, ": '", d.gpus[i].name, "' ", d.gpus[i].memory_mib, " MiB, ",
        d.gpus[i].nvlink_active_links, " NVLink links active"));
  }
  return absl::StrJoin(seen, "\n");
}

// ---- detect ----------------------------------------------------------------

int Detect() {
  std::string nvml_problem;
  std::unique_ptr<Nvml> nvml = MaybeLoadNvml(&nvml_problem);
  const NodeDetection d =
      DetectNode(nvml.get(), absl::GetFlag(FLAGS_nvidia_smi), nvml_problem);
  if (absl::GetFlag(FLAGS_json)) {
    google::protobuf::Struct out;
    auto& f = *out.mutable_fields();
    f["sku"].set_string_value(d.sku);
    f["named"].set_bool_value(d.named());
    f["gpu_count"].set_number_value(d.gpu_count);
    f["nvlink"].set_string_value(NvlinkStateName(d.nvlink));
    f["source"].set_string_value(d.source);
    f["problem"].set_string_value(d.problem);
    auto* gpus = f["gpus"].mutable_list_value();
    for (const GpuSighting& gpu : d.gpus) {
      auto& g = *gpus->add_values()->mutable_struct_value()->mutable_fields();
      g["name"].set_string_value(gpu.name);
      g["memory_mib"].set_number_value(static_cast<double>(gpu.memory_mib));
      g["nvlink_active_links"].set_number_value(gpu.nvlink_active_links);
    }
    google::protobuf::util::JsonPrintOptions options;
    options.add_whitespace = true;
    std::string json;
    (void)google::protobuf::util::MessageToJsonString(out, &json, options);
    std::cout << json;
  } else if (d.named()) {
    std::cout << "sku:     " << d.sku << "\ngpus:    " << d.gpu_count
              << "\nnvlink:  " << NvlinkStateName(d.nvlink)
              << "\nsource:  " << d.source << "\n";
  } else {
    std::cout << "sku:     unknown (" << d.problem
              << ")\ngpus:    " << d.gpu_count << "\nsource:  " << d.source
              << "\n";
    if (!d.gpus.empty()) std::cout << "seen:\n" << DescribeSeen(d) << "\n";
    std::cout << "No evidence is recorded under a guessed SKU: name the card "
                 "with --sku EXACT_NAME only if you know it (placectl skus).\n";
  }
  return d.named() ? kExitOk : kExitFailed;
}

// ---- run -------------------------------------------------------------------

struct SkuChoice {
  std::string sku;
  double memory_gb = 0;
  absl::optional<NodeDetection> detection;  // when detection named the node
};

// The node's SKU: the operator's exact --sku (checked against the catalog),
// or detection. Never a guess.
absl::StatusOr<SkuChoice> ChooseSku(const Uploader& uploader, Nvml* nvml,
                                    const std::string& nvml_problem) {
  SkuChoice choice;
  const std::string stated = absl::GetFlag(FLAGS_sku);
  const NodeDetection detected =
      DetectNode(nvml, absl::GetFlag(FLAGS_nvidia_smi), nvml_problem);
  if (stated.empty()) {
    if (!detected.named()) {
      return absl::FailedPreconditionError(absl::StrCat(
          "cannot name this node's SKU exactly: ", detected.problem,
          detected.gpus.empty() ? "" : "\n", DescribeSeen(detected),
          "\nrefusing to record evidence under a guessed SKU; if you know "
          "the card, state it with --sku EXACT_NAME (placectl skus)"));
    }
    choice.sku = detected.sku;
    choice.memory_gb = FindKnownSku(detected.sku)->memory_gb;
    choice.detection = detected;
    return choice;
  }
  if (detected.named() && detected.sku != stated) {
    return absl::FailedPreconditionError(
        absl::StrCat("--sku ", stated, " contradicts detection: this node has ",
                     detected.gpu_count, " x ", detected.sku));
  }
  auto catalog = v1::CatalogService::NewStub(uploader.connection().channel());
  v1::GetSkuRequest request;
  request.set_name(stated);
  v1::GetSkuResponse response;
  grpc::Status status = catalog->GetSku(
      uploader.connection().Context(std::chrono::seconds(5)).get(), request,
      &response);
  if (status.ok()) {
    if (response.sku().name() != stated) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--sku ", stated, " is not an exact catalog name; did you mean ",
          response.sku().name(), "?"));
    }
    choice.memory_gb = response.sku().memory_gb();
  } else if (IsRetryable(status)) {
    // The service is away: the agent's own copy of the catalog decides.
    const KnownSku* known = FindKnownSku(stated);
    if (known == nullptr) {
      return absl::InvalidArgumentError(
          absl::StrCat("--sku ", stated, " is not an exact catalog SKU"));
    }
    choice.memory_gb = known->memory_gb;
  } else {
    return absl::InvalidArgumentError(
        absl::StrCat("--sku: ", clients::DescribeError(status)));
  }
  choice.sku = stated;
  if (detected.named()) choice.detection = detected;
  return choice;
}

absl::StatusOr<v1::Offload> ParseOffload(const std::string& text) {
  const std::string t = absl::AsciiStrToLower(text);
  if (t == "none") return v1::OFFLOAD_NONE;
  if (t == "cpu") return v1::OFFLOAD_CPU;
  if (t == "nvme") return v1::OFFLOAD_NVME;
  return absl::InvalidArgumentError("--offload must be none, cpu or nvme");
}

absl::StatusOr<v1::Interconnect> ParseInterconnect(const std::string& text) {
  const std::string t = absl::AsciiStrToLower(text);
  if (t == "nvlink") return v1::INTERCONNECT_NVLINK;
  if (t == "pcie") return v1::INTERCONNECT_PCIE;
  if (t == "host-memory" || t == "host_memory") {
    return v1::INTERCONNECT_HOST_MEMORY;
  }
  return absl::InvalidArgumentError(
      "--interconnect must be nvlink, pcie or host-memory");
}

absl::StatusOr<v1::PeakMemoryKind> ParseReportPeak(const std::string& text) {
  const std::string t = absl::AsciiStrToLower(text);
  if (t == "allocated") return v1::PEAK_MEMORY_KIND_ALLOCATED;
  if (t == "reserved") return v1::PEAK_MEMORY_KIND_RESERVED;
  if (t == "device-used" || t == "device_used") {
    return v1::PEAK_MEMORY_KIND_DEVICE_USED;
  }
  return absl::InvalidArgumentError(
      "--report_peak must be allocated, reserved or device-used");
}

// Shared between the command's output reader, the memory sampler and the
// streaming thread.
class LiveRun {
 public:
  void Add(v1::StepSample sample) {
    std::lock_guard<std::mutex> lock(mu_);
    samples_.push_back(std::move(sample));
  }
  std::vector<v1::StepSample> Snapshot() const {
    std::lock_guard<std::mutex> lock(mu_);
    return samples_;
  }
  size_t size() const {
    std::lock_guard<std::mutex> lock(mu_);
    return samples_.size();
  }
  void SeeMemory(double gb) {
    std::lock_guard<std::mutex> lock(mu_);
    current_gb_ = gb;
    peak_gb_ = std::max(peak_gb_, gb);
  }
  double current_gb() const {
    std::lock_guard<std::mutex> lock(mu_);
    return current_gb_;
  }
  double peak_gb() const {
    std::lock_guard<std::mutex> lock(mu_);
    return peak_gb_;
  }

  // Sleeps up to `d`; false once Stop() was called.
  bool Wait(absl::Duration d) {
    std::unique_lock<std::mutex> lock(mu_);
    return !stop_cv_.wait_for(lock, absl::ToChronoMilliseconds(d),
                              [this] { return stopped_; });
  }
  void Stop() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stopped_ = true;
    }
    stop_cv_.notify_all();
  }

 private:
  mutable std::mutex mu_;
  std::condition_variable stop_cv_;
  bool stopped_ = false;
  std::vector<v1::StepSample> samples_;
  double current_gb_ = 0;
  double peak_gb_ = 0;
};

// Refuses a run whose pool holds another SKU: the service would refuse the
// run anyway, but only after the GPU time was spent. An unreachable service
// is no reason to refuse: the run is spooled.
absl::Status CheckPoolHoldsSku(const Uploader& uploader,
                               const std::string& pool,
                               const std::string& sku) {
  auto catalog = v1::CatalogService::NewStub(uploader.connection().channel());
  v1::GetPoolRequest request;
  request.set_name(pool);
  v1::GetPoolResponse response;
  grpc::Status status = catalog->GetPool(
      uploader.connection().Context(std::chrono::seconds(5)).get(), request,
      &response);
  if (status.ok() && response.pool().sku() != sku) {
    return absl::FailedPreconditionError(
        absl::StrCat("pool '", pool, "' has ", response.pool().sku(),
                     " cards; this node is ", sku));
  }
  if (!status.ok() && !IsRetryable(status)) {
    return absl::FailedPreconditionError(
        absl::StrCat("pool '", pool, "': ", clients::DescribeError(status)));
  }
  if (!status.ok()) {
    std::cerr << "placement-agent: the service is unreachable ("
              << clients::DescribeError(status)
              << "); recording into the spool\n";
  }
  return absl::OkStatus();
}

// The link the collectives of a run on `gpus` GPUs use: the operator's
// --interconnect, else what detection saw. Never a guess.
absl::StatusOr<v1::Interconnect> ChooseInterconnect(int gpus,
                                                    const SkuChoice& sku) {
  const std::string stated = absl::GetFlag(FLAGS_interconnect);
  if (!stated.empty()) return ParseInterconnect(stated);
  if (sku.detection.has_value()) {
    return sku.detection->nvlink == NvlinkState::kActive
               ? v1::INTERCONNECT_NVLINK
               : v1::INTERCONNECT_PCIE;
  }
  return absl::FailedPreconditionError(absl::StrCat(
      "a ", gpus,
      "-GPU run opens collectives; without detection, state the link they "
      "use with --interconnect nvlink|pcie|host-memory"));
}

// What is known of the run before its command starts.
absl::StatusOr<RunFacts> FactsBeforeTheCommand(const v1::Recipe& recipe,
                                               const std::string& pool,
                                               const SkuChoice& sku,
                                               v1::Offload offload) {
  RunFacts facts;
  facts.recipe = recipe;
  facts.recipe.set_gpu_count(std::max(1, facts.recipe.gpu_count()));
  const int gpus = facts.recipe.gpu_count();
  facts.collectives_opened =
      gpus > 1 && facts.recipe.parallelism() != v1::PARALLELISM_SINGLE;
  facts.interconnect = v1::INTERCONNECT_NONE;
  if (facts.collectives_opened) {
    absl::StatusOr<v1::Interconnect> link = ChooseInterconnect(gpus, sku);
    if (!link.ok()) return link.status();
    facts.interconnect = *link;
  }
  facts.run_id = common::NewUuid();
  facts.agent_id = absl::GetFlag(FLAGS_agent_id).empty()
                       ? absl::StrCat("placement-agent@", HostName())
                       : absl::GetFlag(FLAGS_agent_id);
  facts.pool = pool;
  facts.sku = sku.sku;
  facts.card_memory_gb = sku.memory_gb;
  facts.node_names = {HostName()};
  facts.plan_id =
      FlagOrEnv(absl::GetFlag(FLAGS_plan_id), {"PLACEMENT_PLAN_ID"});
  facts.team = absl::GetFlag(FLAGS_team);
  facts.exclusive = absl::GetFlag(FLAGS_exclusive);
  if (const std::string peak = absl::GetFlag(FLAGS_report_peak);
      !peak.empty()) {
    absl::StatusOr<v1::PeakMemoryKind> kind = ParseReportPeak(peak);
    if (!kind.ok()) return kind.status();
    facts.report_peak = *kind;
  }
  facts.offload = offload;
  return facts;
}

// Samples the GPUs' used memory into `live` until it stops.
std::thread StartMemorySampler(Nvml& nvml, LiveRun& live) {
  return std::thread([&nvml, &live] {
    const absl::Duration every = std::max(
        absl::GetFlag(FLAGS_memory_sample_interval), absl::Milliseconds(50));
    do {
      absl::StatusOr<std::vector<uint64_t>> used = nvml.MemoryUsedBytes();
      if (used.ok() && !used->empty()) {
        live.SeeMemory(
            static_cast<double>(*std::max_element(used->begin(), used->end())) /
            1e9);
      }
    } while (live.Wait(every));
  });
}

// Streams samples while the command runs; a failure only delays the next
// try (the spool has them), backing off with jitter.
std::thread StartStreamer(Uploader& uploader, const std::string& run_id,
                          LiveRun& live) {
  return std::thread([&uploader, run_id, &live] {
    Backoff backoff;
    backoff.initial = absl::GetFlag(FLAGS_stream_interval);
    backoff.max = absl::Seconds(60);
    int failures = 0;
    int64_t committed = -1;
    while (live.Wait(failures == 0 ? absl::GetFlag(FLAGS_stream_interval)
                                   : backoff.Delay(failures))) {
      if (static_cast<int64_t>(live.size()) <= committed + 1) continue;
      grpc::Status status = uploader.SyncSamples(run_id, live.Snapshot(),
                                                 /*retry=*/false, &committed);
      failures = status.ok() ? 0 : failures + 1;
    }
  });
}

// The sample of one step the command reported; memory the command did not
// report is NVML's.
v1::StepSample SampleOfStep(const StepRecord& record, int64_t step,
                            double nvml_gb) {
  v1::StepSample s;
  s.set_step(step);
  *s.mutable_time() = common::TimeToProto(absl::Now());
  s.set_step_time_seconds(record.step_time_s);
  s.set_memory_allocated_gb(record.memory_allocated_gb.value_or(nvml_gb));
  s.set_memory_reserved_gb(record.memory_reserved_gb.value_or(
      std::max(nvml_gb, s.memory_allocated_gb())));
  s.set_tokens(record.tokens);
  if (record.loss.has_value()) s.set_loss(*record.loss);
  return s;
}

// Runs the command until an attempt succeeds or --max_retries restarts
// are spent, recording each attempt into `facts` and each step into the
// spool and `live`.
void RunAttempts(const std::vector<std::string>& command, SpoolRun& spool,
                 LiveRun& live, RunFacts& facts) {
  const int max_attempts = std::max(0, absl::GetFlag(FLAGS_max_retries)) + 1;
  for (int attempt = 1; attempt <= max_attempts; ++attempt) {
    if (attempt > 1 && StopRequested()) break;
    Attempt a;
    a.start = absl::Now();
    CommandResult result = RunTrainingCommand(
        command,
        {{"PLACEMENT_RUN_ID", facts.run_id},
         {"PLACEMENT_ATTEMPT", absl::StrCat(attempt)}},
        absl::GetFlag(FLAGS_attempt_timeout), [&](absl::string_view line) {
          absl::optional<StepRecord> record = ParseStepRecord(line);
          if (!record.has_value()) {
            // A checkpoint going backwards keeps the largest.
            if (absl::optional<int64_t> kept = ParseCheckpointRecord(line)) {
              a.checkpoint_step =
                  std::max(a.checkpoint_step.value_or(0), *kept);
            }
            return;
          }
          if (!a.first_step.has_value()) a.first_step = record->step;
          ++a.steps;
          v1::StepSample s = SampleOfStep(
              *record, static_cast<int64_t>(live.size()), live.current_gb());
          if (record->offload != v1::OFFLOAD_UNSPECIFIED) {
            facts.record_offload = record->offload;
          }
          if (absl::Status st = spool.AppendSamples({s}); !st.ok()) {
            std::cerr << "placement-agent: spool: " << st.message() << "\n";
          }
          live.Add(std::move(s));
        });
    a.end = absl::Now();
    a.outcome = ClassifyAttempt(result.end, result.output_tail, &a.reason);
    facts.attempts.push_back(a);
    if (a.outcome == v1::RUN_OUTCOME_SUCCEEDED) break;
    if (a.outcome == v1::RUN_OUTCOME_PREEMPTED && StopRequested()) {
      std::cerr << "placement-agent: attempt " << attempt
                << " PREEMPTED: the agent was told to stop (" << a.reason
                << "); recording the run\n";
      break;
    }
    std::cerr << "placement-agent: attempt " << attempt << " "
              << absl::StripPrefix(v1::RunOutcome_Name(a.outcome),
                                   "RUN_OUTCOME_")
              << " (" << a.reason << ")"
              << (attempt < max_attempts ? "; retrying" : "") << "\n";
  }
}

// What the flush did with the run, in words for its summary line.
std::string DescribeFate(RunFate fate, const std::string& run_dir) {
  switch (fate) {
    case RunFate::kUploaded:
      return "uploaded";
    case RunFate::kRejected:
      return "refused by the service as invalid (kept in rejected/)";
    case RunFate::kKept:
      return absl::StrCat("NOT uploaded: kept in ", run_dir,
                          " (see the service's answer above; fix it, then "
                          "placement-agent flush)");
    default:
      return absl::StrCat("spooled in ", run_dir,
                          " (placement-agent flush uploads it)");
  }
}

// Prints the run's one-line summary; the exit code says whether it was
// uploaded and succeeded. What became of the run is the flush's word, never
// a guess from the spool's folders.
int ReportRun(const v1::BenchmarkRun& summary, const std::string& run_dir,
              const FlushReport& report) {
  const auto it = report.runs.find(summary.run_id());
  const RunFate fate = it != report.runs.end() ? it->second : RunFate::kLeft;
  std::cout << absl::StrFormat(
      "run %s: %s, %d retr%s, %d/%d steps succeeded, peak %.1f GB, %s\n",
      summary.run_id(),
      absl::StripPrefix(v1::RunOutcome_Name(summary.outcome()), "RUN_OUTCOME_"),
      summary.retries(), summary.retries() == 1 ? "y" : "ies",
      summary.steps_succeeded(), summary.steps_attempted(),
      summary.peak_memory_gb(), DescribeFate(fate, run_dir));
  switch (fate) {
    case RunFate::kUploaded:
      if (report.left > 0) return kExitSpooled;
      return summary.outcome() == v1::RUN_OUTCOME_SUCCEEDED ? kExitOk
                                                            : kExitFailed;
    case RunFate::kRejected:
      return kExitFailed;
    case RunFate::kKept:
      return kExitKept;
    default:
      return kExitSpooled;
  }
}

// The stop signals a job gets (Slurm's preemption or scancel, a Ctrl-C)
// reach the command's process group, and the attempt is recorded as
// PREEMPTED instead of the agent dying without a summary.
void ForwardStopSignals() {
  struct sigaction action = {};
  action.sa_handler = [](int) { StopCommands(); };
  sigemptyset(&action.sa_mask);
  sigaction(SIGTERM, &action, nullptr);
  sigaction(SIGINT, &action, nullptr);
}

// What `run` is given: the pool, recipe and offload, read and checked.
struct RunInputs {
  std::string pool;
  v1::Recipe recipe;
  v1::Offload offload = v1::OFFLOAD_NONE;
};

// The run's inputs, or a usage error to print.
absl::StatusOr<RunInputs> ReadRunInputs() {
  RunInputs inputs;
  // Inside a job the Slurm plugin placed, the pool and the plan come from
  // the job's environment.
  inputs.pool = FlagOrEnv(absl::GetFlag(FLAGS_pool),
                          {"PLACEMENT_POOL", "SLURM_JOB_PARTITION"});
  if (inputs.pool.empty() || absl::GetFlag(FLAGS_recipe).empty()) {
    return absl::InvalidArgumentError(
        "run needs --pool (or $PLACEMENT_POOL, $SLURM_JOB_PARTITION) and "
        "--recipe");
  }
  absl::StatusOr<v1::Recipe> recipe =
      ReadRecipeFile(absl::GetFlag(FLAGS_recipe));
  if (!recipe.ok()) return recipe.status();
  absl::StatusOr<v1::Offload> offload =
      ParseOffload(absl::GetFlag(FLAGS_offload));
  if (!offload.ok()) return offload.status();
  inputs.recipe = *std::move(recipe);
  inputs.offload = *offload;
  return inputs;
}

// The facts known before the command starts: the SKU named (never guessed),
// checked against the pool.
absl::StatusOr<RunFacts> NameTheRun(const Uploader& uploader, Nvml* nvml,
                                    const std::string& nvml_problem,
                                    const RunInputs& inputs) {
  absl::StatusOr<SkuChoice> sku = ChooseSku(uploader, nvml, nvml_problem);
  if (!sku.ok()) return sku.status();
  if (absl::Status usable = CheckPoolHoldsSku(uploader, inputs.pool, sku->sku);
      !usable.ok()) {
    return usable;
  }
  return FactsBeforeTheCommand(inputs.recipe, inputs.pool, *sku,
                               inputs.offload);
}

// Builds the summary and writes it to the spool; nullopt (said on stderr)
// when there is none to write.
absl::optional<v1::BenchmarkRun> SpoolSummary(const RunFacts& facts,
                                              SpoolRun& spool) {
  absl::StatusOr<v1::BenchmarkRun> summary = BuildRunSummary(facts);
  if (!summary.ok()) {
    std::cerr << "placement-agent: no run summary: "
              << summary.status().message() << "\n";
    if (facts.samples.empty()) (void)spool.Remove();
    return absl::nullopt;
  }
  if (absl::Status s = spool.WriteRun(*summary); !s.ok()) {
    std::cerr << "placement-agent: spool: " << s.message() << "\n";
    return absl::nullopt;
  }
  return *std::move(summary);
}

// Runs the attempts while samples stream and NVML memory is sampled, then
// spools the run's summary. The summary is on disk before anything waits
// for the network: a stream stuck on an unresponsive service is cancelled
// only after it, so a job killed meanwhile (Slurm's SIGKILL, KillWait after
// its SIGTERM) still leaves the whole run in the spool, uploaded by the
// next start. Returns the summary spooled, or nullopt.
absl::optional<v1::BenchmarkRun> RecordRun(
    const std::vector<std::string>& command, const Uploader& uploader,
    Nvml* nvml, SpoolRun& spool, RunFacts& facts) {
  LiveRun live;
  std::thread memory_sampler;
  if (nvml != nullptr) memory_sampler = StartMemorySampler(*nvml, live);
  // Its own uploader, so that cancelling its stream cancels nothing else.
  Uploader streaming(uploader.connection(), Backoff{});
  streaming.set_stream_team(facts.team);
  std::thread streamer = StartStreamer(streaming, facts.run_id, live);
  RunAttempts(command, spool, live, facts);
  live.Stop();
  if (memory_sampler.joinable()) memory_sampler.join();  // never on network
  facts.samples = live.Snapshot();
  facts.nvml_peak_gb = live.peak_gb();
  absl::optional<v1::BenchmarkRun> summary = SpoolSummary(facts, spool);
  // Every sample is in the spool too: the flush sends what the stream did
  // not.
  streaming.Cancel();
  streamer.join();
  return summary;
}

// Flushes the spool (the run's own folder unlocked first) and reports.
int FinishRun(const absl::optional<v1::BenchmarkRun>& summary,
              std::unique_ptr<SpoolRun> spool, const std::string& spool_dir,
              Uploader& uploader) {
  if (!summary.has_value()) return kExitFailed;
  const std::string run_dir = spool->dir();
  spool.reset();  // unlock: the flush below takes it like any spooled run
  if (StopRequested()) {
    // The job is being killed: upload what fits before the kill, and leave
    // the rest in the spool for the next start.
    uploader.GiveUpAt(
        StopRequestedAt() +
        absl::ToChronoNanoseconds(absl::GetFlag(FLAGS_upload_after_stop)));
  }
  return ReportRun(*summary, run_dir,
                   uploader.FlushSpool(spool_dir, std::cerr));
}

int Run(const std::vector<std::string>& command) {
  if (command.empty()) {
    std::cerr << "usage: placement-agent run --pool P --recipe FILE [--sku S] "
                 "-- COMMAND...\n";
    return kExitUsage;
  }
  absl::StatusOr<RunInputs> inputs = ReadRunInputs();
  absl::StatusOr<Uploader> uploader =
      inputs.ok() ? MakeUploader() : inputs.status();
  absl::StatusOr<std::string> spool_dir =
      uploader.ok() ? SpoolDir() : uploader.status();
  if (!spool_dir.ok()) {
    std::cerr << "placement-agent: " << spool_dir.status().message() << "\n";
    return kExitUsage;
  }
  std::string nvml_problem;
  std::unique_ptr<Nvml> nvml = MaybeLoadNvml(&nvml_problem);
  absl::StatusOr<RunFacts> started =
      NameTheRun(*uploader, nvml.get(), nvml_problem, *inputs);
  if (!started.ok()) {
    std::cerr << "placement-agent: " << started.status().message() << "\n";
    return kExitUsage;
  }
  RunFacts& facts = *started;

  // The run id is on disk before the command starts: whatever happens next,
  // retries and flushes of this run are idempotent on it.
  absl::StatusOr<std::unique_ptr<SpoolRun>> spool =
      SpoolRun::Create(*spool_dir, facts.run_id);
  if (!spool.ok()) {
    std::cerr << "placement-agent: spool: " << spool.status().message() << "\n";
    return kExitUsage;
  }
  std::cerr << "placement-agent: run " << facts.run_id << " on " << facts.sku
            << " (pool " << facts.pool << "), spooled in " << (*spool)->dir()
            << "\n";
  ForwardStopSignals();
  const absl::optional<v1::BenchmarkRun> summary =
      RecordRun(command, *uploader, nvml.get(), **spool, facts);
  return FinishRun(summary, *std::move(spool), *spool_dir, *uploader);
}

// ---- flush -----------------------------------------------------------------

int Flush() {
  absl::StatusOr<Uploader> uploader = MakeUploader();
  if (!uploader.ok()) {
    std::cerr << "placement-agent: " << uploader.status().message() << "\n";
    return kExitUsage;
  }
  const absl::StatusOr<std::string> spool_dir = SpoolDir();
  if (!spool_dir.ok()) {
    std::cerr << "placement-agent: " << spool_dir.status().message() << "\n";
    return kExitUsage;
  }
  const FlushReport r = uploader->FlushSpool(*spool_dir, std::cerr);
  std::cout << absl::StrFormat(
      "uploaded %d, left in the spool %d, rejected %d, kept (refused, not "
      "the run's fault) %d, in progress %d, incomplete %d\n",
      r.uploaded, r.left, r.rejected, r.kept, r.in_progress, r.incomplete);
  return r.exit_code();
}

// ---- bakeoff ---------------------------------------------------------------

// The environment variable a bake-off command sets to the steps the plan
// asks of the run: the training command reads it and stops there (the
// agent passes its environment on to the command).
constexpr char kMaxStepsVariable[] = "PLACEMENT_MAX_STEPS";

int BakeOff(const std::string& plan_id) {
  absl::StatusOr<Uploader> uploader = MakeUploader();
  if (!uploader.ok()) {
    std::cerr << "placement-agent: " << uploader.status().message() << "\n";
    return kExitUsage;
  }
  auto placement =
      v1::PlacementService::NewStub(uploader->connection().channel());
  v1::GetPlanRequest request;
  request.set_plan_id(plan_id);
  v1::GetPlanResponse response;
  grpc::Status status = placement->GetPlan(
      uploader->connection().Context().get(), request, &response);
  if (!status.ok()) {
    std::cerr << "placement-agent: " << clients::DescribeError(status) << "\n";
    return kExitFailed;
  }
  if (!response.plan().has_bake_off() ||
      response.plan().bake_off().runs().empty()) {
    std::cout << "# plan " << plan_id
              << " proposes no bake-off: no candidate other than its first "
                 "is worth measuring first (the job itself measures the "
                 "first)\n";
    return kExitOk;
  }
  const v1::BakeOff& b = response.plan().bake_off();
  std::cout << (b.runs_size() == 1 ? "# Measurement run of plan "
                                   : "# Bake-off of plan ")
            << plan_id << " (recipe key " << b.recipe_key() << ")\n";
  if (!b.reason().empty()) std::cout << "# why: " << b.reason() << "\n";
  if (!b.settings().empty())
    std::cout << "# settings: " << b.settings() << "\n";
  if (!b.measure().empty()) {
    std::cout << "# measure: " << absl::StrJoin(b.measure(), "; ") << "\n";
  }
  if (!b.eval_requirement().empty()) {
    std::cout << "# then: " << b.eval_requirement() << "\n";
  }
  std::cout << "# On a node of each pool, with your training command (it "
               "prints step records and stops after $PLACEMENT_MAX_STEPS "
               "steps when set, docs/AGENT.md):\n";
  for (const v1::BakeOffRun& run : b.runs()) {
    v1::Recipe recipe = b.recipe();
    recipe.set_gpu_count(run.gpu_count());
    const std::string file = absl::StrCat("bakeoff-", run.pool(), ".json");
    std::cout << "\n# pool " << run.pool() << ": " << run.gpu_count() << " x "
              << run.sku() << "\n";
    if (!run.reason().empty()) std::cout << "# why: " << run.reason() << "\n";
    std::cout << "cat > " << file << " <<'EOF'\n"
              << RecipeToJson(recipe)
              << "\nEOF\n"
              // The command inherits the agent's environment.
              << (run.steps() > 0
                      ? absl::StrCat(kMaxStepsVariable, "=", run.steps(), " ")
                      : "")
              << "placement-agent run --server " << ServerAddress()
              << " --pool " << run.pool() << " --recipe " << file
              << " --plan_id " << plan_id << " -- TRAINING_COMMAND...\n";
  }
  return kExitOk;
}

}  // namespace
}  // namespace placement::agent

int main(int argc, char** argv) {
  constexpr char kUsage[] =
      "placement-agent [flags] COMMAND\n"
      "  detect                    name this node's exact SKU, GPU count and "
      "NVLink state\n"
      "  run --pool P --recipe FILE [--sku S] [--plan_id ID] [--report_peak K] "
      "-- COMMAND...\n"
      "                            run a training command, record and upload "
      "the run\n"
      "  flush                     upload every spooled run\n"
      "  bakeoff PLAN_ID           print the commands of a plan's bake-off\n"
      "Exit codes: 0 done; 1 the command failed / the node cannot be named / "
      "a run was refused as invalid; 2 usage; 3 spooled, not uploaded (run "
      "flush "
      "later); 4 kept in the spool: the service refused the upload for a "
      "reason not the run's (token, server fault), or a sample is missing.";
  absl::SetProgramUsageMessage(kUsage);
  std::vector<char*> positional = absl::ParseCommandLine(argc, argv);
  std::vector<std::string> args(positional.begin() + 1, positional.end());
  if (args.empty()) {
    std::cerr << "usage: " << kUsage << "\n";
    return 2;
  }
  const std::string command = args.front();
  args.erase(args.begin());
  using namespace placement::agent;  // NOLINT
  if (command == "detect" && args.empty()) return Detect();
  if (command == "run") return Run(args);
  if (command == "flush" && args.empty()) return Flush();
  if (command == "bakeoff" && args.size() == 1) return BakeOff(args[0]);
  std::cerr << "usage: " << kUsage << "\n";
  return 2;
}
