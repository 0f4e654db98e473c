#include "services/rpc/readings.h"

#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/field_violation.h"
#include "core/sku.h"
#include "services/api/accuracy_convert.h"
#include "services/api/bake_off_convert.h"
#include "services/api/catalog_convert.h"
#include "services/api/standard_convert.h"
#include "services/auth/team_access.h"
#include "services/rpc/plan_readings.h"
#include "storage/stores/cost_store.h"
#include "storage/stores/plan_store.h"
#include "storage/stores/pool_store.h"
#include "storage/stores/sku_store.h"
#include "storage/stores/standard_store.h"

namespace placement::services {

absl::StatusOr<v1::ListPoolsResponse> ReadPools(storage::DbSession& session,
                                                const PageRequest& page) {
  absl::StatusOr<storage::PoolPage> pools =
      storage::ListPools(session, page.size, page.after);
  if (!pools.ok()) return pools.status();
  v1::ListPoolsResponse response;
  for (const storage::PoolRecord& record : pools->pools) {
    *response.add_pools() =
        PoolToProto(record.pool, record.create_time, record.update_time);
  }
  if (pools->more) {
    response.set_next_page_token(
        EncodePageToken(pools->pools.back().pool.name));
  }
  return response;
}

absl::StatusOr<v1::GetPoolResponse> ReadPool(storage::DbSession& session,
                                             const std::string& name) {
  absl::StatusOr<storage::PoolRecord> pool = storage::GetPool(session, name);
  if (!pool.ok()) return pool.status();
  v1::GetPoolResponse response;
  *response.mutable_pool() =
      PoolToProto(pool->pool, pool->create_time, pool->update_time);
  return response;
}

absl::Status CheckCostTeams(const std::optional<Principal>& caller,
                            const CostRequest& request) {
  for (const std::string& team : request.query.teams) {
    if (absl::Status s =
            CheckTeam(caller, team, "the cost named in filter.teams");
        !s.ok()) {
      return s;
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<v1::GetCostReportResponse> ReadCostReport(
    storage::DbSession& session, CostRequest request,
    const std::optional<Principal>& caller) {
  if (absl::Status s = CheckCostTeams(caller, request); !s.ok()) return s;
  if (request.query.teams.empty()) request.query.teams = TeamsOfListing(caller);
  if (!request.query.skus.empty()) {
    absl::StatusOr<std::vector<core::GpuSku>> catalog =
        storage::ListSkus(session);
    if (!catalog.ok()) return catalog.status();
    core::FieldViolations violations =
        CheckCostSkus(request.query.skus, *catalog);
    if (!violations.empty()) {
      return core::InvalidArgumentWithViolations(violations);
    }
  }
  absl::StatusOr<storage::CostPage> page = storage::GetCostReport(
      session, request.query, request.after, request.page_size);
  if (!page.ok()) return page.status();
  v1::GetCostReportResponse response;
  CostPageToProto(*page, request, &response);
  return response;
}

absl::StatusOr<v1::GetPlanResponse> ReadPlan(
    storage::DbSession& session, const std::string& plan_id,
    const std::optional<Principal>& caller) {
  absl::StatusOr<storage::StoredPlan> stored =
      storage::GetPlan(session, plan_id);
  if (!stored.ok()) return stored.status();
  if (absl::Status s =
          CheckTeam(caller, stored->team, absl::StrCat("plan ", plan_id));
      !s.ok()) {
    return s;
  }
  v1::GetPlanResponse response;
  if (!response.mutable_request()->ParseFromString(stored->request)) {
    return absl::DataLossError("stored request does not parse");
  }
  if (absl::Status parsed =
          ResponseFromStored(*stored, response.mutable_plan());
      !parsed.ok()) {
    return parsed;
  }
  return response;
}

absl::StatusOr<v1::GetPlanAccuracyResponse> ReadPlanAccuracy(
    storage::DbSession& session, absl::Time from, absl::Time to,
    const std::optional<Principal>& caller) {
  absl::StatusOr<std::vector<storage::SkuAccuracyRow>> rows =
      storage::PlanAccuracy(session, from, to, TeamsOfListing(caller));
  if (!rows.ok()) return rows.status();
  v1::GetPlanAccuracyResponse response;
  for (const storage::SkuAccuracyRow& row : *rows) {
    SkuAccuracyToProto(row, response.add_skus());
  }
  return response;
}

absl::StatusOr<v1::GetBakeOffStatusResponse> ReadBakeOffStatus(
    storage::DbSession& session, const CatalogSnapshot& snapshot,
    const std::string& plan_id, const std::optional<Principal>& caller) {
  absl::StatusOr<BakeOffReadings> readings =
      ReadBakeOff(session, plan_id, caller);
  if (!readings.ok()) return readings.status();
  absl::StatusOr<std::vector<core::BakeOffUpload>> uploads =
      UploadsOf(*readings);
  if (!uploads.ok()) return uploads.status();
  v1::GetBakeOffStatusResponse response;
  BakeOffStatusToProto(*readings, RecordedPlanOn(snapshot, *readings), *uploads,
                       &response);
  return response;
}

absl::StatusOr<v1::ListStandardsResponse> ReadStandards(
    storage::DbSession& session, const storage::StandardCursor& cursor,
    int page_size, bool include_retired,
    const std::optional<Principal>& caller) {
  absl::StatusOr<storage::StandardPage> standards = storage::ListStandards(
      session, cursor, page_size, include_retired, TeamsOfListing(caller));
  if (!standards.ok()) return standards.status();
  v1::ListStandardsResponse response;
  for (const storage::StandardRecord& record : standards->standards) {
    StandardToProto(record, response.add_standards());
  }
  if (standards->more) {
    const core::Standard& last = standards->standards.back().standard;
    response.set_next_page_token(
        EncodePageToken(TimeIdKeyText(last.created, last.standard_id)));
  }
  return response;
}

}  // namespace placement::services
