#include "services/console/pages.h"

#include <optional>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "services/console/render/layout.h"
#include "services/console/render/pages.h"

namespace placement::services::console {
namespace {

constexpr int kDefaultDays = 30;
constexpr int kMaxDays = 366;

HttpResponse Document(const PageFrame& frame, std::string content) {
  HttpResponse response;
  response.body = RenderDocument(frame, content);
  return response;
}

// The last `days` UTC days, today included.
DayRange LastDays(absl::CivilDay today, int days) {
  return {today + 1 - days, today + 1};
}

// "from" and "to" (days, both included; by default the last 30 days): a
// violation when from is after to or the range is longer than kMaxDays.
DayRange FromTo(PageQuery& query, absl::CivilDay today) {
  const std::optional<absl::CivilDay> to = query.Day("to");
  const std::optional<absl::CivilDay> from = query.Day("from");
  const absl::CivilDay last = to.value_or(today);
  const absl::CivilDay first = from.value_or(last - (kDefaultDays - 1));
  if (first > last) {
    query.Refuse("from", "must not be after to");
    return LastDays(today, kDefaultDays);
  }
  if (last - first + 1 > kMaxDays) {
    query.Refuse("from", absl::StrCat("at most ", kMaxDays,
                                      " days before to (both included)"));
    return LastDays(today, kDefaultDays);
  }
  return {first, last + 1};
}

CostGrouping Grouping(PageQuery& query) {
  const std::string by = query.Choice("by", {"team", "sku", "pool"}, "team");
  if (by == "sku") return CostGrouping::kSku;
  if (by == "pool") return CostGrouping::kPool;
  return CostGrouping::kTeam;
}

absl::StatusOr<PageWork> PoolsWork(const std::vector<QueryParam>& params,
                                   absl::CivilDay today) {
  PageQuery query(params, {"days"});
  const int days = query.Int("days", 1, kMaxDays, kDefaultDays);
  if (absl::Status status = query.Finish(); !status.ok()) return status;
  return PageWork([range = LastDays(today, days)](
                      const ReadContext& c) -> absl::StatusOr<HttpResponse> {
    c.frame->title = "Pools";
    absl::StatusOr<PoolsPage> page = ReadPoolsPage(c, range);
    if (!page.ok()) return page.status();
    return Document(*c.frame, RenderPoolsPage(*page));
  });
}

absl::StatusOr<PageWork> PoolWork(const std::vector<QueryParam>& params,
                                  absl::CivilDay today) {
  PageQuery query(params, {"name", "days"});
  const std::string name = query.PoolName("name", /*required=*/true);
  const int days = query.Int("days", 1, kMaxDays, kDefaultDays);
  if (absl::Status status = query.Finish(); !status.ok()) return status;
  return PageWork([name, range = LastDays(today, days)](
                      const ReadContext& c) -> absl::StatusOr<HttpResponse> {
    c.frame->title = absl::StrCat("Pool ", name);
    absl::StatusOr<PoolPage> page = ReadPoolPage(c, name, range);
    if (!page.ok()) return page.status();
    return Document(*c.frame, RenderPoolPage(*page));
  });
}

absl::StatusOr<PageWork> PlansWork(const std::vector<QueryParam>& params) {
  PageQuery query(params, {"before"});
  const std::string before = query.Uuid("before", /*required=*/false);
  if (absl::Status status = query.Finish(); !status.ok()) return status;
  return PageWork(
      [before](const ReadContext& c) -> absl::StatusOr<HttpResponse> {
        c.frame->title = "Plans";
        absl::StatusOr<PlansPage> page = ReadPlansPage(c, before);
        if (!page.ok()) return page.status();
        return Document(*c.frame, RenderPlansPage(*page));
      });
}

absl::StatusOr<PageWork> PlanWork(const std::vector<QueryParam>& params) {
  PageQuery query(params, {"id"});
  const std::string id = query.Uuid("id", /*required=*/true);
  if (absl::Status status = query.Finish(); !status.ok()) return status;
  return PageWork([id](const ReadContext& c) -> absl::StatusOr<HttpResponse> {
    c.frame->title = absl::StrCat("Plan ", id);
    absl::StatusOr<PlanPage> page = ReadPlanPage(c, id);
    if (!page.ok()) return page.status();
    return Document(*c.frame, RenderPlanPage(*page));
  });
}

absl::StatusOr<PageWork> AccuracyWork(const std::vector<QueryParam>& params) {
  PageQuery query(params, {"from", "to"});
  const std::optional<absl::CivilDay> from = query.Day("from");
  const std::optional<absl::CivilDay> to = query.Day("to");
  if (from && to && *from > *to) query.Refuse("from", "must not be after to");
  if (absl::Status status = query.Finish(); !status.ok()) return status;
  return PageWork(
      [from, to](const ReadContext& c) -> absl::StatusOr<HttpResponse> {
        c.frame->title = "Accuracy: predicted against observed";
        absl::StatusOr<AccuracyPage> page = ReadAccuracyPage(c, from, to);
        if (!page.ok()) return page.status();
        return Document(*c.frame, RenderAccuracyPage(*page));
      });
}

absl::StatusOr<PageWork> CostWork(const std::vector<QueryParam>& params,
                                  absl::CivilDay today, bool csv) {
  PageQuery query(params, {"by", "from", "to"});
  const CostGrouping by = Grouping(query);
  const DayRange range = FromTo(query, today);
  if (absl::Status status = query.Finish(); !status.ok()) return status;
  return PageWork([by, range,
                   csv](const ReadContext& c) -> absl::StatusOr<HttpResponse> {
    c.frame->title = "Cost per successful step";
    absl::StatusOr<CostPage> page = ReadCostPage(c, by, range, !csv);
    if (!page.ok()) return page.status();
    if (!csv) return Document(*c.frame, RenderCostPage(*page));
    HttpResponse response;
    response.content_type = "text/csv; charset=utf-8";
    response.body = RenderCostCsv(*page);
    // The name is made of checked values only (a grouping, two days).
    response.headers.emplace_back(
        "Content-Disposition",
        absl::StrCat("attachment; filename=\"cost-by-", CostGroupingName(by),
                     "-", absl::FormatCivilTime(range.first), "-to-",
                     absl::FormatCivilTime(range.end - 1), ".csv\""));
    return response;
  });
}

absl::StatusOr<PageWork> StandardsWork(const std::vector<QueryParam>& params) {
  PageQuery query(params, {"page_token"});
  const std::string page_token = query.PageToken("page_token");
  if (absl::Status status = query.Finish(); !status.ok()) return status;
  return PageWork(
      [page_token](const ReadContext& c) -> absl::StatusOr<HttpResponse> {
        c.frame->title = "Standards";
        absl::StatusOr<StandardsPage> page = ReadStandardsPage(c, page_token);
        if (!page.ok()) return page.status();
        return Document(*c.frame, RenderStandardsPage(*page));
      });
}

}  // namespace

absl::StatusOr<PageWork> PreparePage(PageId page,
                                     const std::vector<QueryParam>& params,
                                     absl::CivilDay today) {
  switch (page) {
    case PageId::kPools:
      return PoolsWork(params, today);
    case PageId::kPool:
      return PoolWork(params, today);
    case PageId::kPlans:
      return PlansWork(params);
    case PageId::kPlan:
      return PlanWork(params);
    case PageId::kAccuracy:
      return AccuracyWork(params);
    case PageId::kCost:
      return CostWork(params, today, /*csv=*/false);
    case PageId::kCostCsv:
      return CostWork(params, today, /*csv=*/true);
    case PageId::kStandards:
      return StandardsWork(params);
  }
  return absl::InternalError("a page without work");
}

}  // namespace placement::services::console
