#ifndef PLACEMENT_TESTS_SUPPORT_API_CLIENT_H_
#define PLACEMENT_TESTS_SUPPORT_API_CLIENT_H_

#include <grpcpp/grpcpp.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "placement/v1/catalog.grpc.pb.h"
#include "placement/v1/placement.grpc.pb.h"
#include "placement/v1/telemetry.grpc.pb.h"

namespace placement::testing {

// One replica of the service as the end-to-end tests drive it: pools through
// CatalogService, evidence through TelemetryService, decisions from
// PlacementService. A failed setup call fails the test.
class ApiClient {
 public:
  explicit ApiClient(const std::shared_ptr<grpc::Channel>& channel);

  void CreatePool(const v1::Pool& pool);

  // A finished run of `recipe` on `pool`: `gpu_hours` of wall time x GPUs,
  // `steps_ok` successful steps (of at least 100 attempted), peaking at
  // `peak_gb` per GPU, ending a minute ago. Returns the acknowledgement.
  v1::UploadBenchmarkRunResponse UploadRun(
      const std::string& pool, const std::string& sku, const v1::Recipe& recipe,
      double gpu_hours, int64_t steps_ok, double peak_gb,
      v1::RunOutcome outcome = v1::RUN_OUTCOME_SUCCEEDED, int retries = 0,
      v1::Offload offload = v1::OFFLOAD_NONE, const std::string& plan_id = "");

  // A run as an agent reports it: `startup_s` of start-up an attempt
  // (retries + 1 of them), then `steps_attempted` steps in all at `step_s`
  // each, of which `steps_succeeded` were kept (all of the last attempt's
  // for a run that succeeded; up to the last checkpoint for one that
  // failed), ending a minute ago; `wall_s`, when set, is the wall time
  // instead.
  struct TimedRun {
    std::string pool;
    std::string sku;
    v1::Recipe recipe;
    int64_t steps_attempted = 0;
    int64_t steps_succeeded = 0;
    double step_s = 1;
    double startup_s = 0;
    double peak_gb = 24;
    v1::RunOutcome outcome = v1::RUN_OUTCOME_SUCCEEDED;
    std::vector<v1::EvalResult> evals;  // export-and-evals it carried
    std::string plan_id;                // the plan it carried out, if any
    v1::Offload offload = v1::OFFLOAD_NONE;
    std::string failure_reason;
    int retries = 0;
    std::vector<v1::RunOutcome> retry_outcomes;
    // Unspecified: NVLINK for several GPUs, NONE for one.
    v1::Interconnect interconnect = v1::INTERCONNECT_UNSPECIFIED;
    double wall_s = 0;
  };
  v1::UploadBenchmarkRunResponse UploadTimedRun(const TimedRun& spec);
  // The service's answer to an upload of `run` as it is (a refusal does not
  // fail the test); the acknowledgement into `response` when given.
  grpc::Status Upload(const v1::BenchmarkRun& run,
                      v1::UploadBenchmarkRunResponse* response = nullptr);
  // The run `spec` describes, with a new run id (uploaded by nothing).
  static v1::BenchmarkRun RunOf(const TimedRun& spec);

  // One page of TelemetryService.ListEvalResults; a failed call fails the
  // test.
  v1::ListEvalResultsResponse ListEvalResults(
      const v1::ListEvalResultsRequest& request);

  grpc::Status Plan(const v1::PlacePlanRequest& request,
                    v1::PlacePlanResponse* response);

  // Plans until `done` holds, for at most `timeout`: pools and evidence reach
  // the replica's memory through NOTIFY shortly after they commit. Fails the
  // test, returning the last answer, when `done` never held.
  v1::PlacePlanResponse PlanUntil(
      const v1::PlacePlanRequest& request,
      const std::function<bool(const v1::PlacePlanResponse&)>& done,
      absl::Duration timeout = absl::Seconds(5));

  v1::PlacementService::Stub& placement() { return *placement_; }

 private:
  std::unique_ptr<v1::CatalogService::Stub> catalog_;
  std::unique_ptr<v1::TelemetryService::Stub> telemetry_;
  std::unique_ptr<v1::PlacementService::Stub> placement_;
};

}  // namespace placement::testing

#endif  // PLACEMENT_TESTS_SUPPORT_API_CLIENT_H_
