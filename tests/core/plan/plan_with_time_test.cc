#include "core/plan/plan_with_time.h"

#include <map>
#include <tuple>

#include "gtest/gtest.h"
#include "tests/core/test_catalog.h"

namespace placement::core {
namespace {

using testing::TestCatalog;
using testing::TrainingPool;

const absl::Time kNow = absl::FromUnixSeconds(1'800'000'000);

Recipe Lora8b() {
  Recipe r;
  r.model = "Llama-3.1-8B";
  r.method = FineTuneMethod::kLora;
  r.lora_rank = 16;
  r.target_modules = {"all-linear"};
  r.sequence_length = 1024;
  r.micro_batch_size = 1;
  r.gpu_count = 1;
  r.parallelism = Parallelism::kSingle;
  return NormalizeRecipe(r);
}

// The cheap L40S pool is full for two days; the A100 pool is free; a
// serving pool of idle H100s.
class PlanWithTimeTest : public ::testing::Test {
 protected:
  PlanWithTimeTest() {
    pools_ = {
        TrainingPool("a100", "A100-SXM4-80GB", Fabric::kNvlink, 8, 1,
                     4'000'000),
        TrainingPool("l40s", "L40S-PCIE-48GB", Fabric::kPcie, 8, 1, 500'000),
        TrainingPool("h100-serving", "H100-SXM5-80GB", Fabric::kNvlink, 8, 1,
                     100'000)};
    pools_[2].purpose = PoolPurpose::kServing;
    PoolState l40s;
    l40s.pool_name = "l40s";
    l40s.observed = kNow;
    l40s.gpus_total = 8;
    l40s.gpus_allocated = 8;
    QueuedJob big;
    big.job_id = "42";
    big.gpus = 8;
    big.submitted = kNow - absl::Hours(2);
    big.started = kNow - absl::Hours(1);
    big.plan_id = "p";
    l40s.running = {big};
    queues_["l40s"] =
        MakePoolQueue(l40s, kNow, {}, {{"42", {48 * 3600.0, 50 * 3600.0}}});
    PoolState idle;
    idle.pool_name = "a100";
    idle.observed = kNow;
    idle.gpus_total = 8;
    queues_["a100"] = MakePoolQueue(idle, kNow, {}, {});
    PoolState serving = idle;
    serving.pool_name = "h100-serving";
    queues_["h100-serving"] = MakePoolQueue(serving, kNow, {}, {});
  }

  QueueView View() const {
    return {[this](absl::string_view name) -> const PoolQueue* {
              auto it = queues_.find(std::string(name));
              return it == queues_.end() ? nullptr : &it->second;
            },
            kNow + absl::Seconds(30), absl::Minutes(10)};
  }

  PlanResult Plan(Objective objective,
                  std::optional<absl::Duration> deadline = std::nullopt,
                  const QueueView* view = nullptr) {
    PlanRequest request;
    request.recipe = Lora8b();
    request.total_steps = 10'000;
    request.constraints.objective = objective;
    request.constraints.deadline = deadline;
    if (objective == Objective::kCostOfDelay) {
      request.constraints.delay_cost_micros_per_hour = 50'000'000;
    }
    EXPECT_TRUE(ValidateTimeObjective(request.constraints).empty());
    absl::StatusOr<PlanResult> plan =
        PlanWithTime(request, pools_, TestCatalog(), InMemoryEvidence(),
                     nullptr, {}, view != nullptr ? *view : View());
    EXPECT_TRUE(plan.ok()) << plan.status();
    return *plan;
  }

  std::vector<Pool> pools_;
  std::map<std::string, PoolQueue> queues_;
};

TEST_F(PlanWithTimeTest, LowestCostStaysCheapestAndShowsTheWait) {
  const PlanResult plan = Plan(Objective::kLowestCost);
  ASSERT_EQ(plan.candidates.size(), 2u);
  const Candidate& first = plan.candidates[0];
  EXPECT_EQ(first.pool_name, "l40s");
  ASSERT_TRUE(first.timing.has_value());
  ASSERT_TRUE(first.timing->known()) << first.timing->reason;
  // About 47 h of the running job left, read 30 s after the report.
  EXPECT_NEAR(first.timing->start_p50_s, 47 * 3600.0 - 30, 2 * 3600);
  EXPECT_GT(first.timing->finish_p50_s, first.timing->start_p50_s);
  EXPECT_EQ(plan.candidates[1].timing->start_p90_s, 0);  // a100 is free
  EXPECT_FALSE(plan.deadline.has_value());
}

TEST_F(PlanWithTimeTest, ADeadlineTheBusyPoolCannotMeetGoesToTheFreeOne) {
  const PlanResult plan = Plan(Objective::kFinishByDeadline, absl::Hours(24));
  ASSERT_EQ(plan.candidates.size(), 2u);
  EXPECT_EQ(plan.candidates[0].pool_name, "a100");
  ASSERT_TRUE(plan.deadline.has_value());
  EXPECT_TRUE(plan.deadline->met);
  EXPECT_EQ(plan.deadline->candidates_meeting, 1);
  EXPECT_LE(plan.deadline->finish_p90_s, 24 * 3600);
  // The busy pool says why it is second.
  const Candidate& busy = plan.candidates[1];
  EXPECT_EQ(busy.pool_name, "l40s");
  bool says_why = false;
  for (const std::string& w : busy.warnings) {
    says_why |= w.find("after the deadline") != std::string::npos;
  }
  EXPECT_TRUE(says_why);
  // Training stays off the idle serving pool whatever the queues say.
  bool serving_rejected = false;
  for (const Rejection& r : plan.rejections) {
    serving_rejected |= r.pool_name == "h100-serving" &&
                        r.rule == kTrainingStaysOffServingPoolsRule;
  }
  EXPECT_TRUE(serving_rejected);
}

TEST_F(PlanWithTimeTest, NoneCanMeetItTheEarliestFinishIsFirstAndSaysSo) {
  const PlanResult plan = Plan(Objective::kFinishByDeadline, absl::Minutes(1));
  ASSERT_TRUE(plan.deadline.has_value());
  EXPECT_FALSE(plan.deadline->met);
  EXPECT_EQ(plan.deadline->candidates_meeting, 0);
  EXPECT_EQ(plan.candidates[0].pool_name, "a100");
  EXPECT_NE(plan.deadline->reason.find("earliest finish"), std::string::npos)
      << plan.deadline->reason;
}

// Neither pool finishes within 20 h at p90. The A100's job ahead ends at
// 22-23 h, so it is sure to be a little late; the L40S's ends at a median
// of 8 h with a long tail (p90 60 h), so most of its finishes are in time.
// The likelier bet goes first, not the earlier p90, and the verdict says
// both.
TEST_F(PlanWithTimeTest, NoneCanBeShownToMeetItTheLikeliestToGoesFirst) {
  for (auto [name, median_h, p90_h] :
       {std::tuple{"a100", 22.0, 23.0}, std::tuple{"l40s", 8.0, 60.0}}) {
    PoolState s;
    s.pool_name = name;
    s.observed = kNow;
    s.gpus_total = 8;
    s.gpus_allocated = 8;
    QueuedJob ahead;
    ahead.job_id = "ahead";
    ahead.gpus = 8;
    ahead.submitted = ahead.started = kNow;
    ahead.plan_id = "p";
    s.running = {ahead};
    queues_[name] = MakePoolQueue(
        s, kNow, {}, {{"ahead", {median_h * 3600.0, p90_h * 3600.0}}});
  }
  const PlanResult plan = Plan(Objective::kFinishByDeadline, absl::Hours(20));
  ASSERT_EQ(plan.candidates.size(), 2u);
  const Candidate& first = plan.candidates[0];
  const Candidate& second = plan.candidates[1];
  EXPECT_EQ(first.pool_name, "l40s");
  EXPECT_GT(first.timing->finish_p90_s, 20 * 3600);
  EXPECT_GT(first.timing->finish_p90_s, second.timing->finish_p90_s);
  ASSERT_TRUE(plan.deadline.has_value());
  EXPECT_FALSE(plan.deadline->met);
  EXPECT_EQ(plan.deadline->candidates_meeting, 0);
  // Its job ahead ends before 17 h (the run's own hours left) about two
  // times in three (a lognormal of median 8 h and p90 60 h).
  EXPECT_GT(plan.deadline->chance_met, 0.5);
  EXPECT_LT(plan.deadline->chance_met, 0.9);
  EXPECT_NE(plan.deadline->reason.find("l40s is the likeliest to"),
            std::string::npos)
      << plan.deadline->reason;
  EXPECT_NE(plan.deadline->reason.find("the earliest finish is a100's"),
            std::string::npos)
      << plan.deadline->reason;
  // The draws served the ranking; the plan keeps its quantiles only.
  EXPECT_TRUE(first.timing->finish_draws_s.empty());
}

TEST_F(PlanWithTimeTest, WithoutStateTheWaitIsUnknownNotZero) {
  const QueueView none{
      [](absl::string_view) -> const PoolQueue* { return nullptr; }, kNow,
      absl::Minutes(10)};
  const PlanResult plan =
      Plan(Objective::kFinishByDeadline, absl::Hours(24), &none);
  EXPECT_FALSE(plan.deadline->met);
  for (const Candidate& c : plan.candidates) {
    EXPECT_EQ(c.timing->status, StartStatus::kNoState);
    EXPECT_TRUE(c.timing->start_quantiles.empty());
  }
  EXPECT_NE(plan.deadline->reason.find("no pool's wait is known"),
            std::string::npos);
  // A stale report is unknown too.
  QueueView late = View();
  late.now = kNow + absl::Minutes(11);
  const PlanResult stale = Plan(Objective::kLowestCost, std::nullopt, &late);
  EXPECT_EQ(stale.candidates[0].timing->status, StartStatus::kStale);
}

TEST_F(PlanWithTimeTest, CostOfDelayTradesMoneyForTime) {
  // At 50 an hour, two days of waiting outweigh the cheaper rate.
  const PlanResult plan = Plan(Objective::kCostOfDelay);
  EXPECT_EQ(plan.candidates[0].pool_name, "a100");
}

TEST(ValidateTimeObjectiveTest, EachObjectiveItsSetting) {
  PlanConstraints c;
  c.objective = Objective::kFinishByDeadline;
  EXPECT_EQ(ValidateTimeObjective(c).front().field, "constraints.deadline");
  c.objective = Objective::kCostOfDelay;
  EXPECT_EQ(ValidateTimeObjective(c).front().field,
            "constraints.delay_cost_micros_per_hour");
  c.objective = Objective::kLowestCost;
  c.delay_cost_micros_per_hour = 5;
  EXPECT_EQ(ValidateTimeObjective(c).size(), 1u);
}

}  // namespace
}  // namespace placement::core
