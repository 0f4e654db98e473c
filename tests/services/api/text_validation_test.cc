// services/api/text_validation: which text a request may carry. A NUL in
// any text field would fail the database batch its record travels in, or
// cut a lookup key short; the check must reach every depth by reflection.
#include "services/api/text_validation.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
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

TEST(ControlCharacterFieldsTest, PrintableTabsAndNewlinesAreAccepted) {
  v1::PlacePlanRequest request;
  request.set_team("research\tteam\r\n");
  request.set_request_id("plan-7 (übung)");
  request.mutable_constraints()->add_allowed_pools("a100-train");
  (*request.mutable_constraints()->mutable_required_labels())["zone"] = "eu";
  EXPECT_THAT(ControlCharacterFields(request), IsEmpty());
}

TEST(ControlCharacterFieldsTest, ANulIsNamedAtItsPathAtAnyDepth) {
  v1::PlacePlanRequest request;
  request.set_team(std::string("a\0b", 3));
  request.mutable_constraints()->add_allowed_pools("ok");
  request.mutable_constraints()->add_allowed_pools(std::string("x\0", 2));
  EXPECT_THAT(ControlCharacterFields(request),
              ElementsAre(ViolationAt("constraints.allowed_pools[1]"),
                          ViolationAt("team")));
}

TEST(ControlCharacterFieldsTest, MapKeysAndValuesAreChecked) {
  v1::PlacePlanRequest bad_value;
  (*bad_value.mutable_constraints()->mutable_required_labels())["zone"] =
      "eu\x1b[2J";
  EXPECT_THAT(
      ControlCharacterFields(bad_value),
      ElementsAre(ViolationAt("constraints.required_labels[\"zone\"]")));

  v1::PlacePlanRequest bad_key;
  (*bad_key.mutable_constraints()
        ->mutable_required_labels())[std::string("zo\0ne", 5)] = "eu";
  // A key is named by its map, not by the text it holds.
  EXPECT_THAT(ControlCharacterFields(bad_key),
              ElementsAre(ViolationAt("constraints.required_labels")));
}

TEST(ControlCharacterFieldsTest, TheMessageSaysWhichCharacterAndWhere) {
  v1::PlacePlanRequest request;
  request.set_team("team\x7f");
  core::FieldViolations violations = ControlCharacterFields(request, "plan.");
  ASSERT_EQ(violations.size(), 1u);
  EXPECT_EQ(violations[0].field, "plan.team");
  EXPECT_THAT(violations[0].description, HasSubstr("U+007F at byte 4"));
}

}  // namespace
}  // namespace placement::services
