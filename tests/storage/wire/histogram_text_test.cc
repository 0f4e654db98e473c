// storage/wire/histogram_text: a LogHistogram as the bigint[] literal a
// rollup row keeps it in, and back; what a literal of another length or
// with a NULL element reads as.
#include "storage/wire/histogram_text.h"

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "core/evidence/log_histogram.h"
#include "gtest/gtest.h"

namespace placement::storage {
namespace {

TEST(CountsLiteralTest, WritesEveryBucketInOrderInBraces) {
  core::LogHistogram histogram;
  histogram.counts[0] = 3;
  histogram.counts[2] = 1;
  histogram.counts[core::kHistogramBuckets - 1] = 12;
  const std::string literal = CountsLiteral(histogram);
  EXPECT_EQ(literal.substr(0, 8), "{3,0,1,0");
  EXPECT_EQ(literal.substr(literal.size() - 6), ",0,12}");
  // One element per bucket, empty buckets written as 0.
  EXPECT_EQ(std::vector<std::string>(
                absl::StrSplit(literal.substr(1, literal.size() - 2), ','))
                .size(),
            static_cast<size_t>(core::kHistogramBuckets));
}

TEST(CountsFromLiteralTest, ReadsWhatCountsLiteralWrites) {
  core::LogHistogram histogram;
  for (int i = 0; i < core::kHistogramBuckets; ++i) histogram.counts[i] = i * i;
  histogram.counts[7] = std::numeric_limits<int64_t>::max();
  EXPECT_EQ(CountsFromLiteral(CountsLiteral(histogram)), histogram);
  EXPECT_EQ(CountsFromLiteral(CountsLiteral(core::LogHistogram{})),
            core::LogHistogram{});
}

TEST(CountsFromLiteralTest, AShorterArrayLeavesTheLaterBucketsEmpty) {
  core::LogHistogram read = CountsFromLiteral("{5,7}");
  EXPECT_EQ(read.counts[0], 5);
  EXPECT_EQ(read.counts[1], 7);
  EXPECT_EQ(read.Total(), 12);
  EXPECT_EQ(CountsFromLiteral("{}"), core::LogHistogram{});
}

TEST(CountsFromLiteralTest, ElementsPastTheLastBucketAreLeftOut) {
  std::vector<int> counts(core::kHistogramBuckets + 3, 1);
  core::LogHistogram read =
      CountsFromLiteral(absl::StrCat("{", absl::StrJoin(counts, ","), "}"));
  EXPECT_EQ(read.counts[core::kHistogramBuckets - 1], 1);
  EXPECT_EQ(read.Total(), core::kHistogramBuckets);
}

TEST(CountsFromLiteralTest, AnElementThatDoesNotParseCountsZeroInItsPlace) {
  // A NULL element keeps its position: the buckets after it stay where
  // they were.
  core::LogHistogram read = CountsFromLiteral("{1,NULL,3,x}");
  EXPECT_EQ(read.counts[0], 1);
  EXPECT_EQ(read.counts[1], 0);
  EXPECT_EQ(read.counts[2], 3);
  EXPECT_EQ(read.counts[3], 0);
  EXPECT_EQ(read.Total(), 4);
}

}  // namespace
}  // namespace placement::storage
