// One cost, true to its evidence: the planner's projection of a measured
// layout agrees with what the layout's runs cost (over many generated
// evidence sets), ranks pools the way their runs separate them, places the
// guide's L40S collective-timeout case on the A100, and moves by no more
// than its share when one upload lies.

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/evidence/fleet_model.h"
#include "core/evidence/run_attempts.h"
#include "core/plan/job_cost.h"
#include "core/plan/planner.h"
#include "gtest/gtest.h"
#include "tests/core/test_catalog.h"

namespace placement::core {
namespace {

using testing::TestCatalog;
using testing::TrainingPool;

constexpr char kL40s[] = "L40S-PCIE-48GB";
constexpr char kA100[] = "A100-SXM4-80GB";
constexpr absl::Time kEpoch = absl::FromUnixSeconds(1'700'000'000);

Recipe LoraDdp(int gpus) {
  Recipe r;
  r.model = "Llama-3.1-8B";
  r.method = FineTuneMethod::kLora;
  r.lora_rank = 16;
  r.target_modules = {"all-linear"};
  r.sequence_length = 2048;
  r.micro_batch_size = 1;
  r.gpu_count = gpus;
  r.parallelism = gpus > 1 ? Parallelism::kDdp : Parallelism::kSingle;
  r.activation_checkpointing = ActivationCheckpointing::kOn;
  r.attention = AttentionImplementation::kFlash;
  return NormalizeRecipe(r);
}

PlanRequest Request(const Recipe& recipe, int64_t steps) {
  PlanRequest request;
  request.recipe = recipe;
  request.total_steps = steps;
  return request;
}

const Candidate* Find(const PlanResult& plan, const std::string& pool) {
  for (const Candidate& c : plan.candidates) {
    if (c.pool_name == pool) return &c;
  }
  return nullptr;
}

// One attempt as the world ran it.
struct Attempt {
  int64_t steps = 0;  // run
  int64_t kept = 0;   // of them, kept (a success keeps all)
  double seconds = 0;
  RunOutcome outcome = RunOutcome::kSucceeded;
};

// A run record of `attempts` (retries inside it, as the agent reports).
MeasuredRun RunOf(const std::string& pool, const std::string& sku, int gpus,
                  const std::vector<Attempt>& attempts, double step_s,
                  double peak_gb, absl::Time start) {
  MeasuredRun run;
  run.pool_name = pool;
  run.sku_id = sku;
  run.gpu_count = gpus;
  run.started = start;
  double wall = 0;
  for (size_t i = 0; i < attempts.size(); ++i) {
    const Attempt& a = attempts[i];
    wall += a.seconds;
    run.steps_attempted += a.steps;
    if (i + 1 < attempts.size()) run.retry_outcomes.push_back(a.outcome);
  }
  // Kept steps: the last attempt's when it succeeded, else its checkpoint.
  run.steps_succeeded = std::min(run.steps_attempted, attempts.back().kept);
  run.ended = start + absl::Seconds(wall);
  run.retries = static_cast<int>(attempts.size()) - 1;
  run.outcome = attempts.back().outcome;
  run.step_time_mean_s = step_s;
  run.step_time_p50_s = step_s * 0.98;
  run.step_time_p95_s = step_s * 1.1;
  run.peak_memory_gb = peak_gb;
  run.interconnect = gpus > 1 ? Interconnect::kNvlink : Interconnect::kNone;
  run.collectives_opened = gpus > 1;
  return run;
}

// GPU-hours as the runs held them (counted) over their successful steps,
// straight from the runs. Counted as the evidence counts them: among four
// runs or more, the run with the most failed attempts counts at most twice
// the next one's, and at least two (core/evidence/most_failed_run.h), its
// other attempts' share of its hours left out.
double ObservedFromRuns(const std::vector<MeasuredRun>& runs) {
  double gpu_hours = 0;
  int64_t kept = 0;
  const MeasuredRun* most = nullptr;
  int64_t most_failed = 0;
  int64_t second_failed = 0;
  for (const MeasuredRun& run : runs) {
    const RunAttempts a = AttemptsOf(run);
    gpu_hours += run.gpu_count * a.counted_hours;
    kept += run.steps_succeeded;
    if (a.failed_attempts > most_failed) {
      second_failed = most_failed;
      most_failed = a.failed_attempts;
      most = &run;
    } else {
      second_failed = std::max(second_failed, a.failed_attempts);
    }
  }
  const int64_t excess = most_failed - std::max<int64_t>(2, 2 * second_failed);
  if (runs.size() >= 4 && most != nullptr && excess > 0) {
    const RunAttempts a = AttemptsOf(*most);
    gpu_hours -= most->gpu_count * a.counted_hours *
                 static_cast<double>(excess) / static_cast<double>(a.attempts);
  }
  return gpu_hours / static_cast<double>(kept);
}

// ---------------------------------------------------------------------------
// The guide's cautionary case. Two pools, the same 2-GPU DDP LoRA recipe on
// both. On the L40S (PCIe) 6 runs: 3 succeeded, 3 ended in a collective
// timeout after three attempts each (retries = 2, 200 steps an attempt,
// nothing checkpointed). On the A100 (NVLink) 6 runs all succeeded.

std::vector<MeasuredRun> L40sRuns() {
  std::vector<MeasuredRun> runs;
  const Attempt ok{200, 200, 60 + 200 * 0.6, RunOutcome::kSucceeded};
  const Attempt timeout{200, 0, 60 + 200 * 0.6, RunOutcome::kCollectiveTimeout};
  for (int i = 0; i < 3; ++i) {
    runs.push_back(RunOf("l40s", kL40s, 2, {ok}, 0.6, 30, kEpoch));
    runs.push_back(
        RunOf("l40s", kL40s, 2, {timeout, timeout, timeout}, 0.6, 30, kEpoch));
    runs.back().retry_outcomes.clear();  // an agent that names no causes
  }
  for (MeasuredRun& run : runs) run.interconnect = Interconnect::kPcie;
  return runs;
}

std::vector<MeasuredRun> A100Runs() {
  std::vector<MeasuredRun> runs;
  const Attempt ok{200, 200, 60 + 200 * 0.5, RunOutcome::kSucceeded};
  for (int i = 0; i < 6; ++i) {
    runs.push_back(RunOf("a100", kA100, 2, {ok}, 0.5, 30, kEpoch));
  }
  return runs;
}

std::vector<Pool> GuidePools() {
  return {TrainingPool("a100", kA100, Fabric::kNvlink, 8, 1, 2'100'000),
          TrainingPool("l40s", kL40s, Fabric::kPcie, 4, 1, 900'000)};
}

// The guide's A100 pool alone.
std::vector<Pool> A100Pool() { return {GuidePools()[0]}; }

TEST(OneCostTest, TheCollectiveTimeoutCaseIsPlacedOnTheA100) {
  InMemoryEvidence evidence;
  const std::vector<MeasuredRun> l40s = L40sRuns();
  for (const MeasuredRun& run : l40s) evidence.AddRun(LoraDdp(2), run);
  for (const MeasuredRun& run : A100Runs()) evidence.AddRun(LoraDdp(2), run);
  const absl::StatusOr<PlanResult> planned =
      Plan(Request(LoraDdp(2), 200), GuidePools(), TestCatalog(), evidence);
  ASSERT_TRUE(planned.ok()) << planned.status();
  const PlanResult& plan = *planned;
  ASSERT_EQ(plan.candidates.size(), 2u);
  EXPECT_EQ(plan.candidates.front().pool_name, "a100");
  const Candidate* on_l40s = Find(plan, "l40s");
  ASSERT_NE(on_l40s, nullptr);
  // Its own runs: 12 attempts of 0.1 GPU-hours for 600 kept steps.
  const double observed = ObservedFromRuns(l40s);
  EXPECT_NEAR(observed * 1000, 2.0, 1e-9);
  ASSERT_TRUE(on_l40s->observed.has_value());
  EXPECT_NEAR(on_l40s->observed->gpu_hours_per_successful_step, observed, 1e-9);
  // Nine failed attempts, all the fabric's.
  EXPECT_EQ(on_l40s->failure_rate.failures, 9);
  EXPECT_TRUE(on_l40s->failure_rate.recipe_measured);
  // The projection of the runs' own job rests on them: in their band, and
  // not half of what they cost.
  const double projected =
      on_l40s->projected_gpu_hours_per_successful_step_at_observed;
  EXPECT_GE(projected, on_l40s->observed->band.low);
  EXPECT_LE(projected, on_l40s->observed->band.high);
  EXPECT_GT(projected, 0.8 * observed);
  EXPECT_GT(on_l40s->expected_gpu_hours / 200, 0.8 * observed);
}

// ---------------------------------------------------------------------------
// The invariant over generated evidence: for every (recipe, pool) with
// measured runs, the projected cost per successful step of a job as long as
// those runs lies within the band of what they observed; where two pools'
// observed bands separate, the plan ranks them the same way.

struct World {
  double step_s = 1;
  double startup_s = 60;
  double fail_per_attempt = 0;  // chance an attempt fails
  double kept_share = 0;        // of a failed attempt's steps, checkpointed
  int max_retries = 0;
  RunOutcome cause = RunOutcome::kPreempted;
};

std::vector<MeasuredRun> Generate(std::mt19937& rng, const World& w,
                                  const std::string& pool,
                                  const std::string& sku, int gpus, int runs,
                                  int64_t steps) {
  std::uniform_real_distribution<double> u(0, 1);
  std::lognormal_distribution<double> noise(0, 0.05);
  std::vector<MeasuredRun> out;
  for (int r = 0; r < runs; ++r) {
    const double step_s = w.step_s * noise(rng);
    std::vector<Attempt> attempts;
    for (int a = 0; a <= w.max_retries; ++a) {
      const double startup = w.startup_s * noise(rng);
      if (u(rng) < w.fail_per_attempt) {
        const int64_t ran = 1 + static_cast<int64_t>(u(rng) * (steps - 1));
        attempts.push_back({ran, static_cast<int64_t>(ran * w.kept_share),
                            startup + ran * step_s + 60 * u(rng), w.cause});
      } else {
        attempts.push_back(
            {steps, steps, startup + steps * step_s, RunOutcome::kSucceeded});
        break;
      }
    }
    out.push_back(
        RunOf(pool, sku, gpus, attempts, step_s, 30, kEpoch + absl::Hours(r)));
  }
  return out;
}

World RandomWorld(std::mt19937& rng, int gpus) {
  std::uniform_real_distribution<double> u(0, 1);
  World w;
  w.step_s = 0.3 * std::pow(10, u(rng));    // 0.3 .. 3 s
  w.startup_s = 20 * std::pow(30, u(rng));  // 20 s .. 10 min
  const double rates[] = {0, 0, 0.05, 0.15, 0.3, 0.5};
  w.fail_per_attempt = rates[static_cast<int>(u(rng) * 6)];
  w.kept_share = u(rng) < 0.5 ? 0 : 0.5;
  w.max_retries = u(rng) < 0.5 ? 0 : 2;
  const RunOutcome causes[] = {
      RunOutcome::kPreempted, RunOutcome::kHardwareError, RunOutcome::kOom,
      RunOutcome::kFailed, RunOutcome::kCollectiveTimeout};
  w.cause = causes[static_cast<int>(u(rng) * (gpus > 1 ? 5 : 4))];
  return w;
}

TEST(OneCostTest, ProjectionLiesInTheBandOfWhatItsRunsObserved) {
  std::mt19937 rng(20261203);
  int separated = 0;
  for (int set = 0; set < 300; ++set) {
    SCOPED_TRACE(absl::StrCat("evidence set ", set));
    std::uniform_int_distribution<int> pick(0, 3);
    const int gpus = std::vector<int>{1, 2, 2, 4}[pick(rng)];
    const int64_t steps = 50 * std::uniform_int_distribution<int>(1, 40)(rng);
    const int runs = std::uniform_int_distribution<int>(3, 12)(rng);
    const Recipe recipe = LoraDdp(gpus);
    const World a = RandomWorld(rng, gpus);
    const World b = RandomWorld(rng, gpus);
    const std::vector<MeasuredRun> on_a =
        Generate(rng, a, "a100", kA100, gpus, runs, steps);
    const std::vector<MeasuredRun> on_b =
        Generate(rng, b, "l40s", kL40s, gpus, runs, steps);
    InMemoryEvidence evidence;
    for (const MeasuredRun& run : on_a) evidence.AddRun(recipe, run);
    for (const MeasuredRun& run : on_b) evidence.AddRun(recipe, run);
    const std::vector<Pool> pools = GuidePools();
    const absl::StatusOr<PlanResult> planned =
        Plan(Request(recipe, steps), pools, TestCatalog(), evidence);
    ASSERT_TRUE(planned.ok()) << planned.status();
    const PlanResult& plan = *planned;
    struct Judged {
      const Candidate* cand = nullptr;
      Band cost_band;
    };
    std::vector<Judged> judged;
    for (const auto& [pool, runs_of] :
         {std::pair{pools[0], &on_a}, std::pair{pools[1], &on_b}}) {
      const Candidate* c = Find(plan, pool.name);
      int64_t kept = 0;
      for (const MeasuredRun& run : *runs_of) kept += run.steps_succeeded;
      if (c == nullptr || kept == 0) continue;  // rejected, or none kept
      ASSERT_TRUE(c->observed.has_value()) << pool.name;
      const ObservedCost& o = *c->observed;
      EXPECT_NEAR(o.gpu_hours_per_successful_step, ObservedFromRuns(*runs_of),
                  1e-6 * o.gpu_hours_per_successful_step);
      EXPECT_GE(o.band.low, 0);
      EXPECT_LE(o.band.low, o.gpu_hours_per_successful_step);
      EXPECT_GE(o.band.high, o.gpu_hours_per_successful_step);
      const double projected =
          c->projected_gpu_hours_per_successful_step_at_observed;
      EXPECT_GE(projected, o.band.low) << pool.name;
      EXPECT_LE(projected, o.band.high) << pool.name;
      const double rate = pool.internal_rate_micros_per_gpu_hour;
      judged.push_back({c, {o.band.low * rate, o.band.high * rate}});
    }
    if (judged.size() == 2) {
      const Judged& first = judged[0];
      const Judged& second = judged[1];
      if (first.cost_band.high < second.cost_band.low) {
        ++separated;
        EXPECT_LT(first.cand->rank, second.cand->rank);
      } else if (second.cost_band.high < first.cost_band.low) {
        ++separated;
        EXPECT_LT(second.cand->rank, first.cand->rank);
      }
    }
  }
  // The generator must exercise the ranking half too.
  EXPECT_GT(separated, 30);
}

// Eight runs alike that never failed: the band is not their figure alone.
// They held the pool for under an hour, which rules out no failure rate
// below a few an hour, and the projection of a job as long as theirs
// prices the pool's rate; the band's upper edge prices the rate the runs
// leave open (their Jeffreys p90, each failure a relaunch and half a job),
// so the projection lies within it.
TEST(OneCostTest, RunsThatNeverFailedLeaveTheRateTheyCannotRuleOutInTheBand) {
  const Recipe recipe = LoraDdp(1);
  InMemoryEvidence evidence;
  const Attempt ok{300, 300, 90 + 300 * 0.5, RunOutcome::kSucceeded};
  for (int i = 0; i < 8; ++i) {
    MeasuredRun run =
        RunOf("a100", kA100, 1, {ok}, 0.5, 30, kEpoch + absl::Hours(i));
    run.step_time_p50_s = run.step_time_p95_s = 0.5;  // no slow steps
    evidence.AddRun(recipe, run);
  }
  const std::vector<Pool> pools = A100Pool();
  const absl::StatusOr<PlanResult> plan =
      Plan(Request(recipe, 300), pools, TestCatalog(), evidence);
  ASSERT_TRUE(plan.ok()) << plan.status();
  const Candidate* c = Find(*plan, "a100");
  ASSERT_NE(c, nullptr);
  ASSERT_TRUE(c->observed.has_value());
  const ObservedCost& o = *c->observed;
  EXPECT_NEAR(o.gpu_hours_per_successful_step, (90 + 300 * 0.5) / 3600 / 300,
              1e-9);
  EXPECT_GT(c->rework_gpu_hours, 0);  // the pool's rate, priced
  EXPECT_GT(o.band.high, 1.05 * o.gpu_hours_per_successful_step);
  EXPECT_GE(c->projected_gpu_hours_per_successful_step_at_observed, o.band.low);
  EXPECT_LE(c->projected_gpu_hours_per_successful_step_at_observed,
            o.band.high);
}

// ---------------------------------------------------------------------------
// One upload among eight honest ones moves no recipe's projected cost on
// the pool by more than 1.5x, in either direction.

std::vector<MeasuredRun> Honest(const std::string& pool, int runs,
                                int failures) {
  std::vector<MeasuredRun> out;
  for (int i = 0; i < runs; ++i) {
    const bool fail = i < failures;
    const Attempt attempt{
        500, fail ? 0 : 500, 180 + 500 * 1.2,
        fail ? RunOutcome::kPreempted : RunOutcome::kSucceeded};
    out.push_back(
        RunOf(pool, kA100, 1, {attempt}, 1.2, 30, kEpoch + absl::Hours(i)));
  }
  return out;
}

// The expected GPU-hours of a 500-step job of `recipe` on the pool whose
// runs are `runs` (all of `measured`).
double CostOn(const std::vector<MeasuredRun>& runs,
              const Recipe& measured_recipe, const Recipe& recipe) {
  InMemoryEvidence evidence;
  for (const MeasuredRun& run : runs) evidence.AddRun(measured_recipe, run);
  const std::vector<Pool> pools = A100Pool();
  const absl::StatusOr<PlanResult> plan =
      Plan(Request(recipe, 500), pools, TestCatalog(), evidence);
  EXPECT_TRUE(plan.ok()) << plan.status();
  if (!plan.ok() || plan->candidates.size() != 1) {
    ADD_FAILURE() << "expected one candidate";
    return 0;
  }
  return plan->candidates[0].expected_gpu_hours;
}

TEST(OneCostTest, OneOddUploadMovesAPoolByNoMoreThanItsShare) {
  const Recipe recipe = LoraDdp(1);
  // Never measured, and no nearby recipe to transfer from: priced at the
  // pool's failure rate.
  const Recipe other = LoraDdp(2);
  struct Liar {
    std::string what;
    MeasuredRun run;
  };
  auto lie = [](double wall_s, int64_t steps, double step_s,
                RunOutcome outcome) {
    return RunOf("a100", kA100, 1,
                 {{steps, outcome == RunOutcome::kSucceeded ? steps : 0, wall_s,
                   outcome}},
                 step_s, 30, kEpoch + absl::Hours(100));
  };
  std::vector<Liar> liars = {
      {"a year of wall for 100 preempted steps",
       lie(365 * 24 * 3600.0, 100, 1.2, RunOutcome::kPreempted)},
      {"the most wall the API accepts for 100 preempted steps",
       lie(100 * 1.2 + 48 * 3600, 100, 1.2, RunOutcome::kPreempted)},
      {"a long succeeded run",
       lie(100 * 1.2 + 48 * 3600, 100, 1.2, RunOutcome::kSucceeded)},
      {"a run of day-long steps",
       lie(100 * 86400.0 + 180, 100, 86400, RunOutcome::kSucceeded)},
  };
  // One run of many failed attempts, each of 20 steps and the most wall
  // the API accepts (counted as its steps and half an hour): it moved the
  // cost up to 3.1x when every failed attempt counted
  // (core/evidence/most_failed_run.h).
  auto retried = [](int retries, RunOutcome retry, RunOutcome last) {
    constexpr double kWallS = 20 * 1.2 + 48 * 3600;
    std::vector<Attempt> attempts(retries, Attempt{20, 0, kWallS, retry});
    attempts.push_back(
        {20, last == RunOutcome::kSucceeded ? 20 : 0, kWallS, last});
    return RunOf("a100", kA100, 1, attempts, 1.2, 30,
                 kEpoch + absl::Hours(100));
  };
  for (int retries : {1, 2, 5, 20}) {
    liars.push_back(
        {absl::StrCat("succeeded after ", retries, " preemptions"),
         retried(retries, RunOutcome::kPreempted, RunOutcome::kSucceeded)});
    liars.push_back(
        {absl::StrCat("succeeded after ", retries, " unexplained failures"),
         retried(retries, RunOutcome::kFailed, RunOutcome::kSucceeded)});
    liars.push_back(
        {absl::StrCat(retries + 1, " preemptions"),
         retried(retries, RunOutcome::kPreempted, RunOutcome::kPreempted)});
    liars.push_back(
        {absl::StrCat(retries + 1, " unexplained failures"),
         retried(retries, RunOutcome::kFailed, RunOutcome::kFailed)});
  }
  for (int failures : {0, 3}) {
    const std::vector<MeasuredRun> honest = Honest("a100", 8, failures);
    const double measured = CostOn(honest, recipe, recipe);
    const double estimated = CostOn(honest, recipe, other);
    for (const Liar& liar : liars) {
      SCOPED_TRACE(absl::StrCat(liar.what, ", ", failures, " honest failures"));
      std::vector<MeasuredRun> with = honest;
      with.push_back(liar.run);
      const double m = CostOn(with, recipe, recipe);
      const double e = CostOn(with, recipe, other);
      EXPECT_LE(std::max(m / measured, measured / m), 1.5);
      EXPECT_LE(std::max(e / estimated, estimated / e), 1.5);
    }
  }
}

// ---------------------------------------------------------------------------
// A failure's detection and relaunch are priced per failure, not in every
// job's start-up. Four runs of 1,000 steps at 2.5 s: two clean (a 180 s
// start-up), two that succeeded after one retry (the failed attempt: a
// start-up, 600 steps lost, 15 minutes until the hang was detected and 5 to
// relaunch). Counted per attempt, those two spent (180 + 1200 + 180) / 2 =
// 780 s outside their steps an attempt; a 200-step job pays one 180 s
// start-up and its share of failures, never 780 s.

constexpr Attempt kClean{1000, 1000, 180 + 1000 * 2.5, RunOutcome::kSucceeded};
constexpr Attempt kHung{600, 0, 180 + 600 * 2.5 + 1200,
                        RunOutcome::kHardwareError};

// What the two tests below check last: a job as long as the runs projects
// what they cost.
void ExpectProjectsItsObservedCost(const Candidate& c) {
  ASSERT_TRUE(c.observed.has_value());
  EXPECT_GE(c.projected_gpu_hours_per_successful_step_at_observed,
            c.observed->band.low);
  EXPECT_LE(c.projected_gpu_hours_per_successful_step_at_observed,
            c.observed->band.high);
}

TEST(OneCostTest, AFailuresDetectionIsPricedPerFailureNotInEveryStartUp) {
  const Recipe recipe = LoraDdp(1);
  std::vector<MeasuredRun> runs;
  for (int i = 0; i < 2; ++i) {
    runs.push_back(RunOf("a100", kA100, 1, {kClean}, 2.5, 30,
                         kEpoch + absl::Hours(2 * i)));
    runs.push_back(RunOf("a100", kA100, 1, {kHung, kClean}, 2.5, 30,
                         kEpoch + absl::Hours(2 * i + 1)));
  }
  InMemoryEvidence evidence;
  for (const MeasuredRun& run : runs) evidence.AddRun(recipe, run);
  const std::vector<Pool> pools = A100Pool();
  const absl::StatusOr<PlanResult> short_job =
      Plan(Request(recipe, 200), pools, TestCatalog(), evidence);
  ASSERT_TRUE(short_job.ok()) << short_job.status();
  ASSERT_EQ(short_job->candidates.size(), 1u);
  const Candidate& c = short_job->candidates[0];
  // The clean runs' start-up, within the histogram's 19% bucket.
  EXPECT_NEAR(c.startup_gpu_hours, 180.0 / 3600, 0.1 * 180 / 3600);
  // Start-up and steps (0.189 h) plus about 0.05 h of expected rework; at
  // 780 s a start-up it would be 0.35.
  EXPECT_GT(c.expected_gpu_hours, (180 + 200 * 2.5) / 3600);
  EXPECT_LT(c.expected_gpu_hours, 0.28);
  // A job as long as the attempts loses what a failure lost: its start-up,
  // 600 steps and the 20 minutes (2880 s).
  const absl::StatusOr<PlanResult> long_job =
      Plan(Request(recipe, 4000), pools, TestCatalog(), evidence);
  ASSERT_TRUE(long_job.ok()) << long_job.status();
  ASSERT_EQ(long_job->candidates.size(), 1u);
  EXPECT_NEAR(long_job->candidates[0].job_lost_hours_per_failure, 2880.0 / 3600,
              0.1 * 2880 / 3600);
  // And a job as long as the runs still projects what they cost.
  ExpectProjectsItsObservedCost(c);
}

// When every succeeded run of the layout retried, its own start-up holds
// the failures' detection (an upper bound); the model's start-up measured
// on a layout whose runs did not retry (FleetModel::Startup) stands in,
// and a job as long as the runs still projects what they cost.
TEST(OneCostTest, RunsThatAllRetriedTakeTheModelsStartUpFromElsewhere) {
  const Recipe recipe = LoraDdp(1);
  const Recipe other_layout = LoraDdp(2);
  const Attempt ok_on_two{1000, 1000, 180 + 1000 * 1.3, RunOutcome::kSucceeded};
  InMemoryEvidence evidence;
  for (int i = 0; i < 2; ++i) {
    evidence.AddRun(recipe, RunOf("a100", kA100, 1, {kHung, kClean}, 2.5, 30,
                                  kEpoch + absl::Hours(i)));
    evidence.AddRun(other_layout, RunOf("a100", kA100, 2, {ok_on_two}, 1.3, 30,
                                        kEpoch + absl::Hours(10 + i)));
  }
  const std::vector<Pool> pools = A100Pool();
  const FleetModel fleet =
      FleetModel::Fit(FleetCellsFromEvidence(evidence.All(), TestCatalog()));
  for (const FleetModel* with :
       {static_cast<const FleetModel*>(nullptr), &fleet}) {
    SCOPED_TRACE(with == nullptr ? "without the fleet" : "with the fleet");
    const absl::StatusOr<PlanResult> plan =
        Plan(Request(recipe, 200), pools, TestCatalog(), evidence, with);
    ASSERT_TRUE(plan.ok()) << plan.status();
    ASSERT_EQ(plan->candidates.size(), 1u);
    const Candidate& c = plan->candidates[0];
    if (with == nullptr) {
      // (180 + 1200 + 180) / 2 s an attempt: all it can tell.
      EXPECT_GT(c.startup_gpu_hours, 600.0 / 3600);
    } else {
      EXPECT_NEAR(c.startup_gpu_hours, 180.0 / 3600, 0.1 * 180 / 3600);
      EXPECT_LT(c.expected_gpu_hours, 0.28);
    }
    ExpectProjectsItsObservedCost(c);
  }
}

}  // namespace
}  // namespace placement::core
