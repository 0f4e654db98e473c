#include <signal.h>

#include <algorithm>
#include <condition_variable>
#include <iostream>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "absl/types/optional.h"
#include "clients/agent/command_runner.h"
#include "clients/agent/commands/command_support.h"
#include "clients/agent/commands/commands.h"
#include "clients/agent/commands/flags.h"
#include "clients/agent/commands/run_facts.h"
#include "clients/agent/gpu_probe.h"
#include "clients/agent/run_record.h"
#include "clients/agent/spool.h"
#include "clients/agent/uploader.h"
#include "common/proto_time.h"

namespace placement::agent {
namespace {

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

// Whether a failed attempt is worth another: not one that ran out of memory
// before its first step, where the same command on the same card allocates
// the same memory again (one that ran steps first may have met a longer
// batch or a fragmented allocator, and is retried).
bool Retryable(const Attempt& a, std::string* why_not) {
  if (a.outcome == v1::RUN_OUTCOME_OUT_OF_MEMORY && a.steps == 0) {
    *why_not =
        "before its first step: not retried, the same command allocates the "
        "same memory again";
    return false;
  }
  return true;
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
    std::string why_not;
    const bool retry = attempt < max_attempts && Retryable(a, &why_not);
    std::cerr << "placement-agent: attempt " << attempt << " "
              << absl::StripPrefix(v1::RunOutcome_Name(a.outcome),
                                   "RUN_OUTCOME_")
              << " (" << a.reason << ")";
    if (retry) {
      std::cerr << "; retrying";
    } else if (!why_not.empty()) {
      std::cerr << " " << why_not;
    }
    std::cerr << "\n";
    if (!retry) break;
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

}  // namespace

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

}  // namespace placement::agent
