// common/uuid: canonical 8-4-4-4-12 lower-case text with the RFC 9562
// version and variant bits, and version 7 keys that sort by their time.
#include "common/uuid.h"

#include <set>
#include <string>

#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace placement::common {
namespace {

using ::testing::MatchesRegex;

constexpr char kCanonicalV4[] =
    "[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}";
constexpr char kCanonicalV7[] =
    "[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}";

TEST(NewUuidTest, IsCanonicalVersion4WithTheRfcVariant) {
  for (int i = 0; i < 200; ++i) {
    EXPECT_THAT(NewUuid(), MatchesRegex(kCanonicalV4));
  }
}

TEST(NewUuidTest, DoesNotRepeat) {
  std::set<std::string> seen;
  for (int i = 0; i < 1000; ++i) EXPECT_TRUE(seen.insert(NewUuid()).second);
}

TEST(NewTimeOrderedUuidTest, IsCanonicalVersion7WithTheRfcVariant) {
  const absl::Time now = absl::Now();
  for (int i = 0; i < 200; ++i) {
    EXPECT_THAT(NewTimeOrderedUuid(now), MatchesRegex(kCanonicalV7));
  }
}

TEST(NewTimeOrderedUuidTest, StartsWithTheUnixMillisecondsInHex) {
  // 1700000000123 ms = 0x018bcfe5687b.
  const absl::Time t = absl::FromUnixMillis(1'700'000'000'123);
  const std::string id = NewTimeOrderedUuid(t);
  EXPECT_EQ(id.substr(0, 13), "018bcfe5-687b");
  EXPECT_EQ(NewTimeOrderedUuid(absl::UnixEpoch()).substr(0, 13),
            "00000000-0000");
  // Sub-millisecond parts of the time do not show.
  EXPECT_EQ(NewTimeOrderedUuid(t + absl::Microseconds(999)).substr(0, 13),
            "018bcfe5-687b");
}

TEST(NewTimeOrderedUuidTest, LaterMillisecondsSortAfterEarlierOnes) {
  const absl::Time start = absl::FromUnixMillis(1'700'000'000'000);
  std::string previous = NewTimeOrderedUuid(start);
  // Byte order of the text is time order: across a carry of every hex
  // digit of the time, and across many random tails.
  for (int ms = 1; ms < 5000; ms += 7) {
    const std::string next = NewTimeOrderedUuid(start + absl::Milliseconds(ms));
    EXPECT_LT(previous, next) << ms;
    previous = next;
  }
  EXPECT_LT(NewTimeOrderedUuid(absl::FromUnixMillis(0xffffffff)),
            NewTimeOrderedUuid(absl::FromUnixMillis(0x100000000)));
}

TEST(NewTimeOrderedUuidTest, IdsOfOneMillisecondDiffer) {
  const absl::Time now = absl::FromUnixMillis(1'700'000'000'000);
  std::set<std::string> seen;
  for (int i = 0; i < 1000; ++i) {
    EXPECT_TRUE(seen.insert(NewTimeOrderedUuid(now)).second);
  }
}

}  // namespace
}  // namespace placement::common
