#ifndef PLACEMENT_SERVICES_CONSOLE_PAGE_READS_H_
#define PLACEMENT_SERVICES_CONSOLE_PAGE_READS_H_

// What each page reads, on one database worker's session and the replica's
// snapshot: through the readings the RPC handlers call
// (services/rpc/readings.h), the same request validation (a cost report is
// a GetCostReportRequest checked by ValidateCostRequest), the snapshot
// PlacePlan reads (failure rates, planning), and two listings the API has
// no list for (recent plans, the outcomes behind accuracy). A section the
// viewer's role may not read is not read at all, and is named in
// `frame->withheld`. Every read is bounded (page sizes, row limits).

#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "services/console/access.h"
#include "services/console/models.h"
#include "services/plan/evidence_cache.h"
#include "storage/session/db_session.h"

namespace placement::services::console {

// Rows a page reads from GetCostReport at most (20 pages of 1000).
inline constexpr int kMaxCostRows = 20000;
// Plans a page of the plan list shows; standards a page of standards.
inline constexpr int kPlansPerPage = 50;
inline constexpr int kStandardsPerPage = 50;
// Outcomes drawn per SKU on the accuracy page (the newest).
inline constexpr int kAccuracyPointsPerSku = 500;

// Everything a read needs besides its page's own parameters.
struct ReadContext {
  storage::DbSession& session;
  const CatalogSnapshot& snapshot;
  const Viewer& viewer;
  PageFrame* frame;  // its `withheld` is appended to
  absl::Time now;    // when the page began
  absl::Duration pool_state_max_age;
};

absl::StatusOr<PoolsPage> ReadPoolsPage(const ReadContext& context,
                                        const DayRange& range);
// NOT_FOUND for an unknown pool.
absl::StatusOr<PoolPage> ReadPoolPage(const ReadContext& context,
                                      const std::string& name,
                                      const DayRange& range);
// `before`: a plan id (the page starts after it), "" for the newest.
absl::StatusOr<PlansPage> ReadPlansPage(const ReadContext& context,
                                        const std::string& before);
// NOT_FOUND for an unknown plan.
absl::StatusOr<PlanPage> ReadPlanPage(const ReadContext& context,
                                      const std::string& plan_id);
// [from, to] in UTC days, either open.
absl::StatusOr<AccuracyPage> ReadAccuracyPage(
    const ReadContext& context, std::optional<absl::CivilDay> from,
    std::optional<absl::CivilDay> to);
// `with_table`: the rows by group and the total too (the page; the CSV
// needs only the daily rows).
absl::StatusOr<CostPage> ReadCostPage(const ReadContext& context,
                                      CostGrouping by, const DayRange& range,
                                      bool with_table);
// `page_token`: ListStandards' own (INVALID_ARGUMENT naming page_token when
// it is not one).
absl::StatusOr<StandardsPage> ReadStandardsPage(const ReadContext& context,
                                                const std::string& page_token);

}  // namespace placement::services::console

#endif  // PLACEMENT_SERVICES_CONSOLE_PAGE_READS_H_
