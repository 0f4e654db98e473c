// The console's query checks: every refusal names the parameter, none
// repeats a value, and a token is never taken from a URL.
#include "services/console/http/query.h"

#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace placement::services::console {
namespace {

core::FieldViolations Refused(const std::string& target) {
  absl::StatusOr<RequestTarget> parsed = ParseTarget(target);
  EXPECT_FALSE(parsed.ok()) << target;
  if (parsed.ok()) return {};
  EXPECT_TRUE(absl::IsInvalidArgument(parsed.status()));
  return core::ViolationsFromStatus(parsed.status());
}

TEST(ParseTargetTest, SplitsPathAndDecodesParameters) {
  absl::StatusOr<RequestTarget> parsed =
      ParseTarget("/cost?by=pool&from=2026-01-01&note=a%20b+c");
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->path, "/cost");
  ASSERT_EQ(parsed->params.size(), 3u);
  EXPECT_EQ(parsed->params[0].name, "by");
  EXPECT_EQ(parsed->params[0].value, "pool");
  EXPECT_EQ(parsed->params[2].value, "a b c");
}

TEST(ParseTargetTest, PathIsNotDecoded) {
  absl::StatusOr<RequestTarget> parsed =
      ParseTarget("/assets/..%2fetc%2fpasswd");
  ASSERT_TRUE(parsed.ok());
  EXPECT_EQ(parsed->path, "/assets/..%2fetc%2fpasswd");
}

TEST(ParseTargetTest, ATokenInTheQueryIsRefusedWithoutRepeatingIt) {
  const std::string token = "plc_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789abcdefg";
  for (const std::string& target :
       {absl::StrCat("/pools?token=", token),
        absl::StrCat("/pools?access_token=", token),
        std::string("/pools?token=x"), absl::StrCat("/pools?days=", token),
        absl::StrCat("/pool?name=a&days=1%20", token)}) {
    core::FieldViolations violations = Refused(target);
    ASSERT_EQ(violations.size(), 1u) << target;
    EXPECT_TRUE(
        absl::StrContains(violations[0].description, "never accepted in a URL"))
        << target;
    EXPECT_FALSE(absl::StrContains(violations[0].description, "plc_A"));
  }
}

TEST(ParseTargetTest, ALongValueIsRefusedNamingItsParameter) {
  const std::string value(10000, 'x');
  core::FieldViolations violations =
      Refused(absl::StrCat("/pools?days=", value));
  ASSERT_EQ(violations.size(), 1u);
  EXPECT_EQ(violations[0].field, "days");
  EXPECT_TRUE(absl::StrContains(violations[0].description, "longer than 256"));
  EXPECT_FALSE(absl::StrContains(violations[0].description, "xxxx"));
  // Encoded, it is still too long once decoded.
  std::string encoded;
  for (int i = 0; i < 300; ++i) encoded += "%41";
  violations = Refused(absl::StrCat("/pools?days=", encoded));
  ASSERT_EQ(violations.size(), 1u);
  EXPECT_EQ(violations[0].field, "days");
}

TEST(ParseTargetTest, RefusesBadNamesEscapesControlsDuplicatesAndCount) {
  EXPECT_EQ(Refused("/pools?Days=1")[0].field, "query");
  EXPECT_EQ(Refused("/pools?<script>=1")[0].field, "query");
  EXPECT_FALSE(absl::StrContains(Refused("/pools?<script>=1")[0].description,
                                 "<script>"));
  EXPECT_EQ(Refused("/pools?days=%zz")[0].field, "days");
  EXPECT_EQ(Refused("/pools?days=%4")[0].field, "days");
  EXPECT_EQ(Refused("/pools?days=a%0Ab")[0].field, "days");
  EXPECT_EQ(Refused("/pools?days=1&days=2")[0].field, "days");
  std::string many = "/pools?";
  for (int i = 0; i < 20; ++i) absl::StrAppend(&many, "p", i, "=1&");
  EXPECT_EQ(Refused(many).back().field, "query");
  EXPECT_EQ(Refused("pools")[0].field, "target");
}

TEST(PageQueryTest, UnknownParametersAreNamed) {
  absl::StatusOr<RequestTarget> target = ParseTarget("/pools?days=7&color=red");
  ASSERT_TRUE(target.ok());
  PageQuery query(target->params, {"days"});
  EXPECT_EQ(query.Int("days", 1, 366, 30), 7);
  core::FieldViolations violations = core::ViolationsFromStatus(query.Finish());
  ASSERT_EQ(violations.size(), 1u);
  EXPECT_EQ(violations[0].field, "color");
  EXPECT_TRUE(absl::StrContains(violations[0].description, "takes days"));
}

TEST(PageQueryTest, EachReaderChecksItsValue) {
  absl::StatusOr<RequestTarget> target = ParseTarget(
      "/x?days=0&from=2026-02-30&by=week&id=not-a-uuid&name=Bad_Pool&all=2");
  ASSERT_TRUE(target.ok());
  PageQuery query(target->params, {"days", "from", "by", "id", "name", "all"});
  EXPECT_EQ(query.Int("days", 1, 366, 30), 30);
  EXPECT_FALSE(query.Day("from").has_value());
  EXPECT_EQ(query.Choice("by", {"team", "sku"}, "team"), "team");
  EXPECT_EQ(query.Uuid("id", true), "");
  EXPECT_EQ(query.PoolName("name", true), "");
  EXPECT_FALSE(query.Flag("all", false));
  core::FieldViolations violations = core::ViolationsFromStatus(query.Finish());
  std::vector<std::string> fields;
  for (const auto& v : violations) fields.push_back(v.field);
  EXPECT_EQ(fields, (std::vector<std::string>{"days", "from", "by", "id",
                                              "name", "all"}));
}

TEST(PageQueryTest, GoodValuesPass) {
  absl::StatusOr<RequestTarget> target = ParseTarget(
      "/x?from=2026-01-31&id=0190A0B0-0000-7000-8000-000000000001&name=a100-x");
  ASSERT_TRUE(target.ok());
  PageQuery query(target->params, {"from", "id", "name"});
  ASSERT_TRUE(query.Day("from").has_value());
  EXPECT_EQ(query.Uuid("id", true), "0190a0b0-0000-7000-8000-000000000001");
  EXPECT_EQ(query.PoolName("name", true), "a100-x");
  EXPECT_TRUE(query.Finish().ok());
  PageQuery missing({}, {"id"});
  missing.Uuid("id", true);
  EXPECT_EQ(core::ViolationsFromStatus(missing.Finish())[0].description,
            "is required");
}

TEST(FormValueTest, ReadsTheSignInFormsToken) {
  absl::StatusOr<std::string> token =
      FormValue("other=1&token=plc_abc%2Ddef", "token", 256);
  ASSERT_TRUE(token.ok());
  EXPECT_EQ(*token, "plc_abc-def");
  EXPECT_EQ(*FormValue("other=1", "token", 256), "");
  EXPECT_FALSE(
      FormValue(absl::StrCat("token=", std::string(300, 'a')), "token", 256)
          .ok());
}

}  // namespace
}  // namespace placement::services::console
