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
#include "core/plan/bake_off_verdict.h"
#include "core/plan/standard.h"
#include "core/plan/standard_proof.h"
#include "core/precondition_violation.h"
#include "services/api/bake_off_convert.h"
#include "services/api/grpc_status.h"
#include "services/api/page_token.h"
#include "services/api/recipe_convert.h"
#include "services/api/run_validation.h"
#include "services/api/standard_convert.h"
#include "services/auth/team_access.h"
#include "services/rpc/admit.h"
#include "services/rpc/db_call.h"
#include "services/rpc/placement_service.h"
#include "services/rpc/plan_readings.h"
#include "services/rpc/readings.h"
#include "storage/stores/standard_store.h"

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

const core::BakeOffPoolVerdict* VerdictOn(const core::BakeOffVerdict& verdict,
                                          const std::string& pool) {
  for (const core::BakeOffPoolVerdict& p : verdict.pools) {
    if (p.pool_name == pool) return &p;
  }
  return nullptr;
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
    const core::BakeOffVerdict& verdict,
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
  if (const core::BakeOffPoolVerdict* judged =
          VerdictOn(verdict, candidate.pool())) {
    s.cost_micros_per_successful_step_band =
        judged->cost_micros_per_successful_step_band;
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

namespace {

// A retry of a committed write answers what the first answered: true when
// `request`'s request_id already wrote a standard (and `response` holds it).
absl::StatusOr<bool> AnswerRetriedWrite(storage::DbSession& session,
                                        const v1::WriteStandardRequest& request,
                                        const std::optional<Principal>& caller,
                                        v1::WriteStandardResponse* response) {
  absl::StatusOr<std::optional<storage::StandardRecord>> written =
      storage::FindStandardByRequestId(session, request.request_id());
  if (!written.ok()) return written.status();
  if (!written->has_value()) return false;
  // Idempotency keys are fleet-wide: another team's is not told.
  if (absl::Status s =
          CheckTeam(caller, (*written)->standard.team,
                    absl::StrCat("request_id ", request.request_id()));
      !s.ok()) {
    return s;
  }
  if ((*written)->fingerprint != WriteStandardFingerprint(request)) {
    return absl::AlreadyExistsError(absl::StrCat(
        "request_id ", request.request_id(), " already wrote standard ",
        (*written)->standard.standard_id, " with other content"));
  }
  StandardToProto(**written, response->mutable_standard());
  return true;
}

}  // namespace

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
  // Whose plans it applies to: a team of the caller's, or (unbound callers
  // only) the whole fleet's.
  std::optional<Principal> caller = auth_.Caller(*context);
  absl::StatusOr<std::string> team =
      TeamOfRequest(caller, request->team(), "the standard");
  if (!team.ok()) return FinishNow(context, ToGrpcStatus(team.status()));
  std::shared_ptr<const CatalogSnapshot> snapshot = evidence_.Current();
  if (snapshot == nullptr) {
    return FinishNow(
        context,
        ToGrpcStatus(absl::UnavailableError("pools are not loaded yet")));
  }
  return FinishOnDbWorker(
      context, workers_,
      [this, request, response, snapshot = std::move(snapshot),
       written_by = CallerName(*context), caller = std::move(caller),
       team = *std::move(team),
       plan_id = absl::AsciiStrToLower(request->plan_id())](
          storage::DbSession& session) -> absl::Status {
        absl::StatusOr<bool> retry =
            AnswerRetriedWrite(session, *request, caller, response);
        if (!retry.ok() || *retry) return retry.status();
        absl::StatusOr<BakeOffReadings> readings =
            ReadBakeOff(session, plan_id, caller, request->pool());
        if (!readings.ok()) return readings.status();
        absl::StatusOr<std::vector<core::BakeOffUpload>> uploads =
            UploadsOf(*readings);
        if (!uploads.ok()) return uploads.status();
        const core::RecordedPlan plan = RecordedPlanOn(*snapshot, *readings);
        std::vector<PreconditionViolation> missing =
            core::MissingProof(plan, *uploads, request->pool());
        if (!missing.empty()) {
          return core::FailedPreconditionWithViolations(missing);
        }
        const v1::PlacementCandidate* candidate =
            CandidateOn(readings->plan, request->pool());
        absl::StatusOr<storage::StandardRecord> record = StandardOf(
            *request, *readings, core::JudgeBakeOff(plan, *uploads), *candidate,
            FailureRateNow(*snapshot, *candidate), written_by);
        if (!record.ok()) return record.status();
        record->standard.team = team;
        absl::StatusOr<storage::StandardRecord> stored =
            storage::InsertStandard(session, *record);
        if (!stored.ok()) return stored.status();
        // A retry under a key another caller used answers only what this
        // caller may read.
        if (absl::Status s = CheckTeamOrFleet(
                caller, stored->standard.team,
                absl::StrCat("standard ", stored->standard.standard_id));
            !s.ok()) {
          return s;
        }
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
      [response, id = absl::AsciiStrToLower(request->standard_id()),
       caller = auth_.Caller(*context)](
          storage::DbSession& session) -> absl::Status {
        absl::StatusOr<storage::StandardRecord> stored =
            storage::GetStandard(session, id);
        if (!stored.ok()) return stored.status();
        if (absl::Status s = CheckTeamOrFleet(caller, stored->standard.team,
                                              absl::StrCat("standard ", id));
            !s.ok()) {
          return s;
        }
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
       include_retired = request->include_retired(),
       caller = auth_.Caller(*context)](
          storage::DbSession& session) -> absl::Status {
        absl::StatusOr<v1::ListStandardsResponse> standards =
            ReadStandards(session, cursor, page_size, include_retired, caller);
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
       retired_by = CallerName(*context), caller = auth_.Caller(*context),
       id = absl::AsciiStrToLower(request->standard_id())](
          storage::DbSession& session) -> absl::Status {
        // Its team never changes: checked before the retirement, on its
        // own read. A fleet-wide one is retired by an unbound caller only.
        absl::StatusOr<storage::StandardRecord> current =
            storage::GetStandard(session, id);
        if (!current.ok()) return current.status();
        if (absl::Status s = CheckTeam(caller, current->standard.team,
                                       absl::StrCat("standard ", id));
            !s.ok()) {
          return s;
        }
        absl::StatusOr<storage::StandardRecord> stored =
            storage::RetireStandard(session, id, retired_by, reason);
        if (!stored.ok()) return stored.status();
        PublishStandardChange(session);
        StandardToProto(*stored, response->mutable_standard());
        return absl::OkStatus();
      });
}

}  // namespace placement::services
