// storage/pq_values: text[] literals that keep any text one element, the
// parse of text[] literals as PostgreSQL prints them, and NULL bigints
// read as 0.
#include "storage/wire/pq_values.h"

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace placement::storage {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

TEST(TextArrayLiteralTest, QuotesEveryElementAndEscapesQuotesAndBackslashes) {
  EXPECT_EQ(TextArrayLiteral({}), "{}");
  EXPECT_EQ(TextArrayLiteral({"a", "b,c"}), R"({"a","b,c"})");
  EXPECT_EQ(TextArrayLiteral({"", "say \"hi\"", "C:\\dir", "{x}", "NULL"}),
            R"({"","say \"hi\"","C:\\dir","{x}","NULL"})");
}

TEST(ParseTextArrayTest, ReadsUnquotedAndQuotedElements) {
  // PostgreSQL quotes an element only when it needs to.
  EXPECT_THAT(ParseTextArray(R"({q_proj,v_proj})"),
              ElementsAre("q_proj", "v_proj"));
  EXPECT_THAT(ParseTextArray(R"({plain,"with space","a,b","{c}"})"),
              ElementsAre("plain", "with space", "a,b", "{c}"));
  EXPECT_THAT(ParseTextArray(R"({"say \"hi\"","C:\\dir"})"),
              ElementsAre("say \"hi\"", "C:\\dir"));
}

TEST(ParseTextArrayTest, EmptyArraysAndEmptyElements) {
  EXPECT_THAT(ParseTextArray("{}"), IsEmpty());
  EXPECT_THAT(ParseTextArray(""), IsEmpty());
  EXPECT_THAT(ParseTextArray(R"({""})"), ElementsAre(""));
  EXPECT_THAT(ParseTextArray(R"({"",""})"), ElementsAre("", ""));
  EXPECT_THAT(ParseTextArray(R"({a,""})"), ElementsAre("a", ""));
  EXPECT_THAT(ParseTextArray(R"({"",a})"), ElementsAre("", "a"));
}

TEST(ParseTextArrayTest, ReadsBackWhatTextArrayLiteralWrites) {
  const std::vector<std::string> items = {
      "", "a", "b,c", "say \"hi\"", "back\\slash", "{}", " lead", "x\"", "\\"};
  EXPECT_EQ(ParseTextArray(TextArrayLiteral(items)), items);
}

// A result made in memory, with the bigint column PostgreSQL would send.
class Int64FieldTest : public ::testing::Test {
 protected:
  void SetUp() override {
    result_ = PQmakeEmptyPGresult(nullptr, PGRES_TUPLES_OK);
    ASSERT_NE(result_, nullptr);
    PGresAttDesc column = {};
    column.name = const_cast<char*>("n");
    column.typid = 20;  // int8
    column.typlen = 8;
    column.atttypmod = -1;
    ASSERT_TRUE(PQsetResultAttrs(result_, 1, &column));
  }
  void TearDown() override { PQclear(result_); }

  void SetRow(int row, const char* text) {
    ASSERT_TRUE(
        PQsetvalue(result_, row, 0, const_cast<char*>(text),
                   text == nullptr ? -1 : static_cast<int>(strlen(text))));
  }

  PGresult* result_ = nullptr;
};

TEST_F(Int64FieldTest, ReadsBigintsAndNullAsZero) {
  SetRow(0, "42");
  SetRow(1, "-9223372036854775808");
  SetRow(2, nullptr);  // NULL
  SetRow(3, "9223372036854775807");
  EXPECT_EQ(Int64Field(result_, 0, 0), 42);
  EXPECT_EQ(Int64Field(result_, 1, 0), INT64_MIN);
  EXPECT_EQ(Int64Field(result_, 2, 0), 0);
  EXPECT_EQ(Int64Field(result_, 3, 0), INT64_MAX);
}

}  // namespace
}  // namespace placement::storage
