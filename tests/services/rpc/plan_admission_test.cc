// PlanAdmission: what PlacePlan refuses before planning under overload, and
// when the heap a burst grew is handed back. A fake clock: no wall time.
#include "services/rpc/plan_admission.h"

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"

namespace placement::services {
namespace {

class PlanAdmissionTest : public ::testing::Test {
 protected:
  PlanAdmission Make(int max_in_flight) {
    return PlanAdmission(
        max_in_flight, absl::Seconds(5), [this] { return now_; },
        [this] { ++trims_; });
  }

  absl::Time now_ = absl::FromUnixSeconds(1'000'000);
  int trims_ = 0;
};

TEST_F(PlanAdmissionTest, ACallPastItsDeadlineIsRefusedWithoutASlot) {
  PlanAdmission admission = Make(2);
  EXPECT_TRUE(absl::IsDeadlineExceeded(admission.TryAdmit(now_)));
  EXPECT_TRUE(absl::IsDeadlineExceeded(
      admission.TryAdmit(now_ - absl::Milliseconds(1))));
  EXPECT_EQ(admission.in_flight(), 0);
}

TEST_F(PlanAdmissionTest, CallsBeyondTheBoundAreRefusedUntilOneFinishes) {
  PlanAdmission admission = Make(2);
  const absl::Time deadline = now_ + absl::Seconds(10);
  ASSERT_TRUE(admission.TryAdmit(deadline).ok());
  ASSERT_TRUE(admission.TryAdmit(deadline).ok());
  const absl::Status refused = admission.TryAdmit(deadline);
  EXPECT_TRUE(absl::IsResourceExhausted(refused)) << refused;
  EXPECT_EQ(admission.in_flight(), 2);

  admission.Release(now_);
  EXPECT_TRUE(admission.TryAdmit(deadline).ok());
}

TEST_F(PlanAdmissionTest, ACallThatCannotBeAnsweredInTimeIsRefused) {
  PlanAdmission admission = Make(8);
  // Plans take 100 ms now.
  ASSERT_TRUE(admission.TryAdmit(now_ + absl::Seconds(10)).ok());
  const absl::Time admitted = now_;
  now_ += absl::Milliseconds(100);
  admission.Release(admitted);
  ASSERT_TRUE(admission.TryAdmit(now_ + absl::Seconds(10)).ok());  // busy

  const absl::Status refused =
      admission.TryAdmit(now_ + absl::Milliseconds(50));
  EXPECT_TRUE(absl::IsResourceExhausted(refused)) << refused;
  EXPECT_TRUE(admission.TryAdmit(now_ + absl::Milliseconds(500)).ok());
}

TEST_F(PlanAdmissionTest, WithNothingInFlightAShortDeadlineIsStillTried) {
  PlanAdmission admission = Make(8);
  ASSERT_TRUE(admission.TryAdmit(now_ + absl::Seconds(10)).ok());
  const absl::Time admitted = now_;
  now_ += absl::Seconds(1);  // one slow plan
  admission.Release(admitted);
  // The average is stale with nothing in flight: measured again.
  EXPECT_TRUE(admission.TryAdmit(now_ + absl::Milliseconds(50)).ok());
}

TEST_F(PlanAdmissionTest,
       MemoryIsReturnedOnceABurstDrainsAtMostOncePerInterval) {
  PlanAdmission admission = Make(2);
  const absl::Time deadline = now_ + absl::Hours(1);
  // Below the bound: no burst, nothing to return.
  ASSERT_TRUE(admission.TryAdmit(deadline).ok());
  admission.Release(now_);
  EXPECT_EQ(trims_, 0);
  // The bound reached and a call refused: returned when the last plan
  // finishes, not before.
  ASSERT_TRUE(admission.TryAdmit(deadline).ok());
  ASSERT_TRUE(admission.TryAdmit(deadline).ok());
  EXPECT_FALSE(admission.TryAdmit(deadline).ok());
  admission.Release(now_);
  EXPECT_EQ(trims_, 0);
  admission.Release(now_);
  EXPECT_EQ(trims_, 1);

  // Another burst within the interval waits for the first drain after it.
  ASSERT_TRUE(admission.TryAdmit(deadline).ok());
  ASSERT_TRUE(admission.TryAdmit(deadline).ok());
  admission.Release(now_);
  admission.Release(now_);
  EXPECT_EQ(trims_, 1);
  now_ += absl::Seconds(5);
  ASSERT_TRUE(admission.TryAdmit(deadline).ok());
  admission.Release(now_);
  EXPECT_EQ(trims_, 2);
  EXPECT_EQ(admission.memory_returns(), 2);
}

}  // namespace
}  // namespace placement::services
