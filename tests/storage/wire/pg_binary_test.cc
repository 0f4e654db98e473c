// storage/pg_binary: network byte order, PostgreSQL's epoch, and a uuid's
// 16 bytes from its text (either case); nothing else parses as a uuid.
#include "storage/wire/pg_binary.h"

#include <string>

#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "tests/storage/wire/byte_test_util.h"

namespace placement::storage {
namespace {

TEST(AppendBigEndianTest, WritesTheMostSignificantByteFirst) {
  std::string out;
  AppendInt32(0x01020304, &out);
  AppendInt32(-1, &out);
  AppendInt64(0x0102030405060708, &out);
  AppendInt64(-2, &out);
  AppendBigEndian(static_cast<uint16_t>(0xabcd), &out);
  EXPECT_EQ(Hex(out), Hex(Bytes("01020304 ffffffff 0102030405060708 "
                                "fffffffffffffffe abcd")));
}

TEST(PostgresEpochTest, IsTheStartOf2000InUnixMicros) {
  EXPECT_EQ(absl::FromUnixMicros(kPostgresEpochUnixMicros),
            absl::FromCivil(absl::CivilSecond(2000, 1, 1, 0, 0, 0),
                            absl::UTCTimeZone()));
}

TEST(UuidBytesTest, ParsesTheCanonicalTextInEitherCase) {
  const auto lower = UuidBytes("0123abcd-4567-89ef-0a1b-c2d3e4f5a6b7");
  ASSERT_TRUE(lower.has_value());
  EXPECT_EQ(Hex(std::string(lower->data(), lower->size())),
            "0123abcd456789ef0a1bc2d3e4f5a6b7");
  const auto upper = UuidBytes("0123ABCD-4567-89EF-0A1B-C2D3E4F5A6B7");
  ASSERT_TRUE(upper.has_value());
  EXPECT_EQ(*upper, *lower);
  const auto ends = UuidBytes("00000000-0000-0000-0000-0000000000ff");
  ASSERT_TRUE(ends.has_value());
  EXPECT_EQ((*ends)[0], '\0');
  EXPECT_EQ(static_cast<unsigned char>((*ends)[15]), 0xff);
}

TEST(UuidBytesTest, RefusesAnyOtherText) {
  for (const char* text : {
           "",
           "0123abcd456789ef0a1bc2d3e4f5a6b7",        // no hyphens
           "{0123abcd-4567-89ef-0a1b-c2d3e4f5a6b7}",  // braces
           "0123abcd-4567-89ef-0a1b-c2d3e4f5a6b",     // one digit short
           "0123abcd-4567-89ef-0a1b-c2d3e4f5a6b77",   // one digit long
           "0123abcd-4567-89ef-0a1bc-2d3e4f5a6b7",    // hyphen misplaced
           "0123abcd04567-89ef-0a1b-c2d3e4f5a6b7",    // hyphen replaced
           "0123abcg-4567-89ef-0a1b-c2d3e4f5a6b7",    // not hex
           "0123abcd-4567-89ef-0a1b-c2d3e4f5a6 7",    // space
           "-123abcd-4567-89ef-0a1b-c2d3e4f5a6b7",    // hyphen for a digit
       }) {
    EXPECT_FALSE(UuidBytes(text).has_value()) << text;
  }
}

}  // namespace
}  // namespace placement::storage
