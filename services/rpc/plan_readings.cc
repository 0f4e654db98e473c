#include "services/rpc/plan_readings.h"

#include <grpcpp/support/proto_buffer_reader.h>

#include <vector>

#include "absl/strings/str_cat.h"
#include "placement/v1/placement.grpc.pb.h"
#include "services/api/recipe_convert.h"
#include "services/auth/team_access.h"
#include "services/plan/plan_response_bytes.h"
#include "storage/stores/bake_off_store.h"
#include "storage/stores/eval_store.h"

namespace placement::services {
namespace {

// Evals of one recipe key on one serving target that MatchEval reads, newest
// first.
constexpr int kMaxEvalsPerRecipeKey = 1000;

// Parses bytes gRPC received or assembled into `message`.
template <typename Message>
bool ParseBytes(const grpc::ByteBuffer& bytes, Message* message) {
  grpc::ByteBuffer shared(bytes);  // references the same slices
  return grpc::SerializationTraits<Message>::Deserialize(&shared, message).ok();
}

}  // namespace

grpc::ByteBuffer ResponseBytesFromStored(const storage::StoredPlan& stored) {
  return PlanResponseBytes(grpc::Slice(stored.result_response),
                           {stored.plan_id, stored.created_at,
                            stored.evidence_time, stored.warnings});
}

absl::Status ResponseFromStored(const storage::StoredPlan& stored,
                                v1::PlacePlanResponse* response) {
  if (!ParseBytes(ResponseBytesFromStored(stored), response)) {
    return absl::DataLossError("stored plan does not parse");
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<core::EvalEvidence>> EvalsFor(
    storage::DbSession& session, const v1::PlacePlanResponse& plan,
    const std::string& recipe_key, const std::string& team) {
  if (plan.eval_requirement().empty() || !plan.has_eval_status()) {
    return std::vector<core::EvalEvidence>{};
  }
  storage::EvalFilter filter;
  filter.recipe_key = recipe_key;
  filter.serving_sku_id = plan.eval_status().serving_sku();
  filter.serving_precision =
      PrecisionFromProto(plan.eval_status().serving_precision());
  if (!team.empty()) filter.teams = {team};
  absl::StatusOr<storage::EvalPage> page = storage::ListEvals(
      session, filter, storage::EvalCursor{}, kMaxEvalsPerRecipeKey);
  if (!page.ok()) return page.status();
  std::vector<core::EvalEvidence> evals;
  for (const storage::StoredEval& e : page->evals) evals.push_back(e.eval);
  return evals;
}

core::RecordedPlan RecordedPlanOn(const CatalogSnapshot& snapshot,
                                  const BakeOffReadings& readings) {
  core::RecordedPlan plan = RecordedPlanOf(
      readings, {&snapshot.pools, &snapshot.skus, &snapshot.EvalCriteria()});
  for (core::BakeOffTarget& target : plan.targets) {
    target.pool_failures = {snapshot.PoolReliability(target.pool_name, false),
                            snapshot.PoolReliability(target.pool_name, true)};
  }
  return plan;
}

absl::StatusOr<BakeOffReadings> ReadBakeOff(
    storage::DbSession& session, const std::string& plan_id,
    const std::optional<Principal>& caller, const std::string& also) {
  absl::StatusOr<storage::StoredPlan> stored =
      storage::GetPlan(session, plan_id);
  if (!stored.ok()) return stored.status();
  if (absl::Status s =
          CheckTeam(caller, stored->team, absl::StrCat("plan ", plan_id));
      !s.ok()) {
    return s;
  }
  BakeOffReadings readings;
  readings.plan_id = plan_id;
  readings.created = stored->created_at;
  readings.team = stored->team;
  if (absl::Status parsed = ResponseFromStored(*stored, &readings.plan);
      !parsed.ok()) {
    return parsed;
  }
  if (!readings.request.ParseFromString(stored->request)) {
    return absl::DataLossError("stored plan request does not parse");
  }
  readings.targets = BakeOffTargets(readings.plan, also);
  if (readings.targets.empty()) return readings;
  absl::StatusOr<std::vector<std::vector<storage::MatchedUpload>>> uploads =
      storage::FindBakeOffUploads(session, plan_id, stored->created_at,
                                  readings.targets, stored->team);
  if (!uploads.ok()) return uploads.status();
  readings.uploads = *std::move(uploads);
  for (const storage::BakeOffTarget& target : readings.targets) {
    absl::StatusOr<std::vector<core::EvalEvidence>> evals =
        EvalsFor(session, readings.plan, target.recipe_key, readings.team);
    if (!evals.ok()) return evals.status();
    readings.evals.push_back(*std::move(evals));
  }
  return readings;
}

}  // namespace placement::services
