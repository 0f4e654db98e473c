// storage/transaction_horizon: pg_snapshot's text both ways, and which
// committed transactions a horizon includes (everything below xmin, nothing
// at or above xmax, and between them all but the ones in progress).
#include "storage/session/transaction_horizon.h"

#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace placement::storage {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

TEST(TransactionHorizonTest, ParsesPgSnapshotText) {
  absl::StatusOr<TransactionHorizon> h =
      TransactionHorizon::Parse("100:104:100,102");
  ASSERT_TRUE(h.ok()) << h.status();
  EXPECT_EQ(h->xmin, 100);
  EXPECT_EQ(h->xmax, 104);
  EXPECT_THAT(h->in_progress, ElementsAre(100, 102));
  absl::StatusOr<TransactionHorizon> idle = TransactionHorizon::Parse("7:7:");
  ASSERT_TRUE(idle.ok()) << idle.status();
  EXPECT_THAT(idle->in_progress, IsEmpty());
}

TEST(TransactionHorizonTest, TextRoundTrips) {
  for (const char* text :
       {"100:104:100,102", "7:7:", "1:9223372036854775807:5"}) {
    absl::StatusOr<TransactionHorizon> h = TransactionHorizon::Parse(text);
    ASSERT_TRUE(h.ok()) << text;
    EXPECT_EQ(h->ToText(), text);
  }
}

TEST(TransactionHorizonTest, AnyOtherTextIsDataLoss) {
  for (const char* text : {"", "100", "100:104", "100:104:1:2",
                           "x:104:", "100:y:", "100:104:1,z", "100:104:1;2"}) {
    EXPECT_EQ(TransactionHorizon::Parse(text).status().code(),
              absl::StatusCode::kDataLoss)
        << text;
  }
}

TEST(TransactionHorizonTest, IncludesWhatCommittedBeforeIt) {
  const TransactionHorizon h{
      .xmin = 100, .xmax = 104, .in_progress = {100, 102}};
  EXPECT_TRUE(h.Includes(1));
  EXPECT_TRUE(h.Includes(99));
  EXPECT_FALSE(h.Includes(100));  // in progress
  EXPECT_TRUE(h.Includes(101));
  EXPECT_FALSE(h.Includes(102));  // in progress
  EXPECT_TRUE(h.Includes(103));
  EXPECT_FALSE(h.Includes(104));  // at xmax: not yet assigned
  EXPECT_FALSE(h.Includes(1000));
}

}  // namespace
}  // namespace placement::storage
