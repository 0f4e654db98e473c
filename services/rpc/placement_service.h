#ifndef PLACEMENT_SERVICES_RPC_PLACEMENT_SERVICE_H_
#define PLACEMENT_SERVICES_RPC_PLACEMENT_SERVICE_H_

#include <memory>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "core/plan/planner.h"
#include "placement/v1/placement.grpc.pb.h"
#include "services/auth/auth.h"
#include "services/metrics/placement_metrics.h"
#include "services/plan/evidence_cache.h"
#include "services/plan/plan_audit_writer.h"
#include "services/plan/plan_cache.h"
#include "services/plan/plan_response_bytes.h"
#include "services/rpc/plan_admission.h"
#include "storage/session/db_workers.h"
#include "storage/stores/plan_store.h"

namespace placement::services {

// When a plan's record is committed relative to its answer.
enum class PlanRecords {
  kDurable,   // before the answer (the default)
  kDeferred,  // after the answer, in groups
};

// placement.v1.PlacementService.
//
// PlacePlan plans on the callback thread from the replica's in-memory
// snapshot (no database read; identical requests against the same snapshot
// reuse the deterministic result) and answers once the plan's audit record
// is committed, so that a run naming the plan id can be matched to it. The
// records are written with group commit (PlanAuditWriter); a plan carrying a
// request_id goes through a database worker instead, to honour it.
//
// With deferred records (PlanRecords::kDeferred) a plan without a request_id
// is answered as soon as its record is queued, and the writer commits the
// queue in groups: more plans per core, at the price of the records still
// queued when the process dies, and of a plan that fails to be recorded
// being counted (placement_plan_records_lost_total) rather than flagged to
// its caller. GetPlan on this replica waits for the queue, so a caller
// finds the plan it was just given.
//
// Read your own writes: a plan includes every upload this replica
// acknowledged before it, and, given an upload's evidence version
// (min_evidence_version), that upload whichever replica took it. When the
// snapshot does not include them yet the plan waits for the re-read (at
// most kMaxEvidenceWait, answered from the evidence cache's thread: no
// thread blocks) and then warns stale_evidence if it is still behind.
//
// Overload: PlacePlan refuses at once, before any planning and before the
// walk of the request's fields, a call whose client gave up (CANCELLED) or
// whose deadline has passed (DEADLINE_EXCEEDED), and one beyond the
// planning slots or that could not be answered within its deadline
// (RESOURCE_EXHAUSTED, with grpc-retry-pushback-ms: when to retry). A plan
// holds its slot until its answer is handed to gRPC. A plan that waits for
// evidence holds one of its caller's waiting slots instead; see
// PlanAdmission. With deferred records, a plan whose record finds the
// writer's queue full waits for the commit like a durable one: the callers
// slow down instead of being refused.
//
// PlacePlan is a raw method: it answers with bytes assembled from the cached
// result's serialization and the plan's own fields (PlanResponseBytes), so a
// result is serialized once however many plans it answers.
// A PlacePlan call's reactor, holding its admission (placement_service.cc).
class PlanReactor;

class PlacementService final
    : public v1::PlacementService::WithRawCallbackMethod_PlacePlan<
          v1::PlacementService::CallbackService> {
 public:
  PlacementService(
      storage::DbWorkers& workers, Authorizer& auth, PlanAuditWriter& audit,
      EvidenceCache& evidence, PlacementMetrics& metrics,
      PlanRecords records = PlanRecords::kDurable,
      int max_plans_in_flight = PlanAdmission::DefaultMaxInFlight(),
      absl::Duration pool_state_max_age = absl::Minutes(10))
      : workers_(workers),
        auth_(auth),
        audit_(audit),
        evidence_(evidence),
        metrics_(metrics),
        records_(records),
        pool_state_max_age_(pool_state_max_age),
        cache_(/*capacity=*/4096),
        admission_(max_plans_in_flight) {}

  grpc::ServerUnaryReactor* PlacePlan(grpc::CallbackServerContext* context,
                                      const grpc::ByteBuffer* request,
                                      grpc::ByteBuffer* response) override;
  grpc::ServerUnaryReactor* GetPlan(grpc::CallbackServerContext* context,
                                    const v1::GetPlanRequest* request,
                                    v1::GetPlanResponse* response) override;
  grpc::ServerUnaryReactor* GetPlanAccuracy(
      grpc::CallbackServerContext* context,
      const v1::GetPlanAccuracyRequest* request,
      v1::GetPlanAccuracyResponse* response) override;
  // Reads the plan, the uploads matching its bake-off runs and the evals of
  // their recipe keys on a database worker; pools and SKUs (rates, card
  // memory) from the snapshot; the verdict is core::JudgeBakeOff.
  grpc::ServerUnaryReactor* GetBakeOffStatus(
      grpc::CallbackServerContext* context,
      const v1::GetBakeOffStatusRequest* request,
      v1::GetBakeOffStatusResponse* response) override;

  // Standards (services/rpc/standard_handlers.cc): each write commits on a
  // database worker, then reloads this replica's snapshot on that session
  // and notifies the others, as a catalog change does.
  grpc::ServerUnaryReactor* WriteStandard(
      grpc::CallbackServerContext* context,
      const v1::WriteStandardRequest* request,
      v1::WriteStandardResponse* response) override;
  grpc::ServerUnaryReactor* GetStandard(
      grpc::CallbackServerContext* context,
      const v1::GetStandardRequest* request,
      v1::GetStandardResponse* response) override;
  grpc::ServerUnaryReactor* ListStandards(
      grpc::CallbackServerContext* context,
      const v1::ListStandardsRequest* request,
      v1::ListStandardsResponse* response) override;
  grpc::ServerUnaryReactor* RetireStandard(
      grpc::CallbackServerContext* context,
      const v1::RetireStandardRequest* request,
      v1::RetireStandardResponse* response) override;

 private:
  // Why PlacePlan answers `request` (parsed from `bytes`) without
  // admission, counted: an invalid version, an empty request (also what a
  // call cancelled before its request arrived looks like), no snapshot yet,
  // a version beyond every transaction begun. nullopt: none of them.
  std::optional<grpc::Status> RefusedBeforeAdmission(
      const v1::PlacePlanRequest& request, const grpc::ByteBuffer& bytes,
      const CatalogSnapshot* snapshot, bool wait_for_evidence);
  // The call's reactor holding its admission: a planning slot, or (when it
  // must first wait for evidence) one of its caller's waiting slots; the
  // refusal when there is none (PlanAdmission).
  absl::StatusOr<PlanReactor*> AdmitPlan(grpc::CallbackServerContext* context,
                                         bool wait_for_evidence);
  // Refuses a PlacePlan call admission turned away (`refused`: overloaded
  // or late), counted; a RESOURCE_EXHAUSTED carries the retry pushback.
  grpc::ServerUnaryReactor* Refuse(grpc::CallbackServerContext* context,
                                   const v1::PlacePlanRequest& request,
                                   const absl::Status& refused);
  // Tells the caller when to retry (grpc-retry-pushback-ms, from
  // PlanAdmission::RetryPushback), on a call about to be refused with
  // RESOURCE_EXHAUSTED.
  void AddRetryPushback(grpc::CallbackServerContext* context);

  // Plans `request` from `snapshot` and finishes `reactor` (on whichever
  // thread has the snapshot ready: the callback thread, or the evidence
  // cache's after a wait). `wait_warning`: a stale_evidence warning when the
  // wait for the caller's evidence version ran out.
  void AnswerPlan(grpc::CallbackServerContext* context, PlanReactor* reactor,
                  const v1::PlacePlanRequest& request,
                  std::shared_ptr<const CatalogSnapshot> snapshot,
                  const std::string& wait_warning, grpc::ByteBuffer* response);

  // A plan made, and what its answer needs.
  struct Answer {
    grpc::CallbackServerContext* context;
    PlanReactor* reactor;
    std::shared_ptr<const CachedPlan> plan;
    std::string objective;
    PlanStamp stamp;
    grpc::ByteBuffer* response;
  };

  // The plan of `request` against `snapshot` (the cache's, or made now and
  // cached); an error, counted, when it cannot be planned. Resolves the
  // serving SKU into `plan_request`.
  absl::StatusOr<std::shared_ptr<const CachedPlan>> PlanFor(
      const v1::PlacePlanRequest& request, core::PlanRequest& plan_request,
      const std::shared_ptr<const CatalogSnapshot>& snapshot,
      const std::string& objective);
  // A new plan id and time, with the warnings of stale evidence.
  PlanStamp StampFor(const CatalogSnapshot& snapshot,
                     const std::string& wait_warning);
  static storage::PlacementRecord RecordOf(const v1::PlacePlanRequest& request,
                                           const Answer& answer);
  void CountAnswered(const Answer& answer);
  // After a standard's write committed on `session`: this replica's next
  // plan sees it, and the others are notified.
  void PublishStandardChange(storage::DbSession& session);
  // Who is calling, as a standard records it.
  std::string CallerName(const grpc::CallbackServerContext& context);

  // The three ways a plan is answered:
  // deferred records: answered at once, the record queued for later;
  void AnswerThenRecord(Answer answer, storage::PlacementRecord record);
  // durable records: answered once the audit writer committed the record
  // (or the deadline passed);
  void AnswerOnceRecorded(Answer answer, storage::PlacementRecord record);
  // with a request_id: on a database worker, where a retry of the same id
  // gets the plan recorded first.
  void AnswerOncePerRequestId(Answer answer, storage::PlacementRecord record);

  storage::DbWorkers& workers_;
  Authorizer& auth_;
  PlanAuditWriter& audit_;
  EvidenceCache& evidence_;
  PlacementMetrics& metrics_;
  const PlanRecords records_;
  // Older pool state is stale: its waits unknown (core::QueueView).
  const absl::Duration pool_state_max_age_;
  PlanCache cache_;
  PlanAdmission admission_;
};

}  // namespace placement::services

#endif  // PLACEMENT_SERVICES_RPC_PLACEMENT_SERVICE_H_
