#include "services/rpc/placement_service.h"

#include <grpcpp/support/proto_buffer_reader.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <iostream>
#include <optional>
#include <utility>

#include "absl/random/distributions.h"
#include "absl/random/random.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "common/proto_bytes.h"
#include "common/proto_time.h"
#include "common/sha256.h"
#include "common/uuid.h"
#include "core/plan/plan_with_time.h"
#include "core/plan/planner.h"
#include "core/plan/rules.h"
#include "core/plan/standard.h"
#include "services/api/accuracy_convert.h"
#include "services/api/bake_off_convert.h"
#include "services/api/catalog_convert.h"
#include "services/api/grpc_status.h"
#include "services/api/placement_convert.h"
#include "services/api/run_validation.h"
#include "services/auth/team_access.h"
#include "services/plan/plan_response_bytes.h"
#include "services/rpc/admit.h"
#include "services/rpc/db_call.h"
#include "services/rpc/plan_admission.h"
#include "services/rpc/plan_on_snapshot.h"
#include "services/rpc/plan_readings.h"
#include "services/rpc/readings.h"
#include "storage/stores/plan_store.h"

namespace placement::services {
namespace {

// Evidence older than this is called out in the plan's warnings.
constexpr absl::Duration kStaleEvidence = absl::Seconds(10);
// The longest a plan waits for its replica's evidence to include the uploads
// it must see (this replica's acknowledged ones, min_evidence_version).
constexpr absl::Duration kMaxEvidenceWait = absl::Seconds(2);
// What a wait leaves of the caller's deadline, to plan and record.
constexpr absl::Duration kAnswerMargin = absl::Milliseconds(200);
// How far past the newest transaction horizon this replica has read a
// min_evidence_version may be and still be waited for: the transactions the
// database may have begun since that read (its age is seconds, at most
// reread intervals while the database is away). A version beyond it was
// given to no upload, and is refused.
constexpr int64_t kMaxVersionAhead = int64_t{1} << 24;

// The stale_evidence warning of a plan whose wait for the evidence it must
// include (`min_evidence_version`, or this replica's own uploads) ran out.
std::string WaitRanOutWarning(int64_t min_evidence_version) {
  if (min_evidence_version > 0) {
    return absl::StrCat(
        "stale_evidence: this replica's evidence did not include evidence "
        "version ",
        min_evidence_version, " within ",
        absl::FormatDuration(kMaxEvidenceWait),
        "; the plan may miss that upload");
  }
  return absl::StrCat(
      "stale_evidence: this replica's evidence did not include its latest "
      "acknowledged uploads within ",
      absl::FormatDuration(kMaxEvidenceWait),
      "; the database may be unreachable");
}

// What makes two requests the same plan: everything the planner reads (the
// team too while a standard is written for one: it decides which apply),
// and, once pools report their state, the minute (waits are counted from
// the plan's time: a plan is reused for a minute at most) and which
// pools' reports are stale by now (a report turning stale is a new plan at
// once, not within the minute).
std::string CacheKey(const v1::PlacePlanRequest& request,
                     const core::PlanRequest& plan_request,
                     const CatalogSnapshot& snapshot, absl::Time now,
                     absl::Duration max_age) {
  const bool team_decides_standards = snapshot.HasTeamStandards();
  v1::PlacePlanRequest key = request;
  key.clear_request_id();
  if (!team_decides_standards) key.clear_team();
  key.clear_min_evidence_version();  // decides when, not what, to plan
  if (plan_request.serving.has_value()) {
    key.mutable_serving()->set_sku(plan_request.serving->sku_id);
  }
  std::string bytes = common::DeterministicBytes(key);
  if (!snapshot.pool_queues.empty()) {
    absl::StrAppend(&bytes, "@", absl::ToUnixSeconds(now) / 60, "/");
    for (const auto& [name, queue] : snapshot.pool_queues) {
      bytes.push_back(now - queue->received > max_age ? '1' : '0');
    }
  }
  return bytes;
}

std::shared_ptr<const CachedPlan> MakeCachedPlan(core::PlanResult result) {
  auto cached = std::make_shared<CachedPlan>();
  auto record = std::make_shared<storage::PlanResultRecord>();
  record->response = common::DeterministicBytes(PlanResultToProto(result));
  record->hash = common::Sha256(record->response);
  for (const core::Candidate& c : result.candidates) {
    record->predictions.push_back(
        {c.pool_name, c.sku_id, c.rank, core::EvidenceBasisName(c.basis),
         c.peak_memory_gb, c.gpu_hours_per_1k_successful_steps / 1000.0,
         c.prior_peak_memory_gb, c.prior_step_time_s * c.gpu_count / 3600});
  }
  cached->response_bytes = grpc::Slice(record->response);
  cached->record = std::move(record);
  cached->result = std::move(result);
  return cached;
}

// The team a plan is for, set in `request`: one of the caller's
// (services/auth/team_access.h), recorded with the plan.
absl::Status SetPlanTeam(Authorizer& auth,
                         const grpc::ServerContextBase& context,
                         v1::PlacePlanRequest& request) {
  absl::StatusOr<std::string> team =
      TeamOfRequest(auth.Caller(context), request.team(), "the plan");
  if (!team.ok()) return team.status();
  if (*team != request.team()) request.set_team(*std::move(team));
  return absl::OkStatus();
}

}  // namespace

// A PlacePlan call's reactor. It holds what admission gave the call (a
// planning slot, or one of its caller's waiting slots) until the answer is
// handed to gRPC (Answer), not until gRPC is done with the call: a slot
// bounds the plans being made and recorded, and a closed loop's next call,
// which may arrive before gRPC has finished this one, then finds it free.
// OnDone frees it when the call ended otherwise (cancelled; answered by
// another path).
class PlanReactor final : public grpc::ServerUnaryReactor {
 public:
  // Holds a planning slot admitted at `admitted_at`.
  PlanReactor(PlanAdmission& admission, PlanAdmission::SteadyTime admitted_at)
      : admission_(admission), admitted_at_(admitted_at) {}
  // Holds one of `caller`'s waiting slots.
  PlanReactor(PlanAdmission& admission, std::string caller)
      : admission_(admission), waiting_caller_(std::move(caller)) {}

  // Frees the slot and finishes the call with `status`.
  void Answer(const grpc::Status& status) {
    FreeSlot();
    Finish(status);
  }

  void OnDone() override {
    FreeSlot();
    delete this;
  }

 private:
  void FreeSlot() {
    if (freed_.exchange(true)) return;
    if (waiting_caller_.has_value()) {
      admission_.DoneWaiting(*waiting_caller_);
    } else {
      admission_.Release(admitted_at_);
    }
  }

  PlanAdmission& admission_;
  const PlanAdmission::SteadyTime admitted_at_{};
  const std::optional<std::string> waiting_caller_;
  std::atomic<bool> freed_{false};
};

namespace {

// The objective's metric label without converting the whole request.
std::string ObjectiveLabel(const v1::PlacePlanRequest& request) {
  return ObjectiveName(ObjectiveFromProto(request.constraints().objective()));
}

}  // namespace

grpc::ServerUnaryReactor* PlacementService::PlacePlan(
    grpc::CallbackServerContext* context, const grpc::ByteBuffer* request_bytes,
    grpc::ByteBuffer* response) {
  // Under a burst the connection's work can lag behind the clients: a call
  // its client has given up on (its deadline, by the client's clock) may
  // reach this handler before the server's own deadline for it, with no
  // request bytes. Nothing of it is planned.
  if (context->IsCancelled()) {
    metrics_.PlanAnswered("LOWEST_COST", "deadline_exceeded");
    return FinishNow(context, grpc::Status(grpc::StatusCode::CANCELLED,
                                           "the caller gave up on the call"));
  }
  // The authorizer's decision and the parse, but not yet the walk of the
  // request's fields: under a burst a refused call costs as little as it
  // can (the fields are checked once the call is admitted).
  v1::PlacePlanRequest request;
  if (absl::Status admitted =
          AdmitAndParse(auth_, *context, *request_bytes, &request);
      !admitted.ok()) {
    if (absl::IsInvalidArgument(admitted)) {
      metrics_.PlanAnswered("LOWEST_COST", "invalid");
    }
    return FinishNow(context, ToGrpcStatus(admitted));
  }
  std::shared_ptr<const CatalogSnapshot> snapshot = evidence_.Current();
  const bool wait_for_evidence =
      snapshot != nullptr &&
      !evidence_.Includes(*snapshot, request.min_evidence_version());
  if (std::optional<grpc::Status> refused = RefusedBeforeAdmission(
          request, *request_bytes, snapshot.get(), wait_for_evidence)) {
    return FinishNow(context, *refused);
  }
  if (absl::Status team = SetPlanTeam(auth_, *context, request); !team.ok()) {
    return FinishNow(context, ToGrpcStatus(team));
  }
  absl::StatusOr<PlanReactor*> reactor = AdmitPlan(context, wait_for_evidence);
  if (!reactor.ok()) return Refuse(context, request, reactor.status());
  if (absl::Status fields = AdmitFields(request); !fields.ok()) {
    metrics_.PlanAnswered("LOWEST_COST", "invalid");
    (*reactor)->Answer(ToGrpcStatus(fields));
    return *reactor;
  }
  if (!wait_for_evidence) {
    // The usual case: planned here, on the callback thread.
    AnswerPlan(context, *reactor, request, std::move(snapshot), "", response);
    return *reactor;
  }
  const absl::Duration wait =
      std::min(kMaxEvidenceWait, absl::FromChrono(context->deadline()) -
                                     absl::Now() - kAnswerMargin);
  auto shared_request =
      std::make_shared<const v1::PlacePlanRequest>(std::move(request));
  evidence_.WhenCurrent(
      shared_request->min_evidence_version(), wait,
      [this, context, reactor = *reactor, response, shared_request](
          std::shared_ptr<const CatalogSnapshot> snapshot, bool reached) {
        AnswerPlan(
            context, reactor, *shared_request, std::move(snapshot),
            reached ? ""
                    : WaitRanOutWarning(shared_request->min_evidence_version()),
            response);
      });
  return *reactor;
}

std::optional<grpc::Status> PlacementService::RefusedBeforeAdmission(
    const v1::PlacePlanRequest& request, const grpc::ByteBuffer& bytes,
    const CatalogSnapshot* snapshot, bool wait_for_evidence) {
  if (request.min_evidence_version() < 0) {
    metrics_.PlanAnswered("LOWEST_COST", "invalid");
    return InvalidArgument({{"min_evidence_version",
                             "must be an evidence_version from an "
                             "UploadBenchmarkRunResponse, or 0"}});
  }
  if (bytes.Length() == 0) {
    // With what validation says of an empty request: under a burst this is
    // also what a call cancelled before its request arrived looks like,
    // and it must cost no slot.
    core::PlanRequest empty = PlanRequestFromProto(request);
    metrics_.PlanAnswered("LOWEST_COST", "invalid");
    return ToGrpcStatus(core::InvalidArgumentWithViolations(
        PlanRequestViolations(request, {}, &empty)));
  }
  if (snapshot == nullptr) {
    metrics_.PlanAnswered("LOWEST_COST", "unavailable");
    return ToGrpcStatus(
        absl::UnavailableError("pools and evidence are not loaded yet"));
  }
  if (wait_for_evidence &&
      request.min_evidence_version() >
          evidence_.KnownHorizon().xmax + kMaxVersionAhead) {
    // No upload can have been given it yet: a wait for it would force a
    // re-read every 50 ms for nothing.
    metrics_.PlanAnswered("LOWEST_COST", "invalid");
    return InvalidArgument({{"min_evidence_version",
                             "is beyond every transaction the database has "
                             "begun; pass an evidence_version from an "
                             "UploadBenchmarkRunResponse"}});
  }
  return std::nullopt;
}

absl::StatusOr<PlanReactor*> PlacementService::AdmitPlan(
    grpc::CallbackServerContext* context, bool wait_for_evidence) {
  const absl::Time deadline = absl::FromChrono(context->deadline());
  if (!wait_for_evidence) {
    // Shed what cannot be answered in time before any planning (past its
    // deadline, beyond the slots, or than plans take now): under a burst
    // the cores go to the plans that can still be answered.
    absl::StatusOr<PlanAdmission::SteadyTime> admitted =
        admission_.TryAdmit(deadline);
    if (!admitted.ok()) return admitted.status();
    return new PlanReactor(admission_, *admitted);
  }
  // The wait for the evidence (up to 2 s) holds no planning slot and is not
  // counted in what plans take, but one of its caller's waiting slots: a
  // caller that only sends versions far ahead fills its own share, and
  // nobody else's.
  std::optional<Principal> caller = auth_.Caller(*context);
  std::string caller_id = caller.has_value() ? caller->token_id : "";
  if (absl::Status waiting = admission_.TryWait(deadline, caller_id);
      !waiting.ok()) {
    return waiting;
  }
  return new PlanReactor(admission_, std::move(caller_id));
}

grpc::ServerUnaryReactor* PlacementService::Refuse(
    grpc::CallbackServerContext* context, const v1::PlacePlanRequest& request,
    const absl::Status& refused) {
  const bool late = absl::IsDeadlineExceeded(refused);
  metrics_.PlanAnswered(ObjectiveLabel(request),
                        late ? "deadline_exceeded" : "overloaded");
  if (!late) AddRetryPushback(context);
  return FinishNow(context, ToGrpcStatus(refused));
}

void PlacementService::AddRetryPushback(grpc::CallbackServerContext* context) {
  // gRPC's server pushback (gRFC A6): how long a retry of this call should
  // wait, which gRPC's own retries honour as they are.
  thread_local absl::InsecureBitGen random;
  const absl::Duration pushback =
      admission_.RetryPushback(absl::Uniform(random, 0.0, 1.0));
  context->AddTrailingMetadata(
      "grpc-retry-pushback-ms",
      absl::StrCat(std::max<int64_t>(1, absl::ToInt64Milliseconds(pushback))));
}

void PlacementService::AnswerPlan(
    grpc::CallbackServerContext* context, PlanReactor* reactor,
    const v1::PlacePlanRequest& request,
    std::shared_ptr<const CatalogSnapshot> snapshot,
    const std::string& wait_warning, grpc::ByteBuffer* response) {
  core::PlanRequest plan_request = PlanRequestFromProto(request);
  const std::string objective =
      ObjectiveName(plan_request.constraints.objective);
  absl::StatusOr<std::shared_ptr<const CachedPlan>> plan =
      PlanFor(request, plan_request, snapshot, objective);
  if (!plan.ok()) {
    reactor->Answer(ToGrpcStatus(plan.status()));
    return;
  }
  Answer answer{context,
                reactor,
                *std::move(plan),
                objective,
                StampFor(*snapshot, wait_warning),
                response};
  storage::PlacementRecord record = RecordOf(request, answer);
  if (!request.request_id().empty()) {
    AnswerOncePerRequestId(std::move(answer), std::move(record));
  } else if (records_ == PlanRecords::kDeferred) {
    AnswerThenRecord(std::move(answer), std::move(record));
  } else {
    AnswerOnceRecorded(std::move(answer), std::move(record));
  }
}

absl::StatusOr<std::shared_ptr<const CachedPlan>> PlacementService::PlanFor(
    const v1::PlacePlanRequest& request, core::PlanRequest& plan_request,
    const std::shared_ptr<const CatalogSnapshot>& snapshot,
    const std::string& objective) {
  if (snapshot == nullptr) {
    metrics_.PlanAnswered(objective, "unavailable");
    return absl::UnavailableError("pools and evidence are not loaded yet");
  }
  if (absl::Status valid =
          ValidatePlanOnSnapshot(request, *snapshot, &plan_request);
      !valid.ok()) {
    metrics_.PlanAnswered(objective, absl::IsFailedPrecondition(valid)
                                         ? "no_training_pool"
                                         : "invalid");
    return valid;
  }
  // Plan from the snapshot, or reuse the same request's plan against it.
  const absl::Time now = absl::Now();
  const std::string key =
      CacheKey(request, plan_request, *snapshot, now, pool_state_max_age_);
  std::shared_ptr<const CachedPlan> plan = cache_.Find(snapshot, key);
  if (plan != nullptr) return plan;
  absl::StatusOr<core::PlanResult> result = PlanOnSnapshot(
      plan_request, *snapshot, request.team(), now, pool_state_max_age_);
  if (!result.ok()) {
    metrics_.PlanAnswered(objective, "invalid");
    return result.status();
  }
  plan = MakeCachedPlan(*std::move(result));
  cache_.Insert(snapshot, key, plan);
  return plan;
}

PlanStamp PlacementService::StampFor(const CatalogSnapshot& snapshot,
                                     const std::string& wait_warning) {
  const absl::Time now = absl::Now();
  PlanStamp stamp{common::NewTimeOrderedUuid(now), now, snapshot.loaded_at, {}};
  if (!wait_warning.empty()) stamp.warnings.push_back(wait_warning);
  const absl::Duration age = evidence_.Age();  // monotonic
  if (age > kStaleEvidence && wait_warning.empty()) {
    stamp.warnings.push_back(absl::StrFormat(
        "stale_evidence: pools and evidence were last known current %.0f s "
        "ago; the database may be unreachable",
        absl::ToDoubleSeconds(age)));
  }
  return stamp;
}

storage::PlacementRecord PlacementService::RecordOf(
    const v1::PlacePlanRequest& request, const Answer& answer) {
  const CachedPlan& plan = *answer.plan;
  storage::PlacementRecord record;
  record.plan_id = answer.stamp.plan_id;
  record.request_id = request.request_id();
  record.team = request.team();
  record.recipe_key = plan.result.recipe_key;
  record.objective = answer.objective;
  if (!plan.result.candidates.empty()) {
    record.chosen_pool = plan.result.candidates.front().pool_name;
    record.chosen_sku = plan.result.candidates.front().sku_id;
  }
  record.request = common::DeterministicBytes(request);
  record.result = plan.record;
  record.evidence_time = answer.stamp.evidence_time;
  record.warnings = answer.stamp.warnings;
  record.created_at = answer.stamp.create_time;
  return record;
}

void PlacementService::CountAnswered(const Answer& answer) {
  const core::PlanResult& result = answer.plan->result;
  if (result.candidates.empty()) {
    metrics_.PlanAnswered(answer.objective, "no_candidate");
    return;
  }
  metrics_.PlanAnswered(answer.objective, "placed");
  if (result.standard.has_value() && result.standard->contradicted) {
    metrics_.StandardContradicted(result.standard->pool_name);
  }
  const core::Candidate& chosen = result.candidates.front();
  metrics_.CandidateChosen(chosen.sku_id,
                           core::EvidenceBasisName(chosen.basis));
}

void PlacementService::AnswerThenRecord(Answer answer,
                                        storage::PlacementRecord record) {
  // Recorded whatever the caller does next; answered now.
  if (audit_.TrySubmit(
          std::move(record), absl::InfiniteFuture(),
          [this, plan_id = answer.stamp.plan_id](const absl::Status& status) {
            if (status.ok()) return;
            // A database outage loses every plan: say so now and then.
            const int64_t lost = metrics_.PlanRecordLost();
            if (lost == 1 || lost % 1000 == 0) {
              std::cerr << "placementd: plan " << plan_id
                        << " was answered but not recorded (" << lost
                        << " so far): " << status << "\n";
            }
          })) {
    *answer.response =
        PlanResponseBytes(answer.plan->response_bytes, answer.stamp);
    CountAnswered(answer);
    answer.reactor->Answer(grpc::Status::OK);
    return;
  }
  // The queue of records answered before they are written is full: the
  // writer is behind. This plan waits for its record as a durable one does,
  // holding its slot, so that the callers slow to the writer's pace instead
  // of being refused (`record` is untouched by the refusal).
  AnswerOnceRecorded(std::move(answer), std::move(record));
}

void PlacementService::AnswerOnceRecorded(Answer answer,
                                          storage::PlacementRecord record) {
  PlanReactor* reactor = answer.reactor;
  const std::string objective = answer.objective;
  const absl::Time deadline = absl::FromChrono(answer.context->deadline());
  // Past the queue's capacity if need be: every plan waiting here holds an
  // admission slot (planning or waiting), and those bound how many wait.
  const bool queued = audit_.Submit(
      std::move(record), deadline,
      [this, answer = std::move(answer)](const absl::Status& status) mutable {
        if (absl::IsDeadlineExceeded(status)) {
          metrics_.PlanAnswered(answer.objective, "deadline_exceeded");
          answer.reactor->Answer(ToGrpcStatus(status));
          return;
        }
        if (!status.ok()) {
          // The plan stands without its record; the caller is told.
          answer.stamp.warnings.push_back(absl::StrCat(
              "not_recorded: the plan could not be recorded (",
              status.message(), "); runs cannot be matched to it"));
        }
        *answer.response =
            PlanResponseBytes(answer.plan->response_bytes, answer.stamp);
        CountAnswered(answer);
        answer.reactor->Answer(grpc::Status::OK);
      });
  if (!queued) {
    metrics_.PlanAnswered(objective, "unavailable");
    reactor->Answer(ToGrpcStatus(
        absl::UnavailableError("the server is stopping; retry elsewhere")));
  }
}

void PlacementService::AnswerOncePerRequestId(Answer answer,
                                              storage::PlacementRecord record) {
  // With an idempotency key, a retry returns the plan recorded first.
  // Its slot is freed when gRPC is done with the call (PlanReactor::OnDone).
  // The key is the fleet's: a plan another team recorded under it is
  // answered only to a caller who may read that team's plans.
  grpc::CallbackServerContext* context = answer.context;
  grpc::ServerUnaryReactor* reactor = answer.reactor;
  FinishOnDbWorker(
      context, reactor, workers_,
      [this, answer = std::move(answer), record = std::move(record),
       caller = auth_.Caller(*context)](
          storage::DbSession& session) -> absl::Status {
        const std::string what = absl::StrCat(
            "the plan recorded for request_id ", record.request_id);
        absl::StatusOr<std::optional<storage::StoredPlan>> existing =
            storage::FindPlanByRequestId(session, record.request_id);
        if (!existing.ok()) return existing.status();
        if (existing->has_value()) {
          if (absl::Status s = CheckTeam(caller, (*existing)->team, what);
              !s.ok()) {
            return s;
          }
          *answer.response = ResponseBytesFromStored(**existing);
          return absl::OkStatus();
        }
        absl::StatusOr<std::optional<std::string>> raced =
            storage::InsertPlacementWithRequestId(session, record);
        if (!raced.ok()) return raced.status();
        if (raced->has_value()) {  // a concurrent twin was recorded first
          absl::StatusOr<storage::StoredPlan> first =
              storage::GetPlan(session, **raced);
          if (!first.ok()) return first.status();
          if (absl::Status s = CheckTeam(caller, first->team, what); !s.ok()) {
            return s;
          }
          *answer.response = ResponseBytesFromStored(*first);
          return absl::OkStatus();
        }
        *answer.response =
            PlanResponseBytes(answer.plan->response_bytes, answer.stamp);
        CountAnswered(answer);
        return absl::OkStatus();
      });
}

grpc::ServerUnaryReactor* PlacementService::GetPlan(
    grpc::CallbackServerContext* context, const v1::GetPlanRequest* request,
    v1::GetPlanResponse* response) {
  if (absl::Status admitted = Admit(auth_, *context, *request);
      !admitted.ok()) {
    return FinishNow(context, ToGrpcStatus(admitted));
  }
  if (!IsUuid(request->plan_id())) {
    return FinishNow(context, InvalidArgument({{"plan_id", "must be a UUID"}}));
  }
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  auto look_up = [this, reactor, context, response,
                  plan_id = absl::AsciiStrToLower(request->plan_id()),
                  caller = auth_.Caller(*context)] {
    FinishOnDbWorker(context, reactor, workers_,
                     [response, plan_id,
                      caller](storage::DbSession& session) -> absl::Status {
                       absl::StatusOr<v1::GetPlanResponse> plan =
                           ReadPlan(session, plan_id, caller);
                       if (!plan.ok()) return plan.status();
                       *response = *std::move(plan);
                       return absl::OkStatus();
                     });
  };
  // A plan of this replica's still queued for its record (deferred records)
  // is looked up once written; the wait holds no database worker, and an id
  // that is not queued (never issued, or recorded already) does not wait.
  if (records_ == PlanRecords::kDeferred &&
      audit_.WhenWritten(absl::AsciiStrToLower(request->plan_id()), look_up)) {
    return reactor;
  }
  look_up();
  return reactor;
}

grpc::ServerUnaryReactor* PlacementService::GetPlanAccuracy(
    grpc::CallbackServerContext* context,
    const v1::GetPlanAccuracyRequest* request,
    v1::GetPlanAccuracyResponse* response) {
  if (absl::Status admitted = Admit(auth_, *context, *request);
      !admitted.ok()) {
    return FinishNow(context, ToGrpcStatus(admitted));
  }
  const absl::Time from = request->has_start_time()
                              ? common::TimeFromProto(request->start_time())
                              : absl::InfinitePast();
  const absl::Time to = request->has_end_time()
                            ? common::TimeFromProto(request->end_time())
                            : absl::InfiniteFuture();
  return FinishOnDbWorker(
      context, workers_,
      [response, from, to, caller = auth_.Caller(*context)](
          storage::DbSession& session) -> absl::Status {
        absl::StatusOr<v1::GetPlanAccuracyResponse> accuracy =
            ReadPlanAccuracy(session, from, to, caller);
        if (!accuracy.ok()) return accuracy.status();
        *response = *std::move(accuracy);
        return absl::OkStatus();
      });
}

grpc::ServerUnaryReactor* PlacementService::GetBakeOffStatus(
    grpc::CallbackServerContext* context,
    const v1::GetBakeOffStatusRequest* request,
    v1::GetBakeOffStatusResponse* response) {
  if (absl::Status admitted = Admit(auth_, *context, *request);
      !admitted.ok()) {
    return FinishNow(context, ToGrpcStatus(admitted));
  }
  if (!IsUuid(request->plan_id())) {
    return FinishNow(context, InvalidArgument({{"plan_id", "must be a UUID"}}));
  }
  std::shared_ptr<const CatalogSnapshot> snapshot = evidence_.Current();
  if (snapshot == nullptr) {
    return FinishNow(
        context,
        ToGrpcStatus(absl::UnavailableError("pools are not loaded yet")));
  }
  const std::string plan_id = absl::AsciiStrToLower(request->plan_id());
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  auto look_up = [this, reactor, context, response, plan_id,
                  snapshot = std::move(snapshot),
                  caller = auth_.Caller(*context)] {
    FinishOnDbWorker(context, reactor, workers_,
                     [response, plan_id, snapshot,
                      caller](storage::DbSession& session) -> absl::Status {
                       absl::StatusOr<v1::GetBakeOffStatusResponse> status =
                           ReadBakeOffStatus(session, *snapshot, plan_id,
                                             caller);
                       if (!status.ok()) return status.status();
                       *response = *std::move(status);
                       return absl::OkStatus();
                     });
  };
  // As GetPlan: a plan of this replica's still queued for its record is
  // looked up once written.
  if (records_ == PlanRecords::kDeferred &&
      audit_.WhenWritten(plan_id, look_up)) {
    return reactor;
  }
  look_up();
  return reactor;
}

}  // namespace placement::services
