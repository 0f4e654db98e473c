// storage/hex: lower-case hex of bytes (how bytea travels as text) and
// back, for every byte value.
#include "storage/wire/hex.h"

#include <string>

#include "gtest/gtest.h"

namespace placement::storage {
namespace {

TEST(HexEncodeTest, IsLowerCaseTwoDigitsPerByte) {
  EXPECT_EQ(HexEncode(""), "");
  EXPECT_EQ(HexEncode(std::string("\x00\x01\x0f\x10\xab\xff", 6)),
            "00010f10abff");
  EXPECT_EQ(HexEncode("Az"), "417a");
}

TEST(HexDecodeTest, ReadsWhatEncodeWritesForEveryByte) {
  std::string all;
  for (int b = 0; b < 256; ++b) all.push_back(static_cast<char>(b));
  const std::string hex = HexEncode(all);
  EXPECT_EQ(hex.size(), 512u);
  EXPECT_EQ(HexDecode(hex), all);
}

TEST(HexDecodeTest, ReadsUpperCaseToo) {
  EXPECT_EQ(HexDecode("ABFF0a"), std::string("\xab\xff\x0a", 3));
  EXPECT_EQ(HexDecode(""), "");
}

}  // namespace
}  // namespace placement::storage
