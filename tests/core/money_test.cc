#include "core/money.h"

#include <limits>

#include "gtest/gtest.h"

namespace placement::core {
namespace {

TEST(ParseMicrosTest, ParsesDecimalAmountsExactly) {
  EXPECT_EQ(*ParseMicros("2.10"), 2'100'000);
  EXPECT_EQ(*ParseMicros("1"), 1'000'000);
  EXPECT_EQ(*ParseMicros("0.000001"), 1);
  EXPECT_EQ(*ParseMicros(".5"), 500'000);
  // 0.1 + 0.2 style drift cannot happen: 0.3 is exactly 300000 micros.
  EXPECT_EQ(*ParseMicros("0.1") + *ParseMicros("0.2"), *ParseMicros("0.3"));
}

TEST(ParseMicrosTest, RejectsWhatIsNotAnAmount) {
  for (const char* text : {"", ".", "-1", "+1", "1.2.3", "1e3", "abc",
                           "1.0000001", "99999999999999999999"}) {
    EXPECT_FALSE(ParseMicros(text).ok()) << text;
  }
}

TEST(FormatMicrosTest, KeepsTwoDecimalsAndTrimsTheRest) {
  EXPECT_EQ(FormatMicros(2'100'000), "2.10");
  EXPECT_EQ(FormatMicros(1), "0.000001");
  EXPECT_EQ(FormatMicros(0), "0.00");
  EXPECT_EQ(FormatMicros(-1'500'000), "-1.50");
  EXPECT_EQ(FormatMicros(std::numeric_limits<int64_t>::min()),
            "-9223372036854.775808");
}

TEST(FormatMicrosAsCentsTest, RoundsToTwoDecimals) {
  EXPECT_EQ(FormatMicrosAsCents(7'000'000), "7.00");
  EXPECT_EQ(FormatMicrosAsCents(13'666'667), "13.67");
  EXPECT_EQ(FormatMicrosAsCents(13'664'999), "13.66");
  EXPECT_EQ(FormatMicrosAsCents(5'000), "0.01");
  EXPECT_EQ(FormatMicrosAsCents(4'999), "0.00");
  EXPECT_EQ(FormatMicrosAsCents(-1), "0.00");
  EXPECT_EQ(FormatMicrosAsCents(-1'995'000), "-2.00");
  EXPECT_EQ(FormatMicrosAsCents(std::numeric_limits<int64_t>::min()),
            "-9223372036854.78");
}

// Costs computed in floating point saturate instead of wrapping: a cost
// past the int64 range must never read as a negative, cheapest-looking one.
TEST(SaturatingMicrosTest, RoundsWithinRangeAndClampsBeyondIt) {
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
  EXPECT_EQ(SaturatingMicros(12'000'000.4), 12'000'000);
  EXPECT_EQ(SaturatingMicros(2.5), 3);  // half away from zero
  EXPECT_EQ(SaturatingMicros(-2.5), -3);
  EXPECT_EQ(SaturatingMicros(9.3e18), kMax);
  EXPECT_EQ(SaturatingMicros(1e30), kMax);
  EXPECT_EQ(SaturatingMicros(std::numeric_limits<double>::infinity()), kMax);
  EXPECT_EQ(SaturatingMicros(std::numeric_limits<double>::quiet_NaN()), kMax);
  EXPECT_EQ(SaturatingMicros(-1e30), kMin);
  // The largest double below 2^63 still fits.
  EXPECT_EQ(SaturatingMicros(9223372036854774784.0), 9223372036854774784);
}

TEST(CostMicrosTest, GpuHoursTimesRateSaturates) {
  EXPECT_EQ(CostMicros(10, 1'200'000), 12'000'000);  // 10 h x $1.20
  // 1e12 steps of a slow step at the largest allowed rate: beyond int64.
  EXPECT_EQ(CostMicros(3e8, 100'000'000'000),
            std::numeric_limits<int64_t>::max());
  EXPECT_GT(CostMicros(3e8, 100'000'000'000), CostMicros(3e8, 1'000'000));
}

}  // namespace
}  // namespace placement::core
