#ifndef PLACEMENT_SERVICES_TELEMETRY_SERVICE_H_
#define PLACEMENT_SERVICES_TELEMETRY_SERVICE_H_

#include <functional>

#include "placement/v1/telemetry.grpc.pb.h"
#include "storage/db_workers.h"
#include "storage/run_store.h"

namespace placement::services {

// placement.v1.TelemetryService: measured runs and their per-step samples.
//
// Every request is validated before anything is written; a refused upload
// changes nothing. Database work runs on the workers; a sample stream reads
// its next message only after the previous one is committed, so gRPC's flow
// control, not a buffer, absorbs a fast sender.
class TelemetryService final : public v1::TelemetryService::CallbackService {
 public:
  // Called on a worker thread after each upload is stored or acknowledged.
  using RunObserver = std::function<void(const storage::RunAck&)>;

  explicit TelemetryService(storage::DbWorkers& workers,
                            RunObserver on_run_stored = nullptr)
      : workers_(workers), on_run_stored_(std::move(on_run_stored)) {}

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

 private:
  storage::DbWorkers& workers_;
  RunObserver on_run_stored_;
};

}  // namespace placement::services

#endif  // PLACEMENT_SERVICES_TELEMETRY_SERVICE_H_
