// PLACEMENT_DCHECK stops the program at a broken invariant where checks are
// on (Debug, sanitizer and fuzzing builds) and costs nothing in Release.

#include "core/check.h"

#include <gtest/gtest.h>

namespace placement::core {
namespace {

TEST(DcheckTest, HoldingInvariantDoesNothing) {
  int evaluations = 0;
  auto holds = [&] {
    ++evaluations;
    return true;
  };
  PLACEMENT_DCHECK(holds(), "never fails");
#ifdef PLACEMENT_DCHECKS
  EXPECT_EQ(evaluations, 1);
#else
  EXPECT_EQ(evaluations, 0);  // not evaluated in Release
#endif
}

#ifdef PLACEMENT_DCHECKS
TEST(DcheckDeathTest, BrokenInvariantAbortsNamingConditionAndMessage) {
  const double low = 2.0, high = 1.0;
  EXPECT_DEATH(PLACEMENT_DCHECK(low <= high, "band edges out of order"),
               "PLACEMENT_DCHECK\\(low <= high\\) failed: band edges out of "
               "order");
}
#else
TEST(DcheckTest, BrokenInvariantIsNotCheckedInRelease) {
  const double low = 2.0, high = 1.0;
  PLACEMENT_DCHECK(low <= high, "band edges out of order");
  SUCCEED();
}
#endif

}  // namespace
}  // namespace placement::core
