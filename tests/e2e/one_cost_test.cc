// One cost, true to its evidence, through the public API only (a real
// placementd on a real PostgreSQL): the guide's L40S collective-timeout case
// is placed on the A100; a plan's projection of a measured layout rests on
// the runs it was uploaded from and lies in their observed band; an upload
// whose wall time its steps do not explain is refused, and one odd upload
// among honest ones moves a pool by no more than its share.

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <map>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "placement/v1/placement.grpc.pb.h"
#include "placement/v1/telemetry.grpc.pb.h"
#include "tests/support/api_client.h"
#include "tests/support/end_to_end_test.h"
#include "tests/support/fixtures.h"

namespace placement {
namespace {

using ::placement::testing::ApiClient;
using ::placement::testing::Candidate;
using ::placement::testing::EndToEndTest;
using ::placement::testing::Lora8b;
using ::placement::testing::Measured;
using ::placement::testing::MeasuredRun;
using ::placement::testing::PlanFor;
using ::placement::testing::TrainingPool;
using ::placement::testing::ViolatedFields;
using ::testing::Contains;

constexpr char kL40s[] = "L40S-PCIE-48GB";
constexpr char kA100[] = "A100-SXM4-80GB";

class OneCostTest : public EndToEndTest {
 protected:
  // The guide's 2-GPU DDP LoRA.
  static v1::Recipe LoraDdp() {
    v1::Recipe recipe = Lora8b();
    recipe.set_gpu_count(2);
    recipe.set_parallelism(v1::PARALLELISM_DDP);
    recipe.set_micro_batch_size(1);
    return recipe;
  }

  // `steps` steps of `step_s` after `startup_s` an attempt.
  static ApiClient::TimedRun Run(const std::string& pool,
                                 const std::string& sku,
                                 const v1::Recipe& recipe, int64_t steps,
                                 double step_s, double startup_s) {
    ApiClient::TimedRun run =
        MeasuredRun(pool, sku, recipe, steps, step_s, startup_s);
    run.peak_gb = 30;
    return run;
  }

  // A run as the evidence counts it: its attempts, the failed ones, the
  // GPU-seconds it held and the steps it kept.
  struct Counted {
    int64_t attempts = 0;
    int64_t failed = 0;
    double gpu_seconds = 0;
    int64_t kept = 0;
  };

  // Eight runs of 300 steps of `step_s` on one GPU of `pool`, uploaded as an
  // agent would: each attempt fails half-way with `failure_chance` (a
  // preemption, nothing kept) and is retried inside the record, three
  // attempts at most.
  std::vector<Counted> UploadFlakyRuns(const std::string& pool,
                                       const std::string& sku,
                                       const v1::Recipe& recipe, double step_s,
                                       double failure_chance,
                                       std::mt19937& rng) {
    std::uniform_real_distribution<double> u(0, 1);
    std::vector<Counted> counted;
    for (int r = 0; r < 8; ++r) {
      ApiClient::TimedRun run = Run(pool, sku, recipe, 300, step_s, 90);
      run.steps_attempted = 0;
      for (int attempt = 0; attempt < 3; ++attempt) {
        if (u(rng) >= failure_chance) {
          run.steps_attempted += 300;
          run.outcome = v1::RUN_OUTCOME_SUCCEEDED;
          break;
        }
        run.steps_attempted += 150;
        run.outcome = v1::RUN_OUTCOME_PREEMPTED;
        if (attempt < 2) {
          ++run.retries;
          run.retry_outcomes.push_back(v1::RUN_OUTCOME_PREEMPTED);
        }
      }
      const bool succeeded = run.outcome == v1::RUN_OUTCOME_SUCCEEDED;
      run.steps_succeeded = succeeded ? 300 : 0;
      client_->UploadTimedRun(run);
      counted.push_back({run.retries + 1, run.retries + (succeeded ? 0 : 1),
                         (run.retries + 1) * 90 + run.steps_attempted * step_s,
                         run.steps_succeeded});
    }
    return counted;
  }

  // What `runs` add up to in GPU-hours per successful step: among four runs
  // or more, the run with the most failed attempts counts at most twice the
  // next one's (and two), its other attempts' share of its hours left out
  // (core/evidence/most_failed_run.h).
  static double ObservedFromUploads(const std::vector<Counted>& runs) {
    double gpu_seconds = 0;
    int64_t kept = 0;
    const Counted* most = nullptr;
    int64_t second = 0;
    for (const Counted& run : runs) {
      gpu_seconds += run.gpu_seconds;
      kept += run.kept;
      if (most == nullptr || run.failed > most->failed) {
        if (most != nullptr) second = most->failed;
        most = &run;
      } else {
        second = std::max(second, run.failed);
      }
    }
    const int64_t excess = most->failed - std::max<int64_t>(2, 2 * second);
    if (runs.size() >= 4 && excess > 0) {
      gpu_seconds -= most->gpu_seconds * static_cast<double>(excess) /
                     static_cast<double>(most->attempts);
    }
    return gpu_seconds / 3600 / static_cast<double>(kept);
  }
};

// Two pools, the same 2-GPU DDP LoRA measured on both. On the L40S (PCIe)
// 6 runs: 3 succeeded, 3 ended in COLLECTIVE_TIMEOUT after three attempts
// each (retries = 2, 200 steps an attempt, nothing checkpointed): 2.0
// GPU-hours per 1,000 successful steps. On the A100 (NVLink) 6 runs
// succeeded: 0.44. At 0.90 and 2.10 an hour the A100 is about half the
// L40S's cost per successful step, though without its timeouts the L40S
// would be the cheaper (0.6 s steps at 0.90 an hour against 0.5 s at 2.10).
TEST_F(OneCostTest, TheCollectiveTimeoutCaseRanksTheA100First) {
  client_->CreatePool(TrainingPool("a100", kA100, 1, 8, 2'100'000));
  client_->CreatePool(TrainingPool("l40s", kL40s, 1, 4, 900'000));
  const v1::Recipe recipe = LoraDdp();
  for (int i = 0; i < 3; ++i) {
    ApiClient::TimedRun ok = Run("l40s", kL40s, recipe, 200, 0.6, 60);
    ok.interconnect = v1::INTERCONNECT_PCIE;
    client_->UploadTimedRun(ok);
    ApiClient::TimedRun timed_out = ok;
    timed_out.steps_attempted = 600;  // three attempts of 200
    timed_out.steps_succeeded = 0;
    timed_out.retries = 2;
    timed_out.outcome = v1::RUN_OUTCOME_COLLECTIVE_TIMEOUT;
    timed_out.failure_reason = "Watchdog caught collective operation timeout";
    client_->UploadTimedRun(timed_out);
  }
  for (int i = 0; i < 6; ++i) {
    client_->UploadTimedRun(Run("a100", kA100, recipe, 200, 0.5, 60));
  }
  const v1::PlacePlanResponse plan = client_->PlanUntil(
      PlanFor(recipe, 200), [](const v1::PlacePlanResponse& p) {
        return Measured("l40s", 6)(p) && Measured("a100", 6)(p);
      });
  ASSERT_EQ(plan.candidates_size(), 2);
  EXPECT_EQ(plan.candidates(0).pool(), "a100");
  const v1::PlacementCandidate* l40s = Candidate(plan, "l40s");
  ASSERT_NE(l40s, nullptr);
  EXPECT_EQ(l40s->failure_rate().failures(), 9);
  EXPECT_TRUE(l40s->failure_rate().recipe_measured());
  ASSERT_TRUE(l40s->has_observed());
  const v1::ObservedCost& observed = l40s->observed();
  // 12 attempts of 180 s on 2 GPUs for 600 kept steps.
  EXPECT_NEAR(observed.gpu_hours_per_successful_step() * 1000,
              12 * 180 * 2 / 3600.0 / 0.6, 1e-6);
  EXPECT_GE(observed.projected_gpu_hours_per_successful_step(),
            observed.band().low());
  EXPECT_LE(observed.projected_gpu_hours_per_successful_step(),
            observed.band().high());
  EXPECT_GT(l40s->gpu_hours_per_1k_successful_steps(),
            0.8 * observed.gpu_hours_per_successful_step() * 1000);
}

// The invariant end to end, over four evidence sets generated with failures
// and retries and uploaded as agents would, each of its own recipe on its
// own two pools (runs of one recipe on one card are one body of evidence,
// whichever pool of the card ran them): each pool's projection of a job as
// long as its runs lies in the band of what they observed, that
// observation is what the uploads add up to, and where the two pools'
// observed bands (at their rates) separate, the plan ranks them the same
// way. The sets are chosen so that the bands separate both ways as well as
// overlap.
TEST_F(OneCostTest, AProjectionRestsOnTheRunsItWasUploadedFrom) {
  struct Side {
    double step_s;
    double failure_chance;  // an attempt's
  };
  struct Set {
    int lora_rank;
    Side a100;
    Side l40s;
  };
  const Set sets[] = {
      {16, {0.5, 0.1}, {0.8, 0.4}},  // close
      {8, {0.5, 0.0}, {1.6, 0.5}},   // the A100 cheaper per successful step
      {32, {0.5, 0.5}, {0.6, 0.0}},  // the L40S cheaper
      {64, {0.4, 0.2}, {0.7, 0.2}},
  };
  constexpr double kRates[] = {2.1, 0.9};  // an hour: the A100, the L40S
  std::mt19937 rng(35);
  int a100_cheaper = 0;  // sets whose bands separate, each way
  int l40s_cheaper = 0;
  for (size_t set = 0; set < std::size(sets); ++set) {
    SCOPED_TRACE(absl::StrCat("evidence set ", set));
    v1::Recipe recipe = Lora8b();
    recipe.set_lora_rank(sets[set].lora_rank);
    recipe.set_gpu_count(1);
    recipe.set_parallelism(v1::PARALLELISM_SINGLE);
    const std::string a100 = absl::StrCat("a100-", set);
    const std::string l40s = absl::StrCat("l40s-", set);
    client_->CreatePool(TrainingPool(a100, kA100, 1, 8, 2'100'000));
    client_->CreatePool(TrainingPool(l40s, kL40s, 1, 4, 900'000));
    std::map<std::string, std::vector<Counted>> counted;
    counted[a100] = UploadFlakyRuns(a100, kA100, recipe, sets[set].a100.step_s,
                                    sets[set].a100.failure_chance, rng);
    counted[l40s] = UploadFlakyRuns(l40s, kL40s, recipe, sets[set].l40s.step_s,
                                    sets[set].l40s.failure_chance, rng);
    const v1::PlacePlanResponse plan = client_->PlanUntil(
        PlanFor(recipe, 300), [&](const v1::PlacePlanResponse& p) {
          return Measured(l40s, 8)(p) && Measured(a100, 8)(p);
        });
    std::vector<std::pair<int, v1::Band>> judged;  // rank, band at the rate
    for (size_t side = 0; side < 2; ++side) {
      const std::string& pool = side == 0 ? a100 : l40s;
      SCOPED_TRACE(pool);
      int rank = 0;
      while (rank < plan.candidates_size() &&
             plan.candidates(rank).pool() != pool) {
        ++rank;
      }
      ASSERT_LT(rank, plan.candidates_size());
      const v1::PlacementCandidate* c = &plan.candidates(rank);
      ASSERT_TRUE(c->has_observed());
      const v1::ObservedCost& o = c->observed();
      EXPECT_NEAR(o.gpu_hours_per_successful_step(),
                  ObservedFromUploads(counted[pool]),
                  1e-6 * o.gpu_hours_per_successful_step());
      EXPECT_EQ(o.job_steps(), 300);
      EXPECT_GE(o.projected_gpu_hours_per_successful_step(), o.band().low());
      EXPECT_LE(o.projected_gpu_hours_per_successful_step(), o.band().high());
      v1::Band at_rate;
      at_rate.set_low(o.band().low() * kRates[side]);
      at_rate.set_high(o.band().high() * kRates[side]);
      judged.emplace_back(rank, at_rate);
    }
    const auto& [a100_rank, a100_band] = judged[0];
    const auto& [l40s_rank, l40s_band] = judged[1];
    if (a100_band.high() < l40s_band.low()) {
      ++a100_cheaper;
      EXPECT_LT(a100_rank, l40s_rank);
    } else if (l40s_band.high() < a100_band.low()) {
      ++l40s_cheaper;
      EXPECT_LT(l40s_rank, a100_rank);
    }
  }
  // The ranking half must be exercised, both ways.
  EXPECT_GE(a100_cheaper, 1);
  EXPECT_GE(l40s_cheaper, 1);
}

// A year between start and end for 100 steps of 1.2 s is not evidence; nor
// are retry causes that do not add up to the retries. Both are refused with
// the field named, and nothing is stored.
TEST_F(OneCostTest, AnUploadItsOwnFiguresContradictIsRefused) {
  client_->CreatePool(TrainingPool("a100", kA100, 1, 8, 2'100'000));
  v1::Recipe recipe = Lora8b();
  recipe.set_gpu_count(1);
  ApiClient::TimedRun year = Run("a100", kA100, recipe, 100, 1.2, 0);
  year.steps_succeeded = 0;
  year.outcome = v1::RUN_OUTCOME_PREEMPTED;
  year.wall_s = 365 * 24 * 3600.0;
  grpc::Status refused = client_->Upload(ApiClient::RunOf(year));
  EXPECT_EQ(refused.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(ViolatedFields(refused), Contains("run.end_time"));

  ApiClient::TimedRun causes = Run("a100", kA100, recipe, 100, 1.2, 60);
  causes.retries = 2;
  causes.retry_outcomes = {v1::RUN_OUTCOME_PREEMPTED};
  refused = client_->Upload(ApiClient::RunOf(causes));
  EXPECT_EQ(refused.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(ViolatedFields(refused), Contains("run.retry_outcomes"));
  causes.retry_outcomes = {v1::RUN_OUTCOME_PREEMPTED,
                           v1::RUN_OUTCOME_SUCCEEDED};
  refused = client_->Upload(ApiClient::RunOf(causes));
  EXPECT_THAT(ViolatedFields(refused), Contains("run.retry_outcomes[1]"));
  EXPECT_EQ(db_.QueryValue("SELECT count(*) FROM benchmark_runs"), "0");
}

// Eight honest runs, then the oddest upload the API accepts: a preemption of
// 100 steps of 1.2 s with 47 hours of wall time beyond them. Every recipe on
// the pool, measured or not, moves by no more than 1.5x.
TEST_F(OneCostTest, OneOddUploadAmongEightHonestOnesMovesAPoolByItsShare) {
  client_->CreatePool(TrainingPool("a100", kA100, 1, 8, 2'100'000));
  v1::Recipe measured = Lora8b();
  measured.set_gpu_count(1);
  measured.set_parallelism(v1::PARALLELISM_SINGLE);
  v1::Recipe unmeasured = measured;
  unmeasured.set_gpu_count(2);
  unmeasured.set_parallelism(v1::PARALLELISM_DDP);
  for (int i = 0; i < 8; ++i) {
    ApiClient::TimedRun honest = Run("a100", kA100, measured, 500, 1.2, 180);
    if (i < 2) {
      honest.outcome = v1::RUN_OUTCOME_PREEMPTED;
      honest.steps_succeeded = 0;
    }
    client_->UploadTimedRun(honest);
  }
  auto cost = [&](const v1::Recipe& recipe, int runs) {
    return client_
        ->PlanUntil(PlanFor(recipe, 500),
                    [&](const v1::PlacePlanResponse& p) {
                      return Measured("a100", runs)(p) ||
                             (recipe.gpu_count() == 2 &&
                              p.candidates_size() == 1 &&
                              p.candidates(0).failure_rate().failures() ==
                                  (runs == 8 ? 2 : 3));
                    })
        .candidates(0)
        .expected_gpu_hours();
  };
  const double before_measured = cost(measured, 8);
  const double before_unmeasured = cost(unmeasured, 8);
  ApiClient::TimedRun odd = Run("a100", kA100, measured, 100, 1.2, 0);
  odd.steps_succeeded = 0;
  odd.outcome = v1::RUN_OUTCOME_PREEMPTED;
  odd.wall_s = 100 * 1.2 + 47 * 3600;
  client_->UploadTimedRun(odd);
  const double after_measured = cost(measured, 9);
  const double after_unmeasured = cost(unmeasured, 9);
  EXPECT_LE(after_measured / before_measured, 1.5);
  EXPECT_LE(after_unmeasured / before_unmeasured, 1.5);
  EXPECT_GT(after_measured, before_measured);  // it does count, by its share
}

}  // namespace
}  // namespace placement
