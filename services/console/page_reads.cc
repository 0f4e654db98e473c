#include "services/console/page_reads.h"

#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/civil_time.h"
#include "absl/time/time.h"
#include "core/plan/plan_types.h"
#include "services/api/cost_request.h"
#include "services/api/page_token.h"
#include "services/api/placement_convert.h"
#include "services/auth/team_access.h"
#include "services/console/figures.h"
#include "services/console/render/proto_text.h"
#include "services/rpc/plan_on_snapshot.h"
#include "services/rpc/readings.h"
#include "storage/stores/plan_listing.h"

namespace placement::services::console {
namespace {

// Names a section the viewer's role does not let them read.
bool Allowed(const ReadContext& context, const char* method,
             absl::string_view section) {
  if (context.viewer.MayRead(method)) return true;
  context.frame->withheld.push_back(
      absl::StrCat(section, " (", MethodShortName(method), ")"));
  return false;
}

int64_t UnixSeconds(absl::CivilDay day) {
  return absl::ToUnixSeconds(absl::FromCivil(day, absl::UTCTimeZone()));
}

v1::GetCostReportRequest CostRequestFor(
    const DayRange& range, std::initializer_list<v1::CostDimension> group_by,
    const std::string& pool = "") {
  v1::GetCostReportRequest request;
  request.mutable_start_time()->set_seconds(UnixSeconds(range.first));
  request.mutable_end_time()->set_seconds(UnixSeconds(range.end));
  for (v1::CostDimension d : group_by) request.add_group_by(d);
  if (!pool.empty()) request.mutable_filter()->add_pools(pool);
  return request;
}

// Every row of `request`'s report, page by page as a client pages through
// GetCostReport, up to kMaxCostRows (`*truncated` then).
absl::StatusOr<std::vector<v1::CostReportRow>> CostRows(
    const ReadContext& context, v1::GetCostReportRequest request,
    bool* truncated = nullptr) {
  std::vector<v1::CostReportRow> rows;
  request.set_page_size(kMaxPageSize);
  do {
    absl::StatusOr<CostRequest> valid = ValidateCostRequest(request);
    if (!valid.ok()) return valid.status();
    absl::StatusOr<v1::GetCostReportResponse> page =
        ReadCostReport(context.session, *valid, context.viewer.principal());
    if (!page.ok()) return page.status();
    for (v1::CostReportRow& row : *page->mutable_rows()) {
      rows.push_back(std::move(row));
    }
    request.set_page_token(page->next_page_token());
    if (static_cast<int>(rows.size()) >= kMaxCostRows &&
        !request.page_token().empty()) {
      if (truncated != nullptr) *truncated = true;
      break;
    }
  } while (!request.page_token().empty());
  return rows;
}

// The pools' cost over the range, by name: each pool's row and its days.
absl::StatusOr<std::map<std::string, PoolCost>> PoolCosts(
    const ReadContext& context, const DayRange& range) {
  absl::StatusOr<std::vector<v1::CostReportRow>> totals =
      CostRows(context, CostRequestFor(range, {v1::COST_DIMENSION_POOL}));
  if (!totals.ok()) return totals.status();
  absl::StatusOr<std::vector<v1::CostReportRow>> daily = CostRows(
      context,
      CostRequestFor(range, {v1::COST_DIMENSION_POOL, v1::COST_DIMENSION_DAY}));
  if (!daily.ok()) return daily.status();
  std::map<std::string, std::vector<v1::CostReportRow>> days;
  for (v1::CostReportRow& row : *daily) days[row.pool()].push_back(row);
  std::map<std::string, PoolCost> costs;
  for (const v1::CostReportRow& row : *totals) {
    costs[row.pool()] = PoolCostOf(row, days[row.pool()]);
  }
  return costs;
}

// The standards in force, by pool (ListStandards' first 1000; far more than
// a fleet holds: every replica reads them all into its snapshot).
absl::StatusOr<std::map<std::string, std::vector<v1::Standard>>>
StandardsByPool(const ReadContext& context) {
  absl::StatusOr<v1::ListStandardsResponse> standards =
      ReadStandards(context.session, storage::StandardCursor{}, kMaxPageSize,
                    false, context.viewer.principal());
  if (!standards.ok()) return standards.status();
  std::map<std::string, std::vector<v1::Standard>> by_pool;
  for (const v1::Standard& s : standards->standards()) {
    by_pool[s.pool()].push_back(s);
  }
  return by_pool;
}

PoolFailures FailuresOfPool(const CatalogSnapshot& snapshot,
                            const std::string& pool) {
  return FailuresOf(snapshot.PoolReliability(pool, false),
                    snapshot.PoolReliability(pool, true));
}

// What PlacePlan would answer now for the request that proved `standard`.
StandardNow CheckNow(const ReadContext& context, const v1::Standard& standard) {
  StandardNow now;
  absl::StatusOr<v1::GetPlanResponse> plan =
      ReadPlan(context.session, standard.plan_id(), context.viewer.principal());
  if (!plan.ok()) {
    now.error = std::string(plan.status().message());
    return now;
  }
  core::PlanRequest request = PlanRequestFromProto(plan->request());
  absl::Status valid =
      ValidatePlanOnSnapshot(plan->request(), context.snapshot, &request);
  if (!valid.ok()) {
    now.error = std::string(valid.message());
    return now;
  }
  absl::StatusOr<core::PlanResult> result =
      PlanOnSnapshot(request, context.snapshot, plan->request().team(),
                     context.now, context.pool_state_max_age);
  if (!result.ok()) {
    now.error = std::string(result.status().message());
    return now;
  }
  now.checked = true;
  if (result->standard.has_value()) {
    const core::StandardApplication& s = *result->standard;
    now.governed_by = s.standard_id;
    now.applied = s.applied;
    now.reason = s.reason;
    now.contradicted = s.contradicted;
    now.contradictions = s.contradictions;
  }
  return now;
}

}  // namespace

absl::StatusOr<PoolsPage> ReadPoolsPage(const ReadContext& context,
                                        const DayRange& range) {
  PoolsPage page;
  page.range = range;
  absl::StatusOr<v1::ListPoolsResponse> pools =
      ReadPools(context.session, PageRequest{kMaxPageSize, ""});
  if (!pools.ok()) return pools.status();
  page.pools = *std::move(pools);
  if (Allowed(context, reads_as::kGetCostReport, "cost per successful step")) {
    absl::StatusOr<std::map<std::string, PoolCost>> cost =
        PoolCosts(context, range);
    if (!cost.ok()) return cost.status();
    page.cost = *std::move(cost);
  }
  if (Allowed(context, reads_as::kListBenchmarkRuns,
              "failure rates from the runs")) {
    page.failures.emplace();
    for (const v1::Pool& pool : page.pools.pools()) {
      (*page.failures)[pool.name()] =
          FailuresOfPool(context.snapshot, pool.name());
    }
  }
  if (Allowed(context, reads_as::kListStandards, "standards")) {
    absl::StatusOr<std::map<std::string, std::vector<v1::Standard>>> standards =
        StandardsByPool(context);
    if (!standards.ok()) return standards.status();
    page.standards = *std::move(standards);
  }
  return page;
}

absl::StatusOr<PoolPage> ReadPoolPage(const ReadContext& context,
                                      const std::string& name,
                                      const DayRange& range) {
  PoolPage page;
  page.range = range;
  absl::StatusOr<v1::GetPoolResponse> pool = ReadPool(context.session, name);
  if (!pool.ok()) return pool.status();
  page.pool = pool->pool();
  if (Allowed(context, reads_as::kGetCostReport, "cost per successful step")) {
    PoolPage::Cost cost;
    absl::StatusOr<std::vector<v1::CostReportRow>> total = CostRows(
        context, CostRequestFor(range, {v1::COST_DIMENSION_POOL}, name));
    if (!total.ok()) return total.status();
    absl::StatusOr<std::vector<v1::CostReportRow>> by_day = CostRows(
        context, CostRequestFor(range, {v1::COST_DIMENSION_DAY}, name));
    if (!by_day.ok()) return by_day.status();
    absl::StatusOr<std::vector<v1::CostReportRow>> by_outcome = CostRows(
        context, CostRequestFor(range, {v1::COST_DIMENSION_OUTCOME}, name));
    if (!by_outcome.ok()) return by_outcome.status();
    absl::StatusOr<std::vector<v1::CostReportRow>> by_day_and_outcome =
        CostRows(context, CostRequestFor(range,
                                         {v1::COST_DIMENSION_OUTCOME,
                                          v1::COST_DIMENSION_DAY},
                                         name));
    if (!by_day_and_outcome.ok()) return by_day_and_outcome.status();
    cost.total = PoolCostOf(
        total->empty() ? v1::CostReportRow() : total->front(), *by_day);
    cost.by_day = *std::move(by_day);
    cost.by_outcome = *std::move(by_outcome);
    cost.by_day_and_outcome = *std::move(by_day_and_outcome);
    page.cost = std::move(cost);
  }
  if (Allowed(context, reads_as::kListBenchmarkRuns,
              "failure rates from the runs")) {
    page.failures = FailuresOfPool(context.snapshot, name);
  }
  if (Allowed(context, reads_as::kListStandards, "standards")) {
    absl::StatusOr<std::map<std::string, std::vector<v1::Standard>>> standards =
        StandardsByPool(context);
    if (!standards.ok()) return standards.status();
    page.standards = (*standards)[name];
  }
  return page;
}

absl::StatusOr<PlansPage> ReadPlansPage(const ReadContext& context,
                                        const std::string& before) {
  absl::StatusOr<storage::PlanSummaryPage> listed =
      storage::ListRecentPlans(context.session, before, kPlansPerPage,
                               TeamsOfListing(context.viewer.principal()));
  if (!listed.ok()) return listed.status();
  PlansPage page;
  for (const storage::PlanSummary& summary : listed->plans) {
    PlanRow row;
    row.plan_id = summary.plan_id;
    row.created_at = summary.created_at;
    row.team = summary.team;
    row.recipe_key = summary.recipe_key;
    row.objective = summary.objective;
    row.chosen_pool = summary.chosen_pool;
    row.chosen_sku = summary.chosen_sku;
    row.warnings = summary.warnings;
    v1::PlacePlanRequest request;
    if (request.ParseFromString(summary.request)) {
      row.model = request.recipe().model();
      row.method =
          EnumText(v1::FineTuneMethod_descriptor(), request.recipe().method());
      row.total_steps = request.total_steps();
    }
    page.plans.push_back(std::move(row));
  }
  if (listed->more) page.older_than = page.plans.back().plan_id;
  return page;
}

absl::StatusOr<PlanPage> ReadPlanPage(const ReadContext& context,
                                      const std::string& plan_id) {
  PlanPage page;
  absl::StatusOr<v1::GetPlanResponse> plan =
      ReadPlan(context.session, plan_id, context.viewer.principal());
  if (!plan.ok()) return plan.status();
  page.plan = *std::move(plan);
  if (Allowed(context, reads_as::kGetBakeOffStatus, "the bake-off's status")) {
    absl::StatusOr<v1::GetBakeOffStatusResponse> status = ReadBakeOffStatus(
        context.session, context.snapshot, plan_id, context.viewer.principal());
    if (!status.ok()) return status.status();
    page.bake_off = *std::move(status);
  }
  return page;
}

absl::StatusOr<AccuracyPage> ReadAccuracyPage(
    const ReadContext& context, std::optional<absl::CivilDay> from,
    std::optional<absl::CivilDay> to) {
  AccuracyPage page;
  page.from = from;
  page.to = to;
  const absl::Time start =
      from ? absl::FromCivil(*from, absl::UTCTimeZone()) : absl::InfinitePast();
  const absl::Time end = to ? absl::FromCivil(*to + 1, absl::UTCTimeZone())
                            : absl::InfiniteFuture();
  absl::StatusOr<v1::GetPlanAccuracyResponse> accuracy =
      ReadPlanAccuracy(context.session, start, end, context.viewer.principal());
  if (!accuracy.ok()) return accuracy.status();
  page.accuracy = *std::move(accuracy);
  for (const v1::SkuAccuracy& sku : page.accuracy.skus()) {
    absl::StatusOr<std::vector<storage::PlanOutcomePoint>> outcomes =
        storage::ListPlanOutcomes(context.session, sku.sku(), start, end,
                                  kAccuracyPointsPerSku,
                                  TeamsOfListing(context.viewer.principal()));
    if (!outcomes.ok()) return outcomes.status();
    AccuracyPoints points;
    points.sku = sku.sku();
    points.limit = kAccuracyPointsPerSku;
    for (const storage::PlanOutcomePoint& o : *outcomes) {
      const std::string label = absl::StrCat("run ", o.run_id.substr(0, 8));
      points.peak_memory_gb.push_back({o.predicted_peak_memory_gb,
                                       o.observed_peak_memory_gb, std::nullopt,
                                       label});
      if (o.observed_gpu_hours_per_successful_step.has_value()) {
        points.gpu_hours_per_step.push_back(
            {o.predicted_gpu_hours_per_successful_step,
             *o.observed_gpu_hours_per_successful_step, std::nullopt, label});
      }
    }
    page.points.push_back(std::move(points));
  }
  return page;
}

absl::StatusOr<CostPage> ReadCostPage(const ReadContext& context,
                                      CostGrouping by, const DayRange& range,
                                      bool with_table) {
  CostPage page;
  page.range = range;
  page.by = by;
  const v1::CostDimension dimension =
      by == CostGrouping::kSku    ? v1::COST_DIMENSION_SKU
      : by == CostGrouping::kPool ? v1::COST_DIMENSION_POOL
                                  : v1::COST_DIMENSION_TEAM;
  if (with_table) {
    absl::StatusOr<std::vector<v1::CostReportRow>> total =
        CostRows(context, CostRequestFor(range, {}));
    if (!total.ok()) return total.status();
    if (!total->empty()) {
      page.total = total->front();
      page.has_total = true;
    }
    absl::StatusOr<std::vector<v1::CostReportRow>> rows =
        CostRows(context, CostRequestFor(range, {dimension}), &page.truncated);
    if (!rows.ok()) return rows.status();
    page.rows = *std::move(rows);
  }
  absl::StatusOr<std::vector<v1::CostReportRow>> daily = CostRows(
      context, CostRequestFor(range, {dimension, v1::COST_DIMENSION_DAY}),
      &page.truncated);
  if (!daily.ok()) return daily.status();
  page.daily_rows = *std::move(daily);
  return page;
}

absl::StatusOr<StandardsPage> ReadStandardsPage(const ReadContext& context,
                                                const std::string& page_token) {
  storage::StandardCursor cursor;
  absl::StatusOr<std::string> key = DecodePageToken(page_token, "page_token");
  if (!key.ok()) return key.status();
  if (!key->empty()) {
    absl::StatusOr<TimeIdKey> last = ParseTimeIdKey(*key);
    if (!last.ok()) return last.status();
    cursor = {last->time, last->id};
  }
  absl::StatusOr<v1::ListStandardsResponse> standards =
      ReadStandards(context.session, cursor, kStandardsPerPage, true,
                    context.viewer.principal());
  if (!standards.ok()) return standards.status();
  StandardsPage page;
  page.standards.assign(standards->standards().begin(),
                        standards->standards().end());
  page.next_page_token = standards->next_page_token();
  if (Allowed(context, reads_as::kGetPlan,
              "what a plan of a standard's recipe says now")) {
    page.now.emplace();
    for (const v1::Standard& s : page.standards) {
      if (s.active()) (*page.now)[s.standard_id()] = CheckNow(context, s);
    }
  }
  return page;
}

}  // namespace placement::services::console
