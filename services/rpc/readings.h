#ifndef PLACEMENT_SERVICES_RPC_READINGS_H_
#define PLACEMENT_SERVICES_RPC_READINGS_H_

// What the read RPCs answer, computed on a database worker's session (and
// on the replica's snapshot where the RPC reads it). Each handler checks
// its request on the callback thread and then calls its reading; the web
// console (services/console) calls the same readings, so that a page shows
// the very figures the API answers for the same data. A reading returns
// what the database or a stored row gives it: UNAVAILABLE, NOT_FOUND,
// DATA_LOSS, and INVALID_ARGUMENT only where the handler's own reading
// checks against stored data (the cost report's SKU filter).
//
// Each reading that shows what belongs to teams takes the caller
// (std::nullopt: auth is off) and answers only what the caller's token
// reaches (services/auth/team_access.h): PERMISSION_DENIED for a plan or a
// team it does not reach, listings limited to its teams.

#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "placement/v1/catalog.pb.h"
#include "placement/v1/cost.pb.h"
#include "placement/v1/placement.pb.h"
#include "services/api/cost_request.h"
#include "services/api/page_token.h"
#include "services/auth/principal.h"
#include "services/plan/evidence_cache.h"
#include "storage/records/standard_records.h"
#include "storage/session/db_session.h"

namespace placement::services {

// ListPools: a page of pools in name order after `page.after`.
absl::StatusOr<v1::ListPoolsResponse> ReadPools(storage::DbSession& session,
                                                const PageRequest& page);

// GetPool: NOT_FOUND when no pool has that name.
absl::StatusOr<v1::GetPoolResponse> ReadPool(storage::DbSession& session,
                                             const std::string& name);

// GetCostReport: the teams of the filter checked against the caller's
// (PERMISSION_DENIED), the SKU filter checked against the catalog
// (INVALID_ARGUMENT naming filter.skus[i]), then one page of rows. A
// caller bound to teams reports on its teams: all of them unless the
// filter names some, and only them.
absl::Status CheckCostTeams(const std::optional<Principal>& caller,
                            const CostRequest& request);
absl::StatusOr<v1::GetCostReportResponse> ReadCostReport(
    storage::DbSession& session, CostRequest request,
    const std::optional<Principal>& caller);

// GetPlan: the request and the answer of a recorded plan (`plan_id` a
// lower-case UUID); NOT_FOUND for an unknown one, PERMISSION_DENIED for
// one of a team the caller does not reach.
absl::StatusOr<v1::GetPlanResponse> ReadPlan(
    storage::DbSession& session, const std::string& plan_id,
    const std::optional<Principal>& caller);

// GetPlanAccuracy over the outcomes recorded in [from, to) of the plans of
// the caller's teams.
absl::StatusOr<v1::GetPlanAccuracyResponse> ReadPlanAccuracy(
    storage::DbSession& session, absl::Time from, absl::Time to,
    const std::optional<Principal>& caller);

// GetBakeOffStatus: pools and SKUs (rates, card memory) from `snapshot`;
// PERMISSION_DENIED as ReadPlan.
absl::StatusOr<v1::GetBakeOffStatusResponse> ReadBakeOffStatus(
    storage::DbSession& session, const CatalogSnapshot& snapshot,
    const std::string& plan_id, const std::optional<Principal>& caller);

// ListStandards: a page, newest first, after `cursor`: the fleet's and
// those of the caller's teams.
absl::StatusOr<v1::ListStandardsResponse> ReadStandards(
    storage::DbSession& session, const storage::StandardCursor& cursor,
    int page_size, bool include_retired,
    const std::optional<Principal>& caller);

}  // namespace placement::services

#endif  // PLACEMENT_SERVICES_RPC_READINGS_H_
