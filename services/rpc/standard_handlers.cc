// PlacementService's standards: WriteStandard, GetStandard, ListStandards,
// RetireStandard (docs/CORE.md, Standards).

#include <algorithm>
#include <iostream>
#include <optional>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "common/proto_bytes.h"
#include "common/uuid.h"
#include "core/evidence/pool_reliability.h"
#include "core/plan/standard.h"
#include "core/precondition_violation.h"
#include "services/api/bake_off_convert.h"
#include "services/api/grpc_status.h"
#include "services/api/page_token.h"
#include "services/api/recipe_convert.h"
#include "services/api/run_validation.h"
#include "services/api/standard_convert.h"
#include "services/rpc/admit.h"
#include "services/rpc/db_call.h"
#include "services/rpc/placement_service.h"
#include "services/rpc/plan_readings.h"
#include "services/rpc/readings.h"
#include "storage/standard_store.h"

namespace placement::services {
namespace {

using core::PreconditionViolation;

const v1::PlacementCandidate* CandidateOn(const v1::PlacePlanResponse& plan,
                                          const std::string& pool) {
  for (const v1::PlacementCandidate& c : plan.candidates()) {
    if (c.pool() == pool) return &c;
  }
  return nullptr;
}

const v1::BakeOffPoolVerdict* VerdictOn(
    const v1::GetBakeOffStatusResponse& status, const std::string& pool) {
  for (const v1::BakeOffPoolVerdict& p : status.verdict().pools()) {
    if (p.pool() == pool) return &p;
  }
  return nullptr;
}

// What the plan's evidence lacks for a standard on `pool`: its bake-off
// complete, the pool not a miss in it, the eval requirement met.
std::vector<PreconditionViolation> MissingEvidence(
    const v1::GetBakeOffStatusResponse& status,
    const std::optional<core::EvalStatus>& eval, const std::string& pool) {
  std::vector<PreconditionViolation> missing;
  const std::string plan = absl::StrCat("plans/", status.plan_id());
  if (!status.complete()) {
    missing.push_back({"BAKE_OFF_INCOMPLETE", plan,
                       absl::StrCat("the plan's bake-off is ",
                                    status.progress(), ": ", status.reason())});
  }
  if (const v1::BakeOffPoolVerdict* judged = VerdictOn(status, pool);
      judged != nullptr && !judged->eligible() &&
      !(judged->has_eval_status() && !judged->eval_status().met())) {
    missing.push_back(
        {"POOL_FAILED_BAKE_OFF", absl::StrCat("pools/", pool),
         absl::StrCat(pool, " did not pass the bake-off (",
                      absl::StrJoin(judged->findings(), "; "), ")")});
  }
  if (eval.has_value() && !eval->met) {
    missing.push_back(
        {"EVAL_MISSING", absl::StrCat("recipe_keys/", eval->recipe_key),
         absl::StrCat("no eval of ", eval->recipe_key, " on ",
                      eval->serving_sku_id, " in ",
                      core::PrecisionName(eval->serving_precision),
                      " is stored (the plan's eval requirement)")});
  }
  return missing;
}

// The pool's failure rate for the candidate's layout on `snapshot` now (the
// bake-off's runs included once the snapshot has them): what a later plan's
// rate is compared with.
core::FailureRate FailureRateNow(const CatalogSnapshot& snapshot,
                                 const v1::PlacementCandidate& candidate) {
  const int gpus = std::max(1, candidate.gpu_count());
  return core::EstimateFailureRate(
      snapshot.PoolReliability(candidate.pool(), false),
      snapshot.PoolReliability(candidate.pool(), true), gpus > 1,
      candidate.startup_gpu_hours() / gpus);
}

// The standard a valid write asks for, from the plan that proves it.
absl::StatusOr<storage::StandardRecord> StandardOf(
    const v1::WriteStandardRequest& request, const BakeOffReadings& readings,
    const v1::GetBakeOffStatusResponse& status,
    const v1::PlacementCandidate& candidate,
    const core::FailureRate& failure_rate, const std::string& written_by) {
  const core::Recipe plan_recipe = RecipeFromProto(readings.plan.recipe());
  core::Recipe recipe_class = core::DefaultRecipeClass(plan_recipe);
  if (request.has_recipe_class()) {
    recipe_class = core::RecipeClassOf(RecipeFromProto(request.recipe_class()));
    if (!core::InRecipeClass(plan_recipe, recipe_class)) {
      return core::InvalidArgumentWithViolations(
          {{"recipe_class",
            "the plan's recipe is not in this class: its bake-off proves "
            "nothing about it"}});
    }
  }
  storage::StandardRecord record;
  core::Standard& s = record.standard;
  s.standard_id = common::NewTimeOrderedUuid(absl::Now());
  s.request_id = request.request_id();
  s.pool_name = candidate.pool();
  s.sku_id = candidate.sku();
  s.plan_id = readings.plan_id;
  s.written_by = written_by;
  s.team = request.team();
  s.reason = request.reason();
  if (const v1::BakeOffPoolVerdict* judged =
          VerdictOn(status, candidate.pool())) {
    s.cost_micros_per_successful_step_band = {
        judged->cost_micros_per_successful_step_band().low(),
        judged->cost_micros_per_successful_step_band().high()};
  }
  s.failure_rate_per_hour_band = failure_rate.per_hour_band;
  record.recipe_class_proto =
      common::DeterministicBytes(RecipeToProto(recipe_class));
  record.model = recipe_class.model;
  record.fingerprint = WriteStandardFingerprint(request);
  return record;
}

}  // namespace

std::string PlacementService::CallerName(
    const grpc::CallbackServerContext& context) {
  std::optional<Principal> caller = auth_.Caller(context);
  if (!caller.has_value()) return "anonymous";
  return absl::StrCat(caller->name, " (", RoleName(caller->role), ")");
}

void PlacementService::PublishStandardChange(storage::DbSession& session) {
  if (absl::Status reloaded = evidence_.ReloadWith(session); !reloaded.ok()) {
    std::cerr << "placementd: standard committed; the cache re-reads it "
                 "later (immediate reload failed: "
              << reloaded << ")\n";
  }
  evidence_.NoteLocalChange();
}

grpc::ServerUnaryReactor* PlacementService::WriteStandard(
    grpc::CallbackServerContext* context,
    const v1::WriteStandardRequest* request,
    v1::WriteStandardResponse* response) {
  if (absl::Status admitted = Admit(auth_, *context, *request);
      !admitted.ok()) {
    return FinishNow(context, ToGrpcStatus(admitted));
  }
  if (core::FieldViolations violations = ValidateWriteStandard(*request);
      !violations.empty()) {
    return FinishNow(context, InvalidArgument(violations));
  }
  std::shared_ptr<const CatalogSnapshot> snapshot = evidence_.Current();
  if (snapshot == nullptr) {
    return FinishNow(
        context,
        ToGrpcStatus(absl::UnavailableError("pools are not loaded yet")));
  }
  return FinishOnDbWorker(
      context, workers_,
      [this, request, response, snapshot = std::move(snapshot),
       written_by = CallerName(*context),
       plan_id = absl::AsciiStrToLower(request->plan_id())](
          storage::DbSession& session) -> absl::Status {
        absl::StatusOr<BakeOffReadings> readings =
            ReadBakeOff(session, plan_id);
        if (!readings.ok()) return readings.status();
        const v1::PlacementCandidate* candidate =
            CandidateOn(readings->plan, request->pool());
        if (candidate == nullptr) {
          return core::FailedPreconditionWithViolations(
              {{"POOL_NOT_A_CANDIDATE", absl::StrCat("pools/", request->pool()),
                absl::StrCat(request->pool(), " was not a candidate of plan ",
                             plan_id,
                             ": its bake-off proves nothing about "
                             "it")}});
        }
        v1::GetBakeOffStatusResponse status;
        if (absl::Status s = BakeOffStatusToProto(*readings, snapshot->pools,
                                                  snapshot->skus, &status);
            !s.ok()) {
          return s;
        }
        absl::StatusOr<std::optional<core::EvalStatus>> eval =
            EvalFor(session, readings->plan, candidate->recipe_key());
        if (!eval.ok()) return eval.status();
        std::vector<PreconditionViolation> missing =
            MissingEvidence(status, *eval, request->pool());
        if (!missing.empty()) {
          return core::FailedPreconditionWithViolations(missing);
        }
        absl::StatusOr<storage::StandardRecord> record =
            StandardOf(*request, *readings, status, *candidate,
                       FailureRateNow(*snapshot, *candidate), written_by);
        if (!record.ok()) return record.status();
        absl::StatusOr<storage::StandardRecord> stored =
            storage::InsertStandard(session, *record);
        if (!stored.ok()) return stored.status();
        PublishStandardChange(session);
        StandardToProto(*stored, response->mutable_standard());
        return absl::OkStatus();
      });
}

grpc::ServerUnaryReactor* PlacementService::GetStandard(
    grpc::CallbackServerContext* context, const v1::GetStandardRequest* request,
    v1::GetStandardResponse* response) {
  if (absl::Status admitted = Admit(auth_, *context, *request);
      !admitted.ok()) {
    return FinishNow(context, ToGrpcStatus(admitted));
  }
  if (!IsUuid(request->standard_id())) {
    return FinishNow(context,
                     InvalidArgument({{"standard_id", "must be a UUID"}}));
  }
  return FinishOnDbWorker(
      context, workers_,
      [response, id = absl::AsciiStrToLower(request->standard_id())](
          storage::DbSession& session) -> absl::Status {
        absl::StatusOr<storage::StandardRecord> stored =
            storage::GetStandard(session, id);
        if (!stored.ok()) return stored.status();
        StandardToProto(*stored, response->mutable_standard());
        return absl::OkStatus();
      });
}

grpc::ServerUnaryReactor* PlacementService::ListStandards(
    grpc::CallbackServerContext* context,
    const v1::ListStandardsRequest* request,
    v1::ListStandardsResponse* response) {
  if (absl::Status admitted = Admit(auth_, *context, *request);
      !admitted.ok()) {
    return FinishNow(context, ToGrpcStatus(admitted));
  }
  absl::StatusOr<PageRequest> page =
      ParsePageRequest(request->page_size(), request->page_token());
  if (!page.ok()) return FinishNow(context, ToGrpcStatus(page.status()));
  storage::StandardCursor cursor;
  if (!page->after.empty()) {
    absl::StatusOr<TimeIdKey> key = ParseTimeIdKey(page->after);
    if (!key.ok()) return FinishNow(context, ToGrpcStatus(key.status()));
    cursor = {key->time, key->id};
  }
  return FinishOnDbWorker(
      context, workers_,
      [response, cursor, page_size = page->size,
       include_retired = request->include_retired()](
          storage::DbSession& session) -> absl::Status {
        absl::StatusOr<v1::ListStandardsResponse> standards =
            ReadStandards(session, cursor, page_size, include_retired);
        if (!standards.ok()) return standards.status();
        *response = *std::move(standards);
        return absl::OkStatus();
      });
}

grpc::ServerUnaryReactor* PlacementService::RetireStandard(
    grpc::CallbackServerContext* context,
    const v1::RetireStandardRequest* request,
    v1::RetireStandardResponse* response) {
  if (absl::Status admitted = Admit(auth_, *context, *request);
      !admitted.ok()) {
    return FinishNow(context, ToGrpcStatus(admitted));
  }
  if (core::FieldViolations violations = ValidateRetireStandard(*request);
      !violations.empty()) {
    return FinishNow(context, InvalidArgument(violations));
  }
  return FinishOnDbWorker(
      context, workers_,
      [this, response, reason = request->reason(),
       retired_by = CallerName(*context),
       id = absl::AsciiStrToLower(request->standard_id())](
          storage::DbSession& session) -> absl::Status {
        absl::StatusOr<storage::StandardRecord> stored =
            storage::RetireStandard(session, id, retired_by, reason);
        if (!stored.ok()) return stored.status();
        PublishStandardChange(session);
        StandardToProto(*stored, response->mutable_standard());
        return absl::OkStatus();
      });
}

}  // namespace placement::services
