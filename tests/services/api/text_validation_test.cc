// services/api/text_validation: which text a request may carry. A NUL in
// any text field would fail the database batch its record travels in, or
// cut a lookup key short; C1 controls, bidirectional overrides and line
// separators make a name read otherwise than it is stored; a key (team,
// request_id) takes one line. The check must reach every depth by
// reflection.
#include "services/api/text_validation.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "placement/v1/catalog.pb.h"
#include "placement/v1/cost.pb.h"
#include "placement/v1/placement.pb.h"

namespace placement::services {
namespace {

using ::testing::ElementsAre;
using ::testing::Field;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

auto ViolationAt(const std::string& path) {
  return Field(&core::FieldViolation::field, path);
}

TEST(RefusedCharacterFieldsTest, PrintableTextTabsAndNewlinesAreAccepted) {
  v1::WriteStandardRequest request;
  request.set_team("research-übung");
  request.set_request_id("plan-7 (übung) \xE2\x80\x94 \xF0\x9F\x94\xA5");
  request.set_reason("won the bake-off\n\tcheapest\r\nby far");
  request.set_pool("a100-train");
  EXPECT_THAT(RefusedCharacterFields(request), IsEmpty());
}

TEST(RefusedCharacterFieldsTest, ANulIsNamedAtItsPathAtAnyDepth) {
  v1::PlacePlanRequest request;
  request.set_team(std::string("a\0b", 3));
  request.mutable_constraints()->add_allowed_pools("ok");
  request.mutable_constraints()->add_allowed_pools(std::string("x\0", 2));
  EXPECT_THAT(RefusedCharacterFields(request),
              ElementsAre(ViolationAt("constraints.allowed_pools[1]"),
                          ViolationAt("team")));
}

TEST(RefusedCharacterFieldsTest, MapKeysAndValuesAreChecked) {
  v1::PlacePlanRequest bad_value;
  (*bad_value.mutable_constraints()->mutable_required_labels())["zone"] =
      "eu\x1b[2J";
  EXPECT_THAT(
      RefusedCharacterFields(bad_value),
      ElementsAre(ViolationAt("constraints.required_labels[\"zone\"]")));

  v1::PlacePlanRequest bad_key;
  (*bad_key.mutable_constraints()
        ->mutable_required_labels())[std::string("zo\0ne", 5)] = "eu";
  // A key is named by its map, not by the text it holds.
  EXPECT_THAT(RefusedCharacterFields(bad_key),
              ElementsAre(ViolationAt("constraints.required_labels")));
}

TEST(RefusedCharacterFieldsTest, TheMessageSaysWhichCharacterAndWhere) {
  v1::PlacePlanRequest request;
  request.set_team("team\x7f");
  core::FieldViolations violations = RefusedCharacterFields(request, "plan.");
  ASSERT_EQ(violations.size(), 1u);
  EXPECT_EQ(violations[0].field, "plan.team");
  EXPECT_THAT(violations[0].description, HasSubstr("U+007F at byte 4"));
}

// C1 controls, every bidirectional override and isolate, and both line
// separators, in a name and in free text.
TEST(RefusedCharacterFieldsTest, C1BidiAndSeparatorsAreRefusedEverywhere) {
  const std::vector<std::pair<std::string, std::string>> refused = {
      {"\xC2\x80", "U+0080"},     {"\xC2\x9B", "U+009B"},
      {"\xC2\x9F", "U+009F"},     {"\xE2\x80\xAA", "U+202A"},
      {"\xE2\x80\xAE", "U+202E"}, {"\xE2\x81\xA6", "U+2066"},
      {"\xE2\x81\xA9", "U+2069"}, {"\xE2\x80\xA8", "U+2028"},
      {"\xE2\x80\xA9", "U+2029"},
  };
  for (const auto& [text, code] : refused) {
    SCOPED_TRACE(code);
    v1::CreatePoolRequest pool;
    pool.mutable_pool()->set_name("ml" + text + "team");
    (*pool.mutable_pool()->mutable_labels())["team"] = text;
    core::FieldViolations violations = RefusedCharacterFields(pool);
    ASSERT_EQ(violations.size(), 2u);
    EXPECT_EQ(violations[0].field, "pool.name");
    EXPECT_THAT(violations[0].description, HasSubstr(code + " at byte 2"));
    EXPECT_EQ(violations[1].field, "pool.labels[\"team\"]");

    v1::WriteStandardRequest standard;
    standard.set_reason("cheapest " + text);
    EXPECT_THAT(RefusedCharacterFields(standard),
                ElementsAre(ViolationAt("reason")));
  }
  // Their neighbours are ordinary text.
  v1::WriteStandardRequest neighbours;
  neighbours.set_reason("\xC2\xA0 \xE2\x80\xA7 \xE2\x80\xAF \xE2\x81\xA5");
  EXPECT_THAT(RefusedCharacterFields(neighbours), IsEmpty());
}

TEST(RefusedCharacterFieldsTest, KeysTakeOneLine) {
  v1::PlacePlanRequest plan;
  plan.set_team("ml\nplatform");
  plan.set_request_id("key\r");
  EXPECT_THAT(RefusedCharacterFields(plan),
              ElementsAre(ViolationAt("team"), ViolationAt("request_id")));
  v1::GetCostReportRequest cost;
  cost.mutable_filter()->add_teams("a\nb");
  EXPECT_THAT(RefusedCharacterFields(cost),
              ElementsAre(ViolationAt("filter.teams[0]")));
  EXPECT_THAT(RefusedCharacter("a\nb", /*one_line=*/true),
              HasSubstr("line break"));
  EXPECT_EQ(RefusedCharacter("a\nb", /*one_line=*/false), "");
}

}  // namespace
}  // namespace placement::services
