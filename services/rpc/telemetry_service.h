#ifndef PLACEMENT_SERVICES_RPC_TELEMETRY_SERVICE_H_
#define PLACEMENT_SERVICES_RPC_TELEMETRY_SERVICE_H_

#include <functional>

#include "absl/time/time.h"
#include "placement/v1/telemetry.grpc.pb.h"
#include "services/auth/auth.h"
#include "services/rpc/sample_stream_reactor.h"
#include "storage/session/db_workers.h"
#include "storage/stores/run_store.h"

namespace placement::services {

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
