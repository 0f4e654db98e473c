#include "clients/agent/uploader.h"

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <random>
#include <sstream>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "clients/agent/spool.h"
#include "clients/common/progress.h"
#include "clients/common/rpc_errors.h"

namespace placement::agent {
namespace {

// Samples a stream message carries (the service takes up to 10,000).
constexpr size_t kBatch = 1000;

absl::StatusOr<std::string> ReadTokenFile(const std::string& path) {
  std::ifstream file(path);
  if (!file) return absl::NotFoundError(absl::StrCat("cannot read ", path));
  std::stringstream text;
  text << file.rdbuf();
  return std::string(absl::StripAsciiWhitespace(text.str()));
}

std::string Env(const char* name) {
  const char* value = std::getenv(name);
  return value != nullptr ? value : "";
}

}  // namespace

absl::StatusOr<Connection> Connection::Make(const std::string& address,
                                            const std::string& token,
                                            const std::string& ca_file) {
  Connection c;
  c.address_ = address;
  c.token_ = token;
  std::shared_ptr<grpc::ChannelCredentials> credentials;
  if (ca_file.empty()) {
    credentials = grpc::InsecureChannelCredentials();
  } else {
    std::ifstream file(ca_file);
    if (!file) {
      return absl::InvalidArgumentError(absl::StrCat("cannot read ", ca_file));
    }
    std::stringstream pem;
    pem << file.rdbuf();
    grpc::SslCredentialsOptions options;
    options.pem_root_certs = pem.str();
    credentials = grpc::SslCredentials(options);
  }
  c.channel_ = grpc::CreateChannel(address, credentials);
  return c;
}

std::unique_ptr<grpc::ClientContext> Connection::Context(
    std::chrono::milliseconds timeout) const {
  auto context = std::make_unique<grpc::ClientContext>();
  context->set_deadline(std::chrono::system_clock::now() + timeout);
  if (!token_.empty())
    context->AddMetadata("authorization", "Bearer " + token_);
  return context;
}

absl::StatusOr<std::string> ResolveToken(const std::string& token_file_flag) {
  if (!token_file_flag.empty()) return ReadTokenFile(token_file_flag);
  if (std::string token = Env("PLACEMENT_TOKEN"); !token.empty()) {
    return std::string(absl::StripAsciiWhitespace(token));
  }
  if (std::string file = Env("PLACEMENT_TOKEN_FILE"); !file.empty()) {
    return ReadTokenFile(file);
  }
  if (std::string home = Env("HOME"); !home.empty()) {
    const std::string file = home + "/.config/placement/token";
    if (std::ifstream(file)) return ReadTokenFile(file);
  }
  return std::string();
}

absl::Duration Backoff::Delay(int retry) const {
  static thread_local std::mt19937_64 random{std::random_device{}()};
  absl::Duration d = initial;
  for (int i = 0; i < retry && d < max; ++i) d *= 2;
  d = std::min(d, max);
  std::uniform_real_distribution<double> jitter(0.5, 1.0);
  return d * jitter(random);
}

bool RefusesTheRun(const grpc::Status& status) {
  return status.error_code() == grpc::StatusCode::INVALID_ARGUMENT ||
         status.error_code() == grpc::StatusCode::ALREADY_EXISTS;
}

const char* RunFateName(RunFate fate) {
  switch (fate) {
    case RunFate::kUploaded:
      return "uploaded";
    case RunFate::kLeft:
      return "left";
    case RunFate::kRejected:
      return "rejected";
    case RunFate::kKept:
      return "kept";
    case RunFate::kInProgress:
      return "in progress";
    case RunFate::kIncomplete:
      return "incomplete";
  }
  return "unknown";
}

void FlushReport::Count(const std::string& run_id, RunFate fate) {
  runs[run_id] = fate;
  switch (fate) {
    case RunFate::kUploaded:
      ++uploaded;
      break;
    case RunFate::kLeft:
      ++left;
      break;
    case RunFate::kRejected:
      ++rejected;
      break;
    case RunFate::kKept:
      ++kept;
      break;
    case RunFate::kInProgress:
      ++in_progress;
      break;
    case RunFate::kIncomplete:
      ++incomplete;
      break;
  }
}

bool IsRetryable(const grpc::Status& status) {
  switch (status.error_code()) {
    case grpc::StatusCode::UNAVAILABLE:
    case grpc::StatusCode::DEADLINE_EXCEEDED:
    case grpc::StatusCode::RESOURCE_EXHAUSTED:
    case grpc::StatusCode::ABORTED:
      return true;
    default:
      return false;
  }
}

Uploader::Uploader(Connection connection, Backoff backoff)
    : connection_(std::move(connection)),
      backoff_(backoff),
      telemetry_(v1::TelemetryService::NewStub(connection_.channel())) {}

Uploader::TrackedContext::TrackedContext(std::shared_ptr<CallControl> control,
                                         const Connection& connection,
                                         std::chrono::milliseconds timeout)
    : control_(std::move(control)) {
  std::lock_guard<std::mutex> lock(control_->mu);
  if (control_->cancelled) return;
  if (control_->give_up_at.has_value()) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        *control_->give_up_at - std::chrono::steady_clock::now());
    timeout = std::max(std::chrono::milliseconds(0), std::min(timeout, left));
  }
  context_ = connection.Context(timeout);
  control_->in_flight.insert(context_.get());
}

Uploader::TrackedContext::~TrackedContext() {
  if (context_ == nullptr) return;
  std::lock_guard<std::mutex> lock(control_->mu);
  control_->in_flight.erase(context_.get());
}

void Uploader::Cancel() {
  std::lock_guard<std::mutex> lock(control_->mu);
  control_->cancelled = true;
  for (grpc::ClientContext* context : control_->in_flight) {
    context->TryCancel();
  }
}

void Uploader::GiveUpAt(std::chrono::steady_clock::time_point give_up_at) {
  std::lock_guard<std::mutex> lock(control_->mu);
  control_->give_up_at = give_up_at;
}

bool Uploader::SleepBeforeRetry(int retry) const {
  const absl::Duration delay = backoff_.Delay(retry);
  {
    std::lock_guard<std::mutex> lock(control_->mu);
    if (control_->cancelled) return false;
    if (control_->give_up_at.has_value() &&
        std::chrono::steady_clock::now() + absl::ToChronoNanoseconds(delay) >=
            *control_->give_up_at) {
      return false;
    }
  }
  absl::SleepFor(delay);
  return true;
}

namespace {

grpc::Status Cancelled() {
  return grpc::Status(grpc::StatusCode::CANCELLED,
                      "the upload was cancelled: the agent is stopping");
}

}  // namespace

grpc::Status Uploader::SyncOnce(const std::string& run_id,
                                const std::vector<v1::StepSample>& samples,
                                int64_t* committed) {
  v1::GetSampleProgressRequest request;
  request.set_run_id(run_id);
  v1::GetSampleProgressResponse progress;
  grpc::Status status;
  {
    TrackedContext context(control_, connection_, std::chrono::seconds(15));
    if (context.get() == nullptr) return Cancelled();
    status = telemetry_->GetSampleProgress(context.get(), request, &progress);
  }
  if (!status.ok()) return status;
  *committed = progress.committed_through_step();
  // By step number, not by position: a spool that lost a line still sends
  // every step after the committed one.
  std::vector<const v1::StepSample*> pending;
  for (const v1::StepSample& sample : samples) {
    if (sample.step() > *committed) pending.push_back(&sample);
  }
  if (pending.empty()) return grpc::Status::OK;

  TrackedContext context(control_, connection_, std::chrono::seconds(120));
  if (context.get() == nullptr) return Cancelled();
  v1::StreamStepSamplesResponse response;
  auto writer = telemetry_->StreamStepSamples(context.get(), &response);
  // A bar only for a sample file worth waiting on.
  const bool large = pending.size() > 10 * kBatch;
  clients::ProgressBar bar("samples", static_cast<int64_t>(pending.size()),
                           std::cerr, large && clients::StderrIsTerminal());
  size_t next = 0;
  while (next < pending.size()) {
    v1::StreamStepSamplesRequest batch;
    batch.set_run_id(run_id);
    batch.set_team(stream_team_);
    for (size_t end = std::min(pending.size(), next + kBatch); next < end;
         ++next) {
      *batch.add_samples() = *pending[next];
    }
    if (!writer->Write(batch)) break;  // Finish says why
    bar.Update(static_cast<int64_t>(next), "sent of run " + run_id);
  }
  writer->WritesDone();
  status = writer->Finish();
  bar.Done();
  if (status.ok()) {
    *committed = response.committed_through_step();
    if (response.samples_conflicting() > 0) {
      // Kept as first stored; a step measured twice differently is ours to
      // explain.
      std::cerr << "placement-agent: run " << run_id << ": "
                << response.samples_conflicting()
                << " re-sent samples differ from the ones stored for their "
                   "steps; the stored ones are kept\n";
    }
  }
  return status;
}

grpc::Status Uploader::SyncSamples(const std::string& run_id,
                                   const std::vector<v1::StepSample>& samples,
                                   bool retry, int64_t* committed) {
  grpc::Status status;
  const int attempts = retry ? std::max(1, backoff_.attempts) : 1;
  for (int i = 0; i < attempts; ++i) {
    if (i > 0 && !SleepBeforeRetry(i - 1)) break;
    status = SyncOnce(run_id, samples, committed);
    if (status.ok() || !IsRetryable(status)) return status;
  }
  return status;
}

grpc::Status Uploader::UploadRun(const v1::BenchmarkRun& run,
                                 v1::UploadBenchmarkRunResponse* response) {
  v1::UploadBenchmarkRunRequest request;
  *request.mutable_run() = run;
  grpc::Status status;
  for (int i = 0; i < std::max(1, backoff_.attempts); ++i) {
    if (i > 0 && !SleepBeforeRetry(i - 1)) break;
    TrackedContext context(control_, connection_, std::chrono::seconds(15));
    if (context.get() == nullptr) return Cancelled();
    status = telemetry_->UploadBenchmarkRun(context.get(), request, response);
    if (status.ok() || !IsRetryable(status)) return status;
  }
  return status;
}

namespace {

// The last step of a spool's samples, -1 for none.
int64_t LastStep(const std::vector<v1::StepSample>& samples) {
  int64_t last = -1;
  for (const v1::StepSample& s : samples) last = std::max(last, s.step());
  return last;
}

// What to do with a run whose upload failed with `status`: wait for the
// service, reject the run, or keep it and say why.
RunFate FateOfRefusal(const std::string& run_id, const char* what,
                      const grpc::Status& status, SpoolRun& run,
                      std::ostream& log) {
  const std::string why = clients::DescribeError(status);
  if (IsRetryable(status)) {
    log << "run " << run_id << ": " << what << " kept in the spool: " << why
        << "\n";
    return RunFate::kLeft;
  }
  if (RefusesTheRun(status)) {
    log << "run " << run_id << ": " << what
        << " refused, moved to rejected/: " << why << "\n";
    (void)run.Reject(why);
    return RunFate::kRejected;
  }
  log << "run " << run_id << ": " << what << " kept in the spool: the service "
      << "answered " << why << " (not a fault of the run: check the token, "
      << "the server and its version, then flush again)\n";
  return RunFate::kKept;
}

}  // namespace

RunFate Uploader::FlushRun(SpoolRun& run, std::ostream& log) {
  const std::string& run_id = run.run_id();
  absl::StatusOr<std::vector<v1::StepSample>> samples = run.ReadSamples();
  absl::StatusOr<absl::optional<v1::BenchmarkRun>> summary = run.ReadRun();
  if (!samples.ok() || !summary.ok()) {
    const absl::Status& bad =
        samples.ok() ? summary.status() : samples.status();
    log << "run " << run_id << ": " << bad.message() << "\n";
    (void)run.Reject(std::string(bad.message()));
    return RunFate::kRejected;
  }
  int64_t committed = -1;
  // The run's team, when it has a summary to say it.
  set_stream_team(summary->has_value() ? (*summary)->team() : "");
  grpc::Status status = SyncSamples(run_id, *samples, true, &committed);
  if (!status.ok()) return FateOfRefusal(run_id, "samples", status, run, log);
  if (const int64_t last = LastStep(*samples); committed < last) {
    // The service commits steps without gaps: a step missing from the spool
    // holds the rest back, and no retry brings it back.
    log << "run " << run_id << ": kept in the spool: step " << committed + 1
        << " is missing from its samples (only steps through " << committed
        << " of " << last << " are committed)\n";
    return RunFate::kKept;
  }
  if (!summary->has_value()) {
    log << "run " << run_id << ": " << samples->size()
        << " samples uploaded; no summary (its recorder did not finish)\n";
    return RunFate::kIncomplete;
  }
  v1::UploadBenchmarkRunResponse ack;
  status = UploadRun(**summary, &ack);
  if (!status.ok()) return FateOfRefusal(run_id, "summary", status, run, log);
  log << "run " << run_id << ": uploaded (" << samples->size() << " samples, "
      << ack.gpu_hours() << " GPU-hours, recipe key " << ack.recipe_key()
      << ")\n";
  if (absl::Status removed = run.Remove(); !removed.ok()) {
    log << "run " << run_id << ": " << removed.message() << "\n";
  }
  return RunFate::kUploaded;
}

FlushReport Uploader::FlushSpool(const std::string& spool_dir,
                                 std::ostream& log) {
  FlushReport report;
  if (absl::Status usable = CheckSpoolDir(spool_dir); !usable.ok()) {
    report.spool_refused = std::string(usable.message());
    log << "placement-agent: " << usable.message() << "\n";
    return report;
  }
  const std::vector<std::string> runs = ListSpooledRuns(spool_dir);
  for (size_t r = 0; r < runs.size(); ++r) {
    absl::StatusOr<std::unique_ptr<SpoolRun>> spooled =
        SpoolRun::Open(spool_dir, runs[r]);
    if (!spooled.ok()) {
      if (absl::IsUnavailable(spooled.status())) {
        report.Count(runs[r], RunFate::kInProgress);
      }
      continue;
    }
    const RunFate fate = FlushRun(**spooled, log);
    report.Count(runs[r], fate);
    if (fate == RunFate::kLeft) {
      // The service is out of reach: the runs after this one wait too.
      for (size_t rest = r + 1; rest < runs.size(); ++rest) {
        report.Count(runs[rest], RunFate::kLeft);
      }
      return report;
    }
  }
  return report;
}

}  // namespace placement::agent
