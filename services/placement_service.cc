#include "services/placement_service.h"

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "core/planner.h"
#include "core/rules.h"
#include "services/catalog_convert.h"
#include "services/db_call.h"
#include "services/proto_bytes.h"
#include "services/grpc_status.h"
#include "services/placement_convert.h"
#include "services/run_validation.h"
#include "services/uuid.h"
#include "storage/plan_store.h"

namespace placement::services {
namespace {

// Evidence older than this is called out in the plan's warnings.
constexpr absl::Duration kStaleEvidence = absl::Seconds(10);
constexpr int kMaxAllowedPools = 1000;
constexpr int kMaxRequiredLabels = 32;

// Checks the request shape beyond what core::ValidatePlanRequest checks, and
// resolves the serving SKU against the catalog.
core::FieldViolations ValidateRequest(const v1::PlacePlanRequest& request,
                                      const core::PlanRequest& plan_request,
                                      const std::vector<core::GpuSku>& skus,
                                      core::PlanRequest* resolved) {
  core::FieldViolations violations;
  if (!request.has_recipe()) violations.push_back({"recipe", "is required"});
  core::FieldViolations core_violations =
      core::ValidatePlanRequest(plan_request);
  violations.insert(violations.end(), core_violations.begin(),
                    core_violations.end());
  if (request.team().size() > kMaxIdLength) {
    violations.push_back(
        {"team", absl::StrCat("at most ", kMaxIdLength, " characters")});
  }
  if (request.request_id().size() > kMaxIdLength) {
    violations.push_back(
        {"request_id", absl::StrCat("at most ", kMaxIdLength, " characters")});
  }
  if (request.constraints().allowed_pools_size() > kMaxAllowedPools) {
    violations.push_back({"constraints.allowed_pools",
                          absl::StrCat("at most ", kMaxAllowedPools)});
  }
  if (request.constraints().required_labels_size() > kMaxRequiredLabels) {
    violations.push_back({"constraints.required_labels",
                          absl::StrCat("at most ", kMaxRequiredLabels)});
  }
  if (request.has_serving()) {
    absl::StatusOr<core::GpuSku> sku =
        core::ResolveSku(request.serving().sku(), skus);
    if (!sku.ok()) {
      violations.push_back(
          {"serving.sku", std::string(sku.status().message())});
    } else {
      resolved->serving->sku_id = sku->id;
    }
  }
  return violations;
}

storage::PlanRecord AuditRecord(const v1::PlacePlanRequest& request,
                                const v1::PlacePlanResponse& response,
                                const core::PlanResult& result,
                                const core::PlanRequest& plan_request) {
  storage::PlanRecord record;
  record.plan_id = response.plan_id();
  record.request_id = request.request_id();
  record.team = request.team();
  record.recipe_key = result.recipe_key;
  record.objective = ObjectiveName(plan_request.constraints.objective);
  if (!result.candidates.empty()) {
    record.chosen_pool = result.candidates.front().pool_name;
    record.chosen_sku = result.candidates.front().sku_id;
  }
  record.request = DeterministicBytes(request);
  record.response = DeterministicBytes(response);
  for (const core::Candidate& c : result.candidates) {
    record.predictions.push_back(
        {c.pool_name, c.sku_id, c.rank, core::EvidenceBasisName(c.basis),
         c.peak_memory_gb, c.gpu_hours_per_1k_successful_steps / 1000.0});
  }
  return record;
}

bool HasTrainingPool(const std::vector<core::Pool>& pools) {
  for (const core::Pool& pool : pools) {
    if (pool.purpose == core::PoolPurpose::kTraining) return true;
  }
  return false;
}

}  // namespace

grpc::ServerUnaryReactor* PlacementService::PlacePlan(
    grpc::CallbackServerContext* context, const v1::PlacePlanRequest* request,
    v1::PlacePlanResponse* response) {
  core::PlanRequest plan_request = PlanRequestFromProto(*request);
  const std::string objective =
      ObjectiveName(plan_request.constraints.objective);
  std::shared_ptr<const CatalogSnapshot> snapshot = evidence_.Current();
  if (snapshot == nullptr) {
    metrics_.PlanAnswered(objective, "unavailable");
    return FinishNow(context,
                     grpc::Status(grpc::StatusCode::UNAVAILABLE,
                                  "pools and evidence are not loaded yet"));
  }
  core::FieldViolations violations =
      ValidateRequest(*request, plan_request, snapshot->skus, &plan_request);
  if (!violations.empty()) {
    metrics_.PlanAnswered(objective, "invalid");
    return FinishNow(context, InvalidArgument(violations));
  }
  if (!HasTrainingPool(snapshot->pools)) {
    metrics_.PlanAnswered(objective, "no_training_pool");
    return FinishNow(
        context,
        grpc::Status(grpc::StatusCode::FAILED_PRECONDITION,
                     "no training pool exists: create one with "
                     "CatalogService.CreatePool (purpose TRAINING)"));
  }

  // Plans are computed from the snapshot, here, without the database.
  auto plan = [this, snapshot, plan_request, objective](
                  const v1::PlacePlanRequest& request,
                  v1::PlacePlanResponse* response)
      -> absl::StatusOr<core::PlanResult> {
    absl::StatusOr<core::PlanResult> result = core::Plan(
        plan_request, snapshot->pools, snapshot->skus, *snapshot);
    if (!result.ok()) return result.status();
    *response = PlanResultToProto(*result);
    response->set_plan_id(NewUuid());
    TimeToProto(absl::Now(), response->mutable_create_time());
    TimeToProto(snapshot->loaded_at, response->mutable_evidence_time());
    const absl::Duration age = absl::Now() - snapshot->loaded_at;
    if (age > kStaleEvidence) {
      response->add_warnings(absl::StrFormat(
          "stale_evidence: pools and evidence were last read %.0f s ago; the "
          "database may be unreachable",
          absl::ToDoubleSeconds(age)));
    }
    (void)request;
    return result;
  };

  auto record = [this, objective, plan_request](
                    storage::DbSession& session,
                    const v1::PlacePlanRequest& request,
                    v1::PlacePlanResponse* response,
                    const core::PlanResult& result) {
    absl::StatusOr<std::string> stored = storage::InsertPlan(
        session, AuditRecord(request, *response, result, plan_request));
    if (!stored.ok()) {
      // The plan stands without its audit record; the caller is told.
      response->add_warnings(absl::StrCat(
          "not_recorded: the plan could not be recorded (",
          stored.status().message(), "); runs cannot be matched to it"));
    } else if (*stored != DeterministicBytes(*response)) {
      response->ParseFromString(*stored);  // a concurrent twin won
    }
    const bool placed = response->candidates_size() > 0;
    metrics_.PlanAnswered(objective, placed ? "placed" : "no_candidate");
    if (placed) {
      metrics_.CandidateChosen(
          response->candidates(0).sku(),
          v1::EvidenceBasis_Name(response->candidates(0).basis())
              .substr(sizeof("EVIDENCE_BASIS_") - 1));
    }
  };

  if (request->request_id().empty()) {
    absl::StatusOr<core::PlanResult> result = plan(*request, response);
    if (!result.ok()) {
      metrics_.PlanAnswered(objective, "invalid");
      return FinishNow(context, ToGrpcStatus(result.status()));
    }
    return FinishOnDbWorker(
        context, workers_,
        [request, response, record, result = *std::move(result)](
            storage::DbSession& session) -> absl::Status {
          record(session, *request, response, result);
          return absl::OkStatus();
        });
  }
  // With an idempotency key, a retry returns the plan recorded first.
  return FinishOnDbWorker(
      context, workers_,
      [request, response, plan, record](
          storage::DbSession& session) -> absl::Status {
        absl::StatusOr<std::optional<std::string>> existing =
            storage::FindPlanByRequestId(session, request->request_id());
        if (existing.ok() && existing->has_value()) {
          response->ParseFromString(**existing);
          return absl::OkStatus();
        }
        absl::StatusOr<core::PlanResult> result = plan(*request, response);
        if (!result.ok()) return result.status();
        record(session, *request, response, *result);
        return absl::OkStatus();
      });
}

grpc::ServerUnaryReactor* PlacementService::GetPlan(
    grpc::CallbackServerContext* context, const v1::GetPlanRequest* request,
    v1::GetPlanResponse* response) {
  if (!IsUuid(request->plan_id())) {
    return FinishNow(context, InvalidArgument({{"plan_id", "must be a UUID"}}));
  }
  return FinishOnDbWorker(
      context, workers_,
      [response, plan_id = absl::AsciiStrToLower(request->plan_id())](
          storage::DbSession& session) -> absl::Status {
        absl::StatusOr<storage::StoredPlan> stored =
            storage::GetPlan(session, plan_id);
        if (!stored.ok()) return stored.status();
        if (!response->mutable_request()->ParseFromString(stored->request) ||
            !response->mutable_plan()->ParseFromString(stored->response)) {
          return absl::DataLossError("stored plan does not parse");
        }
        return absl::OkStatus();
      });
}

grpc::ServerUnaryReactor* PlacementService::GetPlanAccuracy(
    grpc::CallbackServerContext* context,
    const v1::GetPlanAccuracyRequest* request,
    v1::GetPlanAccuracyResponse* response) {
  const absl::Time from =
      request->has_start_time()
          ? absl::FromUnixSeconds(request->start_time().seconds())
          : absl::InfinitePast();
  const absl::Time to = request->has_end_time()
                            ? absl::FromUnixSeconds(request->end_time().seconds())
                            : absl::InfiniteFuture();
  return FinishOnDbWorker(
      context, workers_,
      [response, from, to](storage::DbSession& session) -> absl::Status {
        absl::StatusOr<std::vector<storage::SkuAccuracyRow>> rows =
            storage::PlanAccuracy(session, from, to);
        if (!rows.ok()) return rows.status();
        for (const storage::SkuAccuracyRow& row : *rows) {
          v1::SkuAccuracy* out = response->add_skus();
          out->set_sku(row.sku_id);
          out->set_runs(row.runs);
          out->set_peak_memory_median_abs_error_pct(
              row.peak_memory_median_abs_error_pct);
          out->set_peak_memory_p90_abs_error_pct(
              row.peak_memory_p90_abs_error_pct);
          out->set_peak_memory_mean_error_pct(row.peak_memory_mean_error_pct);
          out->set_runs_with_successful_steps(row.runs_with_successful_steps);
          out->set_gpu_hours_per_step_median_abs_error_pct(
              row.gpu_hours_per_step_median_abs_error_pct);
          out->set_gpu_hours_per_step_p90_abs_error_pct(
              row.gpu_hours_per_step_p90_abs_error_pct);
          out->set_gpu_hours_per_step_mean_error_pct(
              row.gpu_hours_per_step_mean_error_pct);
        }
        return absl::OkStatus();
      });
}

}  // namespace placement::services
