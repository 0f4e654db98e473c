#ifndef PLACEMENT_CLIENTS_AGENT_UPLOADER_H_
#define PLACEMENT_CLIENTS_AGENT_UPLOADER_H_

#include <grpcpp/grpcpp.h>

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <ostream>
#include <set>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "placement/v1/telemetry.grpc.pb.h"

namespace placement::agent {

class SpoolRun;

// How the agent reaches placementd: TLS when a CA file is given (else
// plaintext), and `authorization: Bearer <token>` on every call when a
// token is configured.
class Connection {
 public:
  // `ca_file` empty: insecure. InvalidArgument if it cannot be read.
  static absl::StatusOr<Connection> Make(const std::string& address,
                                         const std::string& token,
                                         const std::string& ca_file);

  // A context with a deadline `timeout` from now and the bearer token.
  std::unique_ptr<grpc::ClientContext> Context(
      std::chrono::milliseconds timeout = std::chrono::seconds(15)) const;

  const std::shared_ptr<grpc::Channel>& channel() const { return channel_; }
  const std::string& address() const { return address_; }

 private:
  std::string address_;
  std::string token_;
  std::shared_ptr<grpc::Channel> channel_;
};

// The bearer token: --token_file when given, else $PLACEMENT_TOKEN, else
// the file named by $PLACEMENT_TOKEN_FILE, else ~/.config/placement/token
// when it exists; "" for none. NotFound when a named file cannot be read.
absl::StatusOr<std::string> ResolveToken(const std::string& token_file_flag);

// Retries of calls that failed with a status meaning "try again"
// (UNAVAILABLE, DEADLINE_EXCEEDED, RESOURCE_EXHAUSTED, ABORTED): up to
// `attempts` calls, sleeping a jittered, doubling delay in between.
struct Backoff {
  int attempts = 6;
  absl::Duration initial = absl::Milliseconds(250);
  absl::Duration max = absl::Seconds(10);

  // The delay before retry number `retry` (0-based): uniformly random in
  // [d/2, d] with d = min(max, initial * 2^retry).
  absl::Duration Delay(int retry) const;
};

bool IsRetryable(const grpc::Status& status);

// Whether the service refused the run itself (INVALID_ARGUMENT, or
// ALREADY_EXISTS: the same run id with other content), so that no retry of
// the same bytes can ever succeed. Every other refusal (a revoked token, a
// server fault, an old server) says nothing about the run: it stays spooled.
bool RefusesTheRun(const grpc::Status& status);

// What became of one spooled run in a flush.
enum class RunFate {
  kUploaded,    // acknowledged and removed from the spool
  kLeft,        // kept: the service could not be reached
  kRejected,    // refused as invalid, moved to rejected/
  kKept,        // kept: refused for a reason that is not the run's (token,
                // server fault), or a sample is missing from its spool
  kInProgress,  // locked by a recorder still running
  kIncomplete,  // no summary (its recorder died); samples sent
};
const char* RunFateName(RunFate fate);

// What a flush did.
struct FlushReport {
  int uploaded = 0;
  int left = 0;
  int rejected = 0;
  int kept = 0;
  int in_progress = 0;
  int incomplete = 0;
  std::map<std::string, RunFate> runs;  // by run id, the runs it tried
  std::string spool_refused;            // why the spool itself was not read

  void Count(const std::string& run_id, RunFate fate);
  // 2 when the spool was refused, else 3 when a run is left for an
  // unreachable service, else 4 when one is kept for a refusal that is not
  // the run's, else 1 when one was rejected.
  int exit_code() const {
    if (!spool_refused.empty()) return 2;
    return left > 0 ? 3 : kept > 0 ? 4 : rejected > 0 ? 1 : 0;
  }
};

// Uploads measurements, idempotently: samples resume after the service's
// committed progress, and a summary re-sent is acknowledged as the original.
class Uploader {
 public:
  Uploader(Connection connection, Backoff backoff);

  // Streams the samples whose step is after GetSampleProgress's committed
  // step (the service commits steps from 0 without gaps) and sets
  // `*committed`.
  // `retry`: back off and retry retryable failures.
  grpc::Status SyncSamples(const std::string& run_id,
                           const std::vector<v1::StepSample>& samples,
                           bool retry, int64_t* committed);

  // The team the streams of SyncSamples name (StreamStepSamplesRequest.team):
  // the run's --team; "" (the default) lets the service take the token's.
  void set_stream_team(std::string team) { stream_team_ = std::move(team); }

  // UploadBenchmarkRun, with retries.
  grpc::Status UploadRun(const v1::BenchmarkRun& run,
                         v1::UploadBenchmarkRunResponse* response);

  // Uploads every spooled run in `spool_dir` (samples first, then the
  // summary) and removes each once acknowledged. Stops at the first run the
  // service cannot be reached for; a run it cannot complete for any other
  // reason is reported and skipped. Progress lines go to `log`.
  FlushReport FlushSpool(const std::string& spool_dir, std::ostream& log);

  const Connection& connection() const { return connection_; }

  // Cancels this uploader's call in flight, from any thread, and fails
  // every later call at once with CANCELLED: what frees a thread stuck in a
  // sample stream the service never answers.
  void Cancel();

  // Calls started from now on end by `give_up_at` (monotonic) at the
  // latest, and no retry waits past it: what bounds the uploads of an
  // agent told to stop before its job is killed.
  void GiveUpAt(std::chrono::steady_clock::time_point give_up_at);

 private:
  // What Cancel and GiveUpAt change, shared by the calls of every thread.
  struct CallControl {
    std::mutex mu;
    bool cancelled = false;
    std::optional<std::chrono::steady_clock::time_point> give_up_at;
    std::set<grpc::ClientContext*> in_flight;
  };
  // A call's context, registered with CallControl until it is destroyed;
  // null when the uploader was cancelled.
  class TrackedContext {
   public:
    TrackedContext(std::shared_ptr<CallControl> control,
                   const Connection& connection,
                   std::chrono::milliseconds timeout);
    ~TrackedContext();
    TrackedContext(const TrackedContext&) = delete;
    TrackedContext& operator=(const TrackedContext&) = delete;
    grpc::ClientContext* get() const { return context_.get(); }

   private:
    std::shared_ptr<CallControl> control_;
    std::unique_ptr<grpc::ClientContext> context_;
  };

  grpc::Status SyncOnce(const std::string& run_id,
                        const std::vector<v1::StepSample>& samples,
                        int64_t* committed);
  // One spooled run, opened and locked.
  RunFate FlushRun(SpoolRun& run, std::ostream& log);
  // Sleeps the backoff before retry `retry` (0-based); false, without
  // sleeping, when the uploader was cancelled or the sleep would end past
  // its give-up time.
  bool SleepBeforeRetry(int retry) const;

  Connection connection_;
  Backoff backoff_;
  std::unique_ptr<v1::TelemetryService::Stub> telemetry_;
  std::shared_ptr<CallControl> control_ = std::make_shared<CallControl>();
  std::string stream_team_;
};

}  // namespace placement::agent

#endif  // PLACEMENT_CLIENTS_AGENT_UPLOADER_H_
