// GetCostReport's request validation, fingerprint and page tokens: pure,
// no server and no database.
#include "services/api/cost_request.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace placement::services {
namespace {

using ::testing::Contains;

constexpr int64_t kDay = 86400;
constexpr int64_t kJan1 = 1767225600;  // 2026-01-01T00:00:00Z

v1::GetCostReportRequest January() {
  v1::GetCostReportRequest request;
  request.mutable_start_time()->set_seconds(kJan1);
  request.mutable_end_time()->set_seconds(kJan1 + 31 * kDay);
  return request;
}

std::vector<std::string> FieldsOf(const absl::Status& status) {
  std::vector<std::string> fields;
  for (const core::FieldViolation& v : core::ViolationsFromStatus(status)) {
    fields.push_back(v.field);
  }
  return fields;
}

// The fields a refused request names.
std::vector<std::string> Refused(const v1::GetCostReportRequest& request) {
  absl::StatusOr<CostRequest> valid = ValidateCostRequest(request);
  EXPECT_EQ(valid.status().code(), absl::StatusCode::kInvalidArgument);
  return FieldsOf(valid.status());
}

TEST(CostRequestTest, AValidRequestBecomesItsQuery) {
  v1::GetCostReportRequest request = January();
  request.mutable_filter()->add_skus("H100-SXM5-80GB");
  request.mutable_filter()->add_methods(v1::FINE_TUNE_METHOD_LORA);
  request.add_group_by(v1::COST_DIMENSION_POOL);
  request.add_group_by(v1::COST_DIMENSION_WEEK);
  request.set_page_size(10);
  absl::StatusOr<CostRequest> valid = ValidateCostRequest(request);
  ASSERT_TRUE(valid.ok()) << valid.status();
  EXPECT_EQ(valid->query.start, absl::CivilDay(2026, 1, 1));
  EXPECT_EQ(valid->query.end, absl::CivilDay(2026, 2, 1));
  EXPECT_EQ(valid->query.skus, std::vector<std::string>{"H100-SXM5-80GB"});
  EXPECT_EQ(valid->query.methods, std::vector<std::string>{"LORA"});
  EXPECT_TRUE(valid->query.by_pool);
  EXPECT_FALSE(valid->query.by_sku);
  EXPECT_EQ(valid->query.period, storage::CostPeriod::kWeek);
  EXPECT_EQ(valid->page_size, 10);
  EXPECT_FALSE(valid->after.has_value());
}

TEST(CostRequestTest, TheRangeIsRequiredAndMidnightToMidnight) {
  EXPECT_THAT(Refused(v1::GetCostReportRequest()), Contains("start_time"));
  EXPECT_THAT(Refused(v1::GetCostReportRequest()), Contains("end_time"));

  v1::GetCostReportRequest noon = January();
  noon.mutable_start_time()->set_seconds(kJan1 + kDay / 2);
  EXPECT_THAT(Refused(noon), Contains("start_time"));

  v1::GetCostReportRequest empty = January();
  empty.mutable_end_time()->set_seconds(kJan1);
  EXPECT_THAT(Refused(empty), Contains("end_time"));

  v1::GetCostReportRequest backwards = January();
  backwards.mutable_start_time()->set_seconds(kJan1 + 40 * kDay);
  EXPECT_THAT(Refused(backwards), Contains("start_time"));
}

TEST(CostRequestTest, FilterViolationsNameTheEntry) {
  v1::GetCostReportRequest request = January();
  request.mutable_filter()->add_pools("gpu-a");
  request.mutable_filter()->add_pools("");
  request.mutable_filter()->add_teams("");  // a run's team may be empty
  request.mutable_filter()->add_methods(v1::FINE_TUNE_METHOD_UNSPECIFIED);
  request.mutable_filter()->add_outcomes(static_cast<v1::RunOutcome>(99));
  const std::vector<std::string> fields = Refused(request);
  EXPECT_THAT(fields, Contains("filter.pools[1]"));
  EXPECT_THAT(fields, Contains("filter.methods[0]"));
  EXPECT_THAT(fields, Contains("filter.outcomes[0]"));
  EXPECT_THAT(fields, ::testing::Not(Contains("filter.teams[0]")));
}

TEST(CostRequestTest, GroupingViolationsNameTheEntry) {
  v1::GetCostReportRequest request = January();
  request.add_group_by(v1::COST_DIMENSION_SKU);
  request.add_group_by(v1::COST_DIMENSION_SKU);  // repeated
  request.add_group_by(v1::COST_DIMENSION_DAY);
  request.add_group_by(v1::COST_DIMENSION_MONTH);  // a second period
  request.add_group_by(v1::COST_DIMENSION_UNSPECIFIED);
  const std::vector<std::string> fields = Refused(request);
  EXPECT_THAT(fields, Contains("group_by[1]"));
  EXPECT_THAT(fields, Contains("group_by[3]"));
  EXPECT_THAT(fields, Contains("group_by[4]"));
  EXPECT_THAT(fields, ::testing::Not(Contains("group_by[2]")));
}

TEST(CostRequestTest, ABadPageSizeIsNamed) {
  v1::GetCostReportRequest request = January();
  request.set_page_size(-1);
  EXPECT_THAT(Refused(request), Contains("page_size"));
}

TEST(CostRequestTest, ThePageTokenOfAPageResumesAfterItsLastRow) {
  v1::GetCostReportRequest request = January();
  request.add_group_by(v1::COST_DIMENSION_TEAM);
  request.set_page_size(1);
  absl::StatusOr<CostRequest> first = ValidateCostRequest(request);
  ASSERT_TRUE(first.ok()) << first.status();

  storage::CostPage page;
  page.more = true;
  storage::CostRow row;
  // Separators in the values survive: each field is length-prefixed.
  row.key.team = "ml:infra 3:x";
  row.key.period = "2026-01-05";
  page.rows.push_back(row);
  v1::GetCostReportResponse response;
  CostPageToProto(page, *first, &response);
  ASSERT_EQ(response.rows_size(), 1);
  ASSERT_FALSE(response.next_page_token().empty());

  // The same request with the token, another page size allowed.
  request.set_page_token(response.next_page_token());
  request.set_page_size(5);
  absl::StatusOr<CostRequest> second = ValidateCostRequest(request);
  ASSERT_TRUE(second.ok()) << second.status();
  ASSERT_TRUE(second->after.has_value());
  EXPECT_EQ(*second->after, row.key);
  EXPECT_EQ(second->fingerprint, first->fingerprint);

  // The last page has no token.
  page.more = false;
  v1::GetCostReportResponse last;
  CostPageToProto(page, *second, &last);
  EXPECT_TRUE(last.next_page_token().empty());
}

TEST(CostRequestTest, CursorRoundTripsThroughTheToken) {
  storage::CostGroupKey key;
  key.sku = "H100-SXM5-80GB";
  key.pool = "";
  key.recipe_key = "0123456789abcdef";
  key.outcome = "SUCCEEDED";
  const std::string token = CostPageToken("fp", key);
  absl::StatusOr<std::optional<storage::CostGroupKey>> back =
      CostCursorFromPageToken("fp", token);
  ASSERT_TRUE(back.ok()) << back.status();
  ASSERT_TRUE(back->has_value());
  EXPECT_EQ(**back, key);

  absl::StatusOr<std::optional<storage::CostGroupKey>> none =
      CostCursorFromPageToken("fp", "");
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->has_value());
}

TEST(CostRequestTest, ATokenOfAnotherRequestIsRefused) {
  v1::GetCostReportRequest request = January();
  absl::StatusOr<CostRequest> valid = ValidateCostRequest(request);
  ASSERT_TRUE(valid.ok());
  storage::CostPage page;
  page.more = true;
  page.rows.emplace_back();
  v1::GetCostReportResponse response;
  CostPageToProto(page, *valid, &response);

  // The range changed between pages.
  v1::GetCostReportRequest other = January();
  other.mutable_end_time()->set_seconds(kJan1 + 7 * kDay);
  other.set_page_token(response.next_page_token());
  EXPECT_THAT(Refused(other), Contains("page_token"));
  EXPECT_NE(CostRequestFingerprint(other), CostRequestFingerprint(request));
}

TEST(CostRequestTest, ATamperedTokenIsRefused) {
  storage::CostGroupKey key;
  key.sku = "L40S-PCIE-48GB";
  const std::string token = CostPageToken("fp", key);

  for (const std::string& bad :
       {std::string("not a token"), token + "x", token.substr(1),
        CostPageToken("other", key)}) {
    absl::StatusOr<std::optional<storage::CostGroupKey>> cursor =
        CostCursorFromPageToken("fp", bad);
    EXPECT_EQ(cursor.status().code(), absl::StatusCode::kInvalidArgument)
        << bad;
    EXPECT_THAT(FieldsOf(cursor.status()), Contains("page_token")) << bad;
  }
}

TEST(CostRequestTest, SkuFilterNamesCardsExactly) {
  core::GpuSku a100;
  a100.id = "A100-SXM4-80GB";
  const std::vector<core::GpuSku> catalog = {a100};
  EXPECT_TRUE(CheckCostSkus({"A100-SXM4-80GB"}, catalog).empty());
  const core::FieldViolations violations =
      CheckCostSkus({"A100-SXM4-80GB", "A100"}, catalog);
  ASSERT_EQ(violations.size(), 1u);
  EXPECT_EQ(violations[0].field, "filter.skus[1]");
}

}  // namespace
}  // namespace placement::services
