// storage/json_text: a JSON object of string keys and values, keys in byte
// order, every character JSON requires escaped and nothing else changed.
#include "storage/wire/json_text.h"

#include <map>
#include <string>

#include "gtest/gtest.h"

namespace placement::storage {
namespace {

TEST(JsonObjectTextTest, AnEmptyMapIsAnEmptyObject) {
  EXPECT_EQ(JsonObjectText({}), "{}");
}

TEST(JsonObjectTextTest, KeysInByteOrder) {
  EXPECT_EQ(JsonObjectText({{"team", "ml"}, {"region", "eu"}, {"", "x"}}),
            R"({"":"x","region":"eu","team":"ml"})");
}

TEST(JsonObjectTextTest, EscapesQuotesBackslashesAndControls) {
  EXPECT_EQ(JsonObjectText({{"k\"ey", "a\\b"}}), R"({"k\"ey":"a\\b"})");
  EXPECT_EQ(JsonObjectText({{"k", "1\n2\r3\t4"}}), R"({"k":"1\n2\r3\t4"})");
  EXPECT_EQ(JsonObjectText({{"k", std::string("\x01\x1f\0", 3)}}),
            R"({"k":"\u0001\u001f\u0000"})");
}

TEST(JsonObjectTextTest, LeavesEverythingElseAsItIs) {
  // UTF-8 passes through byte for byte; '/' and DEL need no escape.
  EXPECT_EQ(JsonObjectText({{"zone", "Zürich/ä \x7f {}[],:"}}),
            "{\"zone\":\"Zürich/ä \x7f {}[],:\"}");
}

}  // namespace
}  // namespace placement::storage
