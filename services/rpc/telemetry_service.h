#ifndef PLACEMENT_SERVICES_RPC_TELEMETRY_SERVICE_H_
#define PLACEMENT_SERVICES_RPC_TELEMETRY_SERVICE_H_

#include <functional>
#include <thread>

#include "absl/container/flat_hash_set.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "placement/v1/telemetry.grpc.pb.h"
#include "services/auth/auth.h"
#include "storage/session/db_workers.h"
#include "storage/stores/run_store.h"

namespace placement::services {

class SampleStreamReactor;

// Test only: when set, runs on the database worker that resumes a paused
// sample stream read, after it decided to read and before the read is
// issued, so that a test can race a concurrent finish there. Null (the
// default) outside tests.
using StreamResumeHook = void (*)();
void SetStreamResumeHookForTesting(StreamResumeHook hook);

// The open sample streams, and a reaper that closes those idle for longer
// than the timeout.
class SampleStreamRegistry {
 public:
  explicit SampleStreamRegistry(absl::Duration idle_timeout);
  ~SampleStreamRegistry();

  void Add(SampleStreamReactor* stream);
  void Remove(SampleStreamReactor* stream);

 private:
  void Reap();

  const absl::Duration idle_timeout_;
  absl::Mutex mu_;
  absl::flat_hash_set<SampleStreamReactor*> streams_ ABSL_GUARDED_BY(mu_);
  absl::Notification stop_;
  std::thread reaper_;
};

// placement.v1.TelemetryService: measured runs and their per-step samples.
//
// Every request is validated before anything is written; a refused upload
// changes nothing. Database work runs on the workers; a sample stream
// gathers the messages that arrive while one transaction is written into the
// next (up to a bound of samples), then stops reading until that commits, so
// gRPC's flow control, not an unbounded buffer, absorbs a fast sender.
class TelemetryService final : public v1::TelemetryService::CallbackService {
 public:
  // Called on a worker thread after each upload is stored or acknowledged.
  using RunObserver = std::function<void(const storage::RunAck&)>;

  // A sample stream that receives nothing for `stream_idle_timeout` is
  // closed with DEADLINE_EXCEEDED.
  TelemetryService(storage::DbWorkers& workers, Authorizer& auth,
                   absl::Duration stream_idle_timeout,
                   RunObserver on_run_stored = nullptr)
      : workers_(workers),
        auth_(auth),
        on_run_stored_(std::move(on_run_stored)),
        streams_(stream_idle_timeout) {}

  grpc::ServerUnaryReactor* UploadBenchmarkRun(
      grpc::CallbackServerContext* context,
      const v1::UploadBenchmarkRunRequest* request,
      v1::UploadBenchmarkRunResponse* response) override;
  grpc::ServerReadReactor<v1::StreamStepSamplesRequest>* StreamStepSamples(
      grpc::CallbackServerContext* context,
      v1::StreamStepSamplesResponse* response) override;
  grpc::ServerUnaryReactor* GetSampleProgress(
      grpc::CallbackServerContext* context,
      const v1::GetSampleProgressRequest* request,
      v1::GetSampleProgressResponse* response) override;
  grpc::ServerUnaryReactor* GetBenchmarkRun(
      grpc::CallbackServerContext* context,
      const v1::GetBenchmarkRunRequest* request,
      v1::GetBenchmarkRunResponse* response) override;
  grpc::ServerUnaryReactor* ListBenchmarkRuns(
      grpc::CallbackServerContext* context,
      const v1::ListBenchmarkRunsRequest* request,
      v1::ListBenchmarkRunsResponse* response) override;
  grpc::ServerUnaryReactor* ListEvalResults(
      grpc::CallbackServerContext* context,
      const v1::ListEvalResultsRequest* request,
      v1::ListEvalResultsResponse* response) override;

 private:
  storage::DbWorkers& workers_;
  Authorizer& auth_;
  RunObserver on_run_stored_;
  SampleStreamRegistry streams_;
};

}  // namespace placement::services

#endif  // PLACEMENT_SERVICES_RPC_TELEMETRY_SERVICE_H_
