// storage/double_text: the shortest text that reads back as the same
// double (not the six digits absl::StrCat keeps).
#include "storage/wire/double_text.h"

#include <cmath>
#include <cstdlib>
#include <limits>
#include <string>

#include "gtest/gtest.h"

namespace placement::storage {
namespace {

TEST(DoubleTextTest, IsTheShortestText) {
  EXPECT_EQ(DoubleText(0), "0");
  EXPECT_EQ(DoubleText(1), "1");
  EXPECT_EQ(DoubleText(-2.5), "-2.5");
  EXPECT_EQ(DoubleText(0.1), "0.1");
  EXPECT_EQ(DoubleText(1e300), "1e+300");
  EXPECT_EQ(DoubleText(1.0 / 3), "0.3333333333333333");
}

TEST(DoubleTextTest, KeepsMoreThanSixSignificantDigits) {
  EXPECT_EQ(DoubleText(1234567.891), "1234567.891");
  EXPECT_EQ(DoubleText(0.1 + 0.2), "0.30000000000000004");
}

TEST(DoubleTextTest, ReadsBackAsTheSameDouble) {
  for (const double value :
       {0.0, -0.0, 1e-310, std::numeric_limits<double>::min(),
        std::numeric_limits<double>::max(),
        std::numeric_limits<double>::lowest(),
        std::numeric_limits<double>::denorm_min(), 3.141592653589793,
        123456789.00000001, -9.87654321e-123}) {
    const std::string text = DoubleText(value);
    const double back = std::strtod(text.c_str(), nullptr);
    EXPECT_EQ(back, value) << text;
    EXPECT_EQ(std::signbit(back), std::signbit(value)) << text;
  }
}

TEST(AppendDoubleTest, AppendsToWhatIsThere) {
  std::string out = "x=";
  AppendDouble(0.5, &out);
  out += ",";
  AppendDouble(2, &out);
  EXPECT_EQ(out, "x=0.5,2");
}

}  // namespace
}  // namespace placement::storage
