#ifndef PLACEMENT_SERVICES_RPC_PLAN_READINGS_H_
#define PLACEMENT_SERVICES_RPC_PLAN_READINGS_H_

// Reading a recorded plan back (GetPlan, PlacePlan's retries) and what its
// bake-off and eval requirement rest on (GetBakeOffStatus, WriteStandard).
// Each runs on a database worker's session.

#include <grpcpp/grpcpp.h>

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/evidence/eval_evidence.h"
#include "core/plan/recorded_plan.h"
#include "placement/v1/placement.pb.h"
#include "services/api/bake_off_convert.h"
#include "services/auth/principal.h"
#include "services/plan/evidence_cache.h"
#include "storage/session/db_session.h"
#include "storage/stores/plan_store.h"

namespace placement::services {

// The answer for a stored plan, as PlacePlan's bytes.
grpc::ByteBuffer ResponseBytesFromStored(const storage::StoredPlan& stored);

// The same answer typed, for GetPlan, which nests it.
absl::Status ResponseFromStored(const storage::StoredPlan& stored,
                                v1::PlacePlanResponse* response);

// The stored evals that could meet `plan`'s eval requirement for
// `recipe_key` (the plan's serving SKU and precision); none when the plan
// has no requirement. For a plan of a team (`team` not empty), only evals
// of that team's runs.
absl::StatusOr<std::vector<core::EvalEvidence>> EvalsFor(
    storage::DbSession& session, const v1::PlacePlanResponse& plan,
    const std::string& recipe_key, const std::string& team);

// The plan of `readings` as core judges it, with what the replica's
// `snapshot` knows of its pools: rates, cards, failure records, criteria.
core::RecordedPlan RecordedPlanOn(const CatalogSnapshot& snapshot,
                                  const BakeOffReadings& readings);

// Everything GetBakeOffStatus and WriteStandard read from the database for
// `plan_id` (with `also`, a pool the plan ranked, among the targets):
// NOT_FOUND for an unknown plan, PERMISSION_DENIED for a plan of a team
// `caller` does not reach (services/auth/team_access.h). For a plan of a
// team, the uploads of that team's runs and those naming the plan count.
absl::StatusOr<BakeOffReadings> ReadBakeOff(
    storage::DbSession& session, const std::string& plan_id,
    const std::optional<Principal>& caller, const std::string& also = "");

}  // namespace placement::services

#endif  // PLACEMENT_SERVICES_RPC_PLAN_READINGS_H_
