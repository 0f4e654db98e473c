#ifndef PLACEMENT_SERVICES_RPC_PLAN_READINGS_H_
#define PLACEMENT_SERVICES_RPC_PLAN_READINGS_H_

// Reading a recorded plan back (GetPlan, PlacePlan's retries) and what its
// bake-off and eval requirement rest on (GetBakeOffStatus, WriteStandard).
// Each runs on a database worker's session.

#include <grpcpp/grpcpp.h>

#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "core/evidence/eval_evidence.h"
#include "placement/v1/placement.pb.h"
#include "services/api/bake_off_convert.h"
#include "services/auth/principal.h"
#include "storage/db_session.h"
#include "storage/plan_store.h"

namespace placement::services {

// The answer for a stored plan, as PlacePlan's bytes.
grpc::ByteBuffer ResponseBytesFromStored(const storage::StoredPlan& stored);

// The same answer typed, for GetPlan, which nests it.
absl::Status ResponseFromStored(const storage::StoredPlan& stored,
                                v1::PlacePlanResponse* response);

// Whether a stored eval meets `plan`'s eval requirement for `recipe_key`
// (the plan's serving SKU and precision); nullopt when the plan has none.
// For a plan of a team (`team` not empty), only evals of that team's runs.
absl::StatusOr<std::optional<core::EvalStatus>> EvalFor(
    storage::DbSession& session, const v1::PlacePlanResponse& plan,
    const std::string& recipe_key, const std::string& team);

// Everything GetBakeOffStatus reads from the database for `plan_id`:
// NOT_FOUND for an unknown plan, PERMISSION_DENIED for a plan of a team
// `caller` does not reach (services/auth/team_access.h). For a plan of a
// team, the uploads of that team's runs and those naming the plan count.
absl::StatusOr<BakeOffReadings> ReadBakeOff(
    storage::DbSession& session, const std::string& plan_id,
    const std::optional<Principal>& caller);

}  // namespace placement::services

#endif  // PLACEMENT_SERVICES_RPC_PLAN_READINGS_H_
