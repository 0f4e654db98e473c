#include "core/plan/plan_with_time.h"

#include <map>

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
