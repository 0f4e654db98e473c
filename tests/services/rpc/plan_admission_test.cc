// PlanAdmission: what PlacePlan refuses before planning under overload, what
// one caller's waits for evidence may hold, how long a refused caller is
// told to wait, and when the heap a burst grew is handed back. Fake clocks:
// no wall time.
#include "services/rpc/plan_admission.h"

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"

namespace placement::services {
namespace {

using SteadyTime = PlanAdmission::SteadyTime;

class PlanAdmissionTest : public ::testing::Test {
 protected:
  PlanAdmission::Options Options(int max_planning) {
    PlanAdmission::Options options;
    options.max_planning = max_planning;
    options.max_waiting = 8;
    options.max_waiting_per_caller = 2;
    options.wall_clock = [this] { return wall_; };
    options.steady_clock = [this] { return steady_; };
    options.return_memory = [this] { ++trims_; };
    return options;
  }

  // Both clocks move together unless a test steps one alone.
  void Advance(absl::Duration d) {
    wall_ += d;
    steady_ += absl::ToChronoNanoseconds(d);
  }

  // One plan admitted and answered after `took`.
  void OnePlanTaking(PlanAdmission& admission, absl::Duration took) {
    absl::StatusOr<SteadyTime> admitted =
        admission.TryAdmit(wall_ + absl::Seconds(10));
    ASSERT_TRUE(admitted.ok()) << admitted.status();
    Advance(took);
    admission.Release(*admitted);
  }

  absl::Time wall_ = absl::FromUnixSeconds(1'000'000);
  SteadyTime steady_ = SteadyTime() + std::chrono::hours(1);
  int trims_ = 0;
};

TEST_F(PlanAdmissionTest, ACallPastItsDeadlineIsRefusedWithoutASlot) {
  PlanAdmission admission(Options(2));
  EXPECT_TRUE(absl::IsDeadlineExceeded(admission.TryAdmit(wall_).status()));
  EXPECT_TRUE(absl::IsDeadlineExceeded(
      admission.TryAdmit(wall_ - absl::Milliseconds(1)).status()));
  EXPECT_EQ(admission.in_flight(), 0);
}

TEST_F(PlanAdmissionTest, CallsBeyondTheBoundAreRefusedUntilOneFinishes) {
  PlanAdmission admission(Options(2));
  const absl::Time deadline = wall_ + absl::Seconds(10);
  absl::StatusOr<SteadyTime> first = admission.TryAdmit(deadline);
  ASSERT_TRUE(first.ok());
  ASSERT_TRUE(admission.TryAdmit(deadline).ok());
  const absl::Status refused = admission.TryAdmit(deadline).status();
  EXPECT_TRUE(absl::IsResourceExhausted(refused)) << refused;
  EXPECT_EQ(admission.in_flight(), 2);

  admission.Release(*first);
  EXPECT_TRUE(admission.TryAdmit(deadline).ok());
}

TEST_F(PlanAdmissionTest, ACallThatCannotBeAnsweredInTimeIsRefused) {
  PlanAdmission admission(Options(8));
  OnePlanTaking(admission, absl::Milliseconds(100));  // plans take 100 ms
  OnePlanTaking(admission, absl::Milliseconds(100));
  ASSERT_TRUE(admission.TryAdmit(wall_ + absl::Seconds(10)).ok());  // busy

  const absl::Status refused =
      admission.TryAdmit(wall_ + absl::Milliseconds(50)).status();
  EXPECT_TRUE(absl::IsResourceExhausted(refused)) << refused;
  // Twice what plans take is left, no less: a plan's time varies.
  EXPECT_TRUE(absl::IsResourceExhausted(
      admission.TryAdmit(wall_ + absl::Milliseconds(150)).status()));
  EXPECT_TRUE(admission.TryAdmit(wall_ + absl::Milliseconds(200)).ok());
}

// The first plan after a quiet moment is planned without the cache, many
// times slower than the cached plans that follow: on its own it refuses
// nothing, and the plans after it soon replace what it left behind.
TEST_F(PlanAdmissionTest, OneSlowPlanAloneRefusesNoCall) {
  PlanAdmission admission(Options(8));
  OnePlanTaking(admission, absl::Milliseconds(40));  // planned cold
  Advance(absl::Milliseconds(600));
  ASSERT_TRUE(admission.TryAdmit(wall_ + absl::Seconds(10)).ok());  // busy
  EXPECT_TRUE(admission.TryAdmit(wall_ + absl::Milliseconds(50)).ok());

  OnePlanTaking(admission, absl::Milliseconds(2));  // cached
  OnePlanTaking(admission, absl::Milliseconds(2));
  EXPECT_LT(admission.ServiceTime(), absl::Milliseconds(10));
  EXPECT_TRUE(admission.TryAdmit(wall_ + absl::Milliseconds(50)).ok());
}

TEST_F(PlanAdmissionTest, WithNothingInFlightAShortDeadlineIsStillTried) {
  PlanAdmission admission(Options(8));
  OnePlanTaking(admission, absl::Seconds(1));  // one slow plan
  EXPECT_TRUE(admission.TryAdmit(wall_ + absl::Milliseconds(50)).ok());
}

// What plans take is measured on the monotonic clock: a step of the wall
// clock while a plan is made is no part of it.
TEST_F(PlanAdmissionTest, ServiceTimeIsMonotonicNotWallClock) {
  PlanAdmission admission(Options(8));
  absl::StatusOr<SteadyTime> admitted =
      admission.TryAdmit(wall_ + absl::Seconds(10));
  ASSERT_TRUE(admitted.ok());
  wall_ += absl::Hours(1);  // the wall clock jumps; 2 ms pass
  steady_ += std::chrono::milliseconds(2);
  admission.Release(*admitted);
  EXPECT_EQ(admission.ServiceTime(), absl::Milliseconds(2));
}

// A slow moment leaves a long service time behind; with every call refused
// for it, no plan finishes to lower it. It decays by itself.
TEST_F(PlanAdmissionTest, ServiceTimeRecoversWithoutAdmittedCalls) {
  PlanAdmission admission(Options(8));
  absl::StatusOr<SteadyTime> slow = admission.TryAdmit(wall_ + absl::Hours(1));
  absl::StatusOr<SteadyTime> also_slow =
      admission.TryAdmit(wall_ + absl::Hours(1));
  ASSERT_TRUE(slow.ok() && also_slow.ok());
  Advance(absl::Seconds(2));  // two plans in parallel take 2 s
  admission.Release(*slow);
  admission.Release(*also_slow);
  ASSERT_TRUE(admission.TryAdmit(wall_ + absl::Seconds(10)).ok());  // busy
  EXPECT_TRUE(absl::IsResourceExhausted(
      admission.TryAdmit(wall_ + absl::Milliseconds(50)).status()));
  Advance(absl::Seconds(7));  // no plan finishes: 2 s / 2^7
  EXPECT_LT(admission.ServiceTime(), absl::Milliseconds(25));
  EXPECT_TRUE(admission.TryAdmit(wall_ + absl::Milliseconds(50)).ok());
}

// Waiting for evidence takes no planning slot, and one caller holds at most
// its share of the waiting slots: its own further waits are refused,
// nobody else's, and nobody's planning.
TEST_F(PlanAdmissionTest, OneCallersWaitsFillOnlyItsShare) {
  PlanAdmission admission(Options(1));
  const absl::Time deadline = wall_ + absl::Seconds(10);
  ASSERT_TRUE(admission.TryWait(deadline, "pinner").ok());
  ASSERT_TRUE(admission.TryWait(deadline, "pinner").ok());
  const absl::Status refused = admission.TryWait(deadline, "pinner");
  EXPECT_TRUE(absl::IsResourceExhausted(refused)) << refused;
  EXPECT_TRUE(admission.TryWait(deadline, "other").ok());
  EXPECT_TRUE(admission.TryAdmit(deadline).ok());
  EXPECT_EQ(admission.waiting(), 3);
  EXPECT_EQ(admission.in_flight(), 1);
  EXPECT_EQ(admission.ServiceTime(), absl::ZeroDuration());

  admission.DoneWaiting("pinner");
  EXPECT_TRUE(admission.TryWait(deadline, "pinner").ok());
  EXPECT_TRUE(absl::IsDeadlineExceeded(admission.TryWait(wall_, "other")));
}

TEST_F(PlanAdmissionTest, AllWaitingSlotsHeldRefusesEveryCaller) {
  PlanAdmission admission(Options(1));
  const absl::Time deadline = wall_ + absl::Seconds(10);
  for (int caller = 0; caller < 4; ++caller) {
    for (int i = 0; i < 2; ++i) {
      ASSERT_TRUE(admission.TryWait(deadline, std::to_string(caller)).ok());
    }
  }
  EXPECT_TRUE(absl::IsResourceExhausted(admission.TryWait(deadline, "new")));
}

// Refused callers are told to wait longer while refusals outnumber a
// quarter of the plans admitted, and less once they do not.
TEST_F(PlanAdmissionTest, PushbackGrowsUnderRefusalsAndShrinksAfter) {
  PlanAdmission admission(Options(1));
  const absl::Time deadline = wall_ + absl::Seconds(60);
  const absl::Duration initial = admission.RetryPushback(0.5);
  EXPECT_EQ(initial, absl::Milliseconds(10));
  absl::StatusOr<SteadyTime> held = admission.TryAdmit(deadline);
  ASSERT_TRUE(held.ok());
  for (int i = 0; i < 50; ++i) {  // 10 refused for each admitted, 5 s
    for (int r = 0; r < 10; ++r)
      ASSERT_FALSE(admission.TryAdmit(deadline).ok());
    Advance(absl::Milliseconds(100));
  }
  const absl::Duration burst = admission.RetryPushback(0.5);
  EXPECT_GE(burst, absl::Seconds(1));
  EXPECT_LE(burst, absl::Seconds(5));
  // Jittered: from half to one and a half times it.
  EXPECT_EQ(admission.RetryPushback(0), burst / 2);
  EXPECT_EQ(admission.RetryPushback(1), burst * 1.5);

  admission.Release(*held);
  for (int i = 0; i < 50; ++i) {  // then only admitted plans
    absl::StatusOr<SteadyTime> admitted = admission.TryAdmit(deadline);
    ASSERT_TRUE(admitted.ok());
    admission.Release(*admitted);
    Advance(absl::Milliseconds(100));
  }
  EXPECT_EQ(admission.RetryPushback(0.5), initial);
}

TEST_F(PlanAdmissionTest,
       MemoryIsReturnedOnceABurstDrainsAtMostOncePerInterval) {
  PlanAdmission admission(Options(2));
  const absl::Time deadline = wall_ + absl::Hours(1);
  // Below the bound: no burst, nothing to return.
  OnePlanTaking(admission, absl::ZeroDuration());
  EXPECT_EQ(trims_, 0);
  // The bound reached and a call refused: returned when the last plan
  // finishes, not before.
  absl::StatusOr<SteadyTime> a = admission.TryAdmit(deadline);
  absl::StatusOr<SteadyTime> b = admission.TryAdmit(deadline);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_FALSE(admission.TryAdmit(deadline).ok());
  admission.Release(*a);
  EXPECT_EQ(trims_, 0);
  admission.Release(*b);
  EXPECT_EQ(trims_, 1);

  // Another burst within the interval waits for the first drain after it.
  a = admission.TryAdmit(deadline);
  b = admission.TryAdmit(deadline);
  ASSERT_TRUE(a.ok() && b.ok());
  admission.Release(*a);
  admission.Release(*b);
  EXPECT_EQ(trims_, 1);
  Advance(absl::Seconds(5));
  OnePlanTaking(admission, absl::ZeroDuration());
  EXPECT_EQ(trims_, 2);
  EXPECT_EQ(admission.memory_returns(), 2);
}

}  // namespace
}  // namespace placement::services
