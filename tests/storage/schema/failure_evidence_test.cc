// The start-up and failure evidence of migrations 0017 and 0022, derived by
// the database from every stored run: the busy, succeeded, counted and lost
// GPU time of each evidence rollup, its start-up and step histograms and
// the per-pool failure rows (per attempt) equal what core's
// EvidenceRollup::Add and PoolReliabilityRollup::Add make of the same runs
// (core/evidence/run_attempts.h in SQL), whichever binary stored them (this
// one, one that knows nothing of them, several at once), and the
// migrations' backfills give the same figures down and up again, also
// after a backfill stopped half-way. The cost rollups count a failed run's
// kept steps.
#include <pqxx/pqxx>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/evidence/evidence.h"
#include "core/evidence/pool_reliability.h"
#include "core/recipe.h"
#include "gtest/gtest.h"
#include "storage/schema/backfills.h"
#include "storage/schema/migrations.h"
#include "storage/stores/pool_reliability_store.h"
#include "storage/stores/pool_store.h"
#include "storage/stores/run_store.h"
#include "tests/storage/stored_records.h"
#include "tests/support/test_database.h"

namespace placement::storage {
namespace {

using ::placement::testing::MigrationsAbove;
using ::placement::testing::TestDatabase;

constexpr char kSku[] = "H100-SXM5-80GB";
constexpr char kPool[] = "h100-train";
constexpr int kFailureEvidenceVersion = 17;
constexpr int64_t kSecond = 1'000'000;  // microseconds

core::Pool H100Pool() {
  return testing::TrainingPool(kPool, kSku, core::Fabric::kNvlink,
                               3'600'000);  // $3.60 / GPU-hour
}

struct RunShape {
  int gpus;
  int wall_s;
  int64_t attempted;
  int64_t succeeded;
  double step_s;
  core::RunOutcome outcome;
  int retries = 0;
  std::vector<core::RunOutcome> retry_outcomes = {};
};

RunToStore MakeRun(const core::Recipe& recipe, int i, const RunShape& shape) {
  RunToStore in = testing::SucceededRun(
      recipe, H100Pool(), i, absl::FromUnixSeconds(1'790'000'000 + 10'000 * i));
  core::MeasuredRun& run = in.run;
  testing::OnNvlinkGpus(shape.gpus, &run);
  run.started = run.ended - absl::Seconds(shape.wall_s);
  run.steps_attempted = shape.attempted;
  run.steps_succeeded = shape.succeeded;
  run.step_time_mean_s = run.step_time_p50_s = shape.step_s;
  run.step_time_p95_s = shape.step_s * 1.2;
  run.peak_memory_gb = 40;
  run.outcome = shape.outcome;
  run.retries = shape.retries;
  run.retry_outcomes = shape.retry_outcomes;
  return in;
}

// The four runs of the brief, all of one recipe on one pool:
//  0: succeeded, 2 GPUs x 1 h, 1000 steps of 3 s: 6000 busy GPU-s of 7200,
//     so 1200 GPU-s of start-up;
//  1: preempted, 1 GPU x 2 h, 1500 of 4 s attempted, 1000 kept: 6000 busy
//     GPU-s, 7200 - 4000 = 3200 s lost;
//  2: out of memory, 1 GPU x 10 min, no step: no busy time, no pool failure;
//  3: collective timeout, 4 GPUs x 30 min, 200 of 5 s attempted, 100 kept:
//     4000 busy GPU-s, 1800 - 500 = 1300 s lost (multi-GPU row).
// And, per attempt (migration 0022):
//  4: succeeded after a preemption and a hardware error, 2 GPUs x 2 h, 3000
//     of 2 s attempted, 1000 kept: three attempts, two failed;
//  5: preempted, 1 GPU, a week between start and end for 100 steps of
//     1.2 s: counted as the steps and half an hour;
//  6: collective timeout after two retries (causes not named), 2 GPUs.
std::vector<RunShape> BriefRuns() {
  return {{2, 3600, 1000, 1000, 3.0, core::RunOutcome::kSucceeded},
          {1, 7200, 1500, 1000, 4.0, core::RunOutcome::kPreempted},
          {1, 600, 0, 0, 0.5, core::RunOutcome::kOom},
          {4, 1800, 200, 100, 5.0, core::RunOutcome::kCollectiveTimeout},
          {2,
           7200,
           3000,
           1000,
           2.0,
           core::RunOutcome::kSucceeded,
           2,
           {core::RunOutcome::kPreempted, core::RunOutcome::kHardwareError}},
          {1, 7 * 24 * 3600, 100, 0, 1.2, core::RunOutcome::kPreempted},
          {2, 3 * 180, 600, 0, 0.6, core::RunOutcome::kCollectiveTimeout, 2}};
}

// The first four, whose figures 0017's columns are checked against.
std::vector<RunShape> PerRunBriefRuns() {
  std::vector<RunShape> runs = BriefRuns();
  runs.resize(4);
  return runs;
}

class FailureEvidenceTest : public ::testing::Test {
 protected:
  FailureEvidenceTest() : session_(db_.url()) {
    db_.Migrate();
    EXPECT_TRUE(CreatePool(session_, H100Pool(), kPool).ok());
  }

  core::EvidenceRollup RollupOf(const core::Recipe& recipe) {
    absl::StatusOr<std::vector<StoredRollup>> rollups = ListRollups(session_);
    EXPECT_TRUE(rollups.ok()) << rollups.status();
    for (const StoredRollup& stored : *rollups) {
      if (stored.rollup.recipe_key == core::RecipeKey(recipe)) {
        return stored.rollup;
      }
    }
    ADD_FAILURE() << "no rollup of " << core::RecipeKey(recipe);
    return {};
  }

  std::vector<core::PoolReliabilityRollup> PoolRows() {
    absl::StatusOr<std::vector<core::PoolReliabilityRollup>> rows =
        ListPoolReliability(session_);
    EXPECT_TRUE(rows.ok()) << rows.status();
    return rows.ok() ? *rows : std::vector<core::PoolReliabilityRollup>{};
  }

  // busy|succeeded|succeeded_busy of the recipe's row, in microseconds.
  std::string BusyColumns(const core::Recipe& recipe) {
    return db_.QueryValue(absl::StrCat(
        "SELECT concat_ws('|', busy_gpu_microseconds, "
        "succeeded_gpu_microseconds, succeeded_busy_gpu_microseconds) "
        "FROM evidence_rollups WHERE recipe_key = '",
        core::RecipeKey(recipe), "'"));
  }

  // The per-attempt columns of every row, one line each.
  std::string AttemptColumns() {
    return db_.QueryValue(
               "SELECT string_agg(concat_ws('|', pool_name, multi_gpu, "
               "attempts, "
               "counted_run_microseconds, preempted_attempts, "
               "hardware_error_attempts, collective_timeout_attempts, "
               "attempt_lost_microseconds), ',' ORDER BY pool_name, multi_gpu) "
               "FROM pool_reliability_rollups") +
           db_.QueryValue(
               "SELECT string_agg(concat_ws('|', counted_gpu_microseconds, "
               "lost_gpu_microseconds, succeeded_attempts, startup_hist, "
               "step_time_mean_hist), ',' ORDER BY recipe_key) FROM "
               "evidence_rollups");
  }

  // One line per row: pool|multi|runs|run_us|preempted|hw|coll|lost_us.
  std::string PoolColumns() {
    return db_.QueryValue(
        "SELECT string_agg(concat_ws('|', pool_name, multi_gpu, runs, "
        "run_microseconds, preempted_runs, hardware_error_runs, "
        "collective_timeout_runs, failure_lost_microseconds), ',' "
        "ORDER BY pool_name, multi_gpu) FROM pool_reliability_rollups");
  }

  TestDatabase db_;
  DbSession session_;
};

// Microsecond rounding per run, summed.
constexpr double kHoursTolerance = 1e-8;

// Migration 0028's columns against core::MostFailedRun.
void ExpectSameMostFailedRun(const core::MostFailedRun& stored,
                             const core::MostFailedRun& expected) {
  EXPECT_EQ(stored.failed_attempts, expected.failed_attempts);
  EXPECT_EQ(stored.node_failed_attempts, expected.node_failed_attempts);
  EXPECT_EQ(stored.fabric_failed_attempts, expected.fabric_failed_attempts);
  EXPECT_EQ(stored.attempts, expected.attempts);
  EXPECT_NEAR(stored.counted_hours, expected.counted_hours, kHoursTolerance);
  EXPECT_NEAR(stored.lost_hours, expected.lost_hours, kHoursTolerance);
  EXPECT_EQ(stored.startup_bucket, expected.startup_bucket);
  EXPECT_EQ(stored.second_failed_attempts, expected.second_failed_attempts);
}

void ExpectSameRollup(const core::EvidenceRollup& stored,
                      const core::EvidenceRollup& expected) {
  EXPECT_EQ(stored.runs, expected.runs);
  EXPECT_NEAR(stored.gpu_hours, expected.gpu_hours, 1e-9);
  EXPECT_NEAR(stored.busy_gpu_hours, expected.busy_gpu_hours, 1e-9);
  EXPECT_NEAR(stored.succeeded_gpu_hours, expected.succeeded_gpu_hours, 1e-9);
  EXPECT_NEAR(stored.succeeded_busy_gpu_hours,
              expected.succeeded_busy_gpu_hours, 1e-9);
  EXPECT_NEAR(stored.counted_gpu_hours, expected.counted_gpu_hours,
              kHoursTolerance);
  EXPECT_NEAR(stored.lost_gpu_hours, expected.lost_gpu_hours, kHoursTolerance);
  EXPECT_EQ(stored.node_failed_attempts, expected.node_failed_attempts);
  EXPECT_EQ(stored.fabric_failed_attempts, expected.fabric_failed_attempts);
  EXPECT_EQ(stored.succeeded_attempts, expected.succeeded_attempts);
  EXPECT_NEAR(stored.succeeded_counted_gpu_hours,
              expected.succeeded_counted_gpu_hours, kHoursTolerance);
  EXPECT_EQ(stored.startup_hist, expected.startup_hist);
  EXPECT_EQ(stored.step_time_mean_hist, expected.step_time_mean_hist);
  ExpectSameMostFailedRun(stored.most_failed_run, expected.most_failed_run);
}

void ExpectSamePoolRow(const core::PoolReliabilityRollup& stored,
                       const core::PoolReliabilityRollup& expected) {
  EXPECT_EQ(stored.pool_name, expected.pool_name);
  EXPECT_EQ(stored.multi_gpu, expected.multi_gpu);
  EXPECT_EQ(stored.runs, expected.runs);
  EXPECT_EQ(stored.attempts, expected.attempts);
  EXPECT_NEAR(stored.run_hours, expected.run_hours, kHoursTolerance);
  EXPECT_EQ(stored.preempted_attempts, expected.preempted_attempts);
  EXPECT_EQ(stored.hardware_error_attempts, expected.hardware_error_attempts);
  EXPECT_EQ(stored.collective_timeout_attempts,
            expected.collective_timeout_attempts);
  EXPECT_NEAR(stored.failure_lost_hours, expected.failure_lost_hours,
              kHoursTolerance);
  EXPECT_EQ(stored.run_hours_hist, expected.run_hours_hist);
  for (int i = 0; i < core::kHistogramBuckets; ++i) {
    EXPECT_NEAR(stored.run_microseconds_by_bucket.counts[i],
                expected.run_microseconds_by_bucket.counts[i], 10)
        << "bucket " << i;
  }
  ExpectSameMostFailedRun(stored.most_failed_run, expected.most_failed_run);
}

// The stored figures equal what core makes of the same runs (one GPU's
// pool row first).
void ExpectCoreFigures(
    const std::vector<RunToStore>& runs, const core::EvidenceRollup& stored,
    const std::vector<core::PoolReliabilityRollup>& pool_rows) {
  core::EvidenceRollup expected;
  core::PoolReliabilityRollup single, multi;
  for (const RunToStore& run : runs) {
    expected.Add(run.run);
    (run.run.gpu_count > 1 ? multi : single).Add(run.run);
  }
  ExpectSameRollup(stored, expected);
  ASSERT_EQ(pool_rows.size(), 2u);
  ExpectSamePoolRow(pool_rows[0], single);
  ExpectSamePoolRow(pool_rows[1], multi);
}

TEST_F(FailureEvidenceTest, RollupAndPoolRowsEqualCoreSumsOfTheStoredRuns) {
  const core::Recipe recipe = testing::Llama8bLora(2048);
  std::vector<RunToStore> runs;
  for (const RunShape& shape : PerRunBriefRuns()) {
    runs.push_back(MakeRun(recipe, static_cast<int>(runs.size()), shape));
    ASSERT_TRUE(InsertRun(session_, runs.back()).ok());
  }
  // A retry of an upload adds nothing.
  ASSERT_TRUE(InsertRun(session_, runs[1]).ok());

  // 6000 + 6000 + 0 + 4000 busy GPU-s; the succeeded run's 7200 GPU-s, 6000
  // of them busy.
  EXPECT_EQ(
      BusyColumns(recipe),
      absl::StrCat(16000 * kSecond, "|", 7200 * kSecond, "|", 6000 * kSecond));
  // One GPU: the preempted and the out-of-memory runs (7200 + 600 s held,
  // 3200 s lost); several: the succeeded and the timed-out (3600 + 1800 s,
  // 1300 s lost).
  EXPECT_EQ(PoolColumns(),
            absl::StrCat(kPool, "|f|2|", 7800 * kSecond, "|1|0|0|",
                         3200 * kSecond, ",", kPool, "|t|2|", 5400 * kSecond,
                         "|0|0|1|", 1300 * kSecond));
  ExpectCoreFigures(runs, RollupOf(recipe), PoolRows());

  // What the planner derives: 6000 / 2700 busy GPU-s a step, 1200 GPU-s of
  // start-up per succeeded run.
  const core::EvidenceStats stats = core::Summarize(RollupOf(recipe));
  ASSERT_TRUE(stats.busy_gpu_hours_per_step.has_value());
  EXPECT_NEAR(*stats.busy_gpu_hours_per_step, 16000.0 / 3600 / 2700, 1e-12);
  ASSERT_TRUE(stats.startup_gpu_hours_per_run.has_value());
  EXPECT_NEAR(*stats.startup_gpu_hours_per_run, 1200.0 / 3600, 1e-12);
}

// Per attempt (migration 0022): retries are failed attempts, causes as the
// run named them or its outcome, and wall time its steps do not explain is
// not counted. 0017's per-run columns stay as they were for older binaries.
TEST_F(FailureEvidenceTest, PerAttemptFiguresEqualCoreSumsOfTheStoredRuns) {
  const core::Recipe recipe = testing::Llama8bLora(2048);
  std::vector<RunToStore> runs;
  for (const RunShape& shape : BriefRuns()) {
    runs.push_back(MakeRun(recipe, static_cast<int>(runs.size()), shape));
    ASSERT_TRUE(InsertRun(session_, runs.back()).ok());
  }
  ExpectCoreFigures(runs, RollupOf(recipe), PoolRows());
  // One GPU: 1 preempted attempt of run 1, 1 of the week-long run 5 (its
  // 120 s of steps and 1800 s counted). Several (runs 0, 3, 4 and 6: 1 + 1
  // + 3 + 3 attempts): run 4's preemption and hardware error, run 3's one
  // and run 6's three collective timeouts.
  EXPECT_EQ(
      db_.QueryValue("SELECT string_agg(concat_ws('|', multi_gpu, attempts, "
                     "preempted_attempts, hardware_error_attempts, "
                     "collective_timeout_attempts), ',' ORDER BY multi_gpu) "
                     "FROM pool_reliability_rollups"),
      "f|3|2|0|0,t|8|1|1|4");
  EXPECT_EQ(db_.QueryValue("SELECT counted_run_microseconds FROM "
                           "pool_reliability_rollups WHERE NOT multi_gpu"),
            absl::StrCat((7200 + 600 + 120 + 1800) * kSecond));
  // 0017's per-run counting is kept for the binaries that read it: the
  // week counted whole, one failure a run.
  EXPECT_EQ(db_.QueryValue("SELECT concat_ws('|', runs, run_microseconds, "
                           "preempted_runs) FROM pool_reliability_rollups "
                           "WHERE NOT multi_gpu"),
            absl::StrCat("3|", (7200 + 600 + 7 * 24 * 3600) * kSecond, "|2"));
}

// Migration 0028: each rollup row keeps its run with the most failed
// attempts and the next run's count, as core does, whether the trigger
// added the runs or the backfill recomputed them after a down and up; and
// the planner counts that run's failures at most twice the next run's.
TEST_F(FailureEvidenceTest, TheMostFailedRunIsKeptByTriggerAndBackfill) {
  constexpr int kMostFailedVersion = 28;
  const core::Recipe recipe = testing::Llama8bLora(2048);
  std::vector<RunToStore> runs;
  std::vector<RunShape> shapes = BriefRuns();
  // Succeeded after nine preemptions, 2 GPUs: the one that stands out.
  shapes.push_back(
      {2, 10 * 600, 5000, 500, 1.0, core::RunOutcome::kSucceeded, 9,
       std::vector<core::RunOutcome>(9, core::RunOutcome::kPreempted)});
  for (const RunShape& shape : shapes) {
    runs.push_back(MakeRun(recipe, static_cast<int>(runs.size()), shape));
    ASSERT_TRUE(InsertRun(session_, runs.back()).ok());
  }
  ExpectCoreFigures(runs, RollupOf(recipe), PoolRows());
  const core::EvidenceRollup stored = RollupOf(recipe);
  EXPECT_EQ(stored.most_failed_run.failed_attempts, 9);
  EXPECT_EQ(stored.most_failed_run.second_failed_attempts, 3);
  // 0 + 1 + 1 + 1 + 2 + 1 + 3 + 9 failed attempts; the nine count as six
  // (twice the next run's three).
  EXPECT_EQ(core::Summarize(stored).failed_attempts, 18 - 3);

  Migrator migrator(session_, EmbeddedMigrations());
  ASSERT_TRUE(migrator.Down(MigrationsAbove(kMostFailedVersion - 1)).ok());
  ASSERT_TRUE(migrator.Up().ok());
  EXPECT_EQ(db_.QueryValue("SELECT count(*) FROM schema_backfills WHERE name "
                           "LIKE '0028%' AND done_at IS NOT NULL"),
            "2");
  ExpectCoreFigures(runs, RollupOf(recipe), PoolRows());
}

// A binary built for schema 14 to 16 stores a run with its own two
// statements (the run, then its rollup upsert) and knows nothing of the
// new figures: the database adds them, also for a key whose rollup row the
// upsert creates after the run's insert.
TEST_F(FailureEvidenceTest, AnOlderBinarysRunIsCountedByTheDatabase) {
  const core::Recipe recipe = testing::Llama8bLora(4096);
  const std::string key = core::RecipeKey(recipe);
  pqxx::connection c(db_.url());
  pqxx::work txn(c);
  txn.exec_params(R"sql(
    INSERT INTO benchmark_runs (
      run_id, fingerprint, agent_id, pool_name, sku_id, team, recipe_key,
      model, method, gpu_count, started_at, ended_at, gpu_microseconds,
      steps_attempted, steps_succeeded, step_time_mean_s, step_time_p50_s,
      step_time_p95_s, tokens_per_second, peak_memory_gb, offload,
      interconnect, collectives_opened, retries, outcome, exclusive, upload,
      evidence_version)
    VALUES ('00000000-0000-4000-8000-000000000077', sha256('x'), 'old-agent',
            $1, $2, '', $3, 'Llama-3.1-8B', 'LORA', 8,
            to_timestamp(1790000000), to_timestamp(1790003600),
            8 * 3600 * 1000000::bigint, 900, 600, 2.0, 2.0, 2.4, 1000, 40,
            'NONE', 'NVLINK', true, 0, 'HARDWARE_ERROR', true, 'x',
            pg_current_xact_id()::text::bigint))sql",
                  kPool, kSku, key);
  txn.exec_params(R"sql(
    INSERT INTO evidence_rollups AS r (
      recipe_key, sku_id, recipe, model, method, runs, successful_runs,
      offload_runs, retries, collective_runs, nvlink_runs, pcie_runs,
      host_memory_runs, steps_attempted, steps_succeeded, gpu_microseconds,
      max_peak_memory_gb, step_time_p50_hist, step_time_p95_hist,
      peak_memory_hist)
    VALUES ($1, $2, 'r', 'Llama-3.1-8B', 'LORA', 1, 0, 0, 0, 1, 1, 0, 0, 900,
            600, 8 * 3600 * 1000000::bigint, 40, '{}', '{}', '{}')
    ON CONFLICT (recipe_key, sku_id) DO UPDATE SET runs = r.runs + 1)sql",
                  key, kSku);
  txn.commit();

  // 8 GPUs x 900 steps x 2 s busy; no succeeded run.
  EXPECT_EQ(BusyColumns(recipe), absl::StrCat(8 * 900 * 2 * kSecond, "|0|0"));
  // One hour held, 600 x 2 s kept: 2400 s lost to the hardware error.
  EXPECT_EQ(PoolColumns(), absl::StrCat(kPool, "|t|1|", 3600 * kSecond,
                                        "|0|1|0|", 2400 * kSecond));
}

// Four uploaders storing runs of one key and one pool at once, each run
// twice: every run is counted once.
TEST_F(FailureEvidenceTest, ConcurrentUploadsOfOneKeyLoseNothing) {
  const core::Recipe recipe = testing::Llama8bLora(2048);
  std::vector<RunToStore> runs;
  for (int i = 0; i < 24; ++i) {
    RunShape shape = BriefRuns()[i % BriefRuns().size()];
    shape.wall_s += i;
    runs.push_back(MakeRun(recipe, i, shape));
  }
  std::vector<std::thread> uploaders;
  for (int t = 0; t < 4; ++t) {
    uploaders.emplace_back([&, t] {
      DbSession session(db_.url());
      for (int pass = 0; pass < 2; ++pass) {
        for (size_t k = 0; k < runs.size(); ++k) {
          const RunToStore& run = runs[(k * (2 * t + 1) + t) % runs.size()];
          absl::StatusOr<RunAck> ack = InsertRun(session, run);
          if (!ack.ok()) {
            ASSERT_TRUE(absl::IsAborted(ack.status())) << ack.status();
            ASSERT_TRUE(InsertRun(session, run).ok());
          }
        }
      }
    });
  }
  for (std::thread& uploader : uploaders) uploader.join();
  ASSERT_EQ(db_.QueryValue("SELECT count(*) FROM benchmark_runs"), "24");
  ExpectCoreFigures(runs, RollupOf(recipe), PoolRows());
  // The rows equal an aggregate over the stored runs.
  EXPECT_EQ(db_.QueryValue(R"sql(
    SELECT e.busy_gpu_microseconds = sum(placement_run_busy_gpu_us(r))
       AND e.succeeded_gpu_microseconds = sum(r.gpu_microseconds)
             FILTER (WHERE r.outcome = 'SUCCEEDED')
    FROM evidence_rollups e JOIN benchmark_runs r USING (recipe_key, sku_id)
    GROUP BY e.recipe_key, e.sku_id, e.busy_gpu_microseconds,
             e.succeeded_gpu_microseconds)sql"),
            "t");
}

// Down to 16 and up again: the backfill from the stored runs gives what
// the triggers had counted, and the triggers count from there on.
TEST_F(FailureEvidenceTest, MigrationDownAndUpBackfillsTheSameFigures) {
  const core::Recipe recipe = testing::Llama8bLora(2048);
  std::vector<RunToStore> runs;
  for (const RunShape& shape : BriefRuns()) {
    runs.push_back(MakeRun(recipe, static_cast<int>(runs.size()), shape));
    ASSERT_TRUE(InsertRun(session_, runs.back()).ok());
  }
  const std::string busy = BusyColumns(recipe);
  const std::string pools = PoolColumns();
  const std::string attempts = AttemptColumns();

  Migrator migrator(session_, EmbeddedMigrations());
  const int latest = migrator.LatestVersion();
  ASSERT_TRUE(migrator.Down(MigrationsAbove(kFailureEvidenceVersion - 1)).ok());
  ASSERT_EQ(*migrator.CurrentVersion(), kFailureEvidenceVersion - 1);
  EXPECT_EQ(
      db_.QueryValue("SELECT to_regclass('pool_reliability_rollups') IS NULL"),
      "t");
  EXPECT_EQ(db_.QueryValue("SELECT count(*) FROM information_schema.columns "
                           "WHERE table_name = 'evidence_rollups' AND "
                           "column_name LIKE '%busy%'"),
            "0");
  // Stored at 16 (this binary's statements are those of 14 to 16: the new
  // figures are not its to write), then backfilled.
  runs.push_back(
      MakeRun(recipe, static_cast<int>(runs.size()),
              {1, 900, 300, 300, 2.0, core::RunOutcome::kSucceeded}));
  ASSERT_TRUE(InsertRun(session_, runs.back()).ok());
  ASSERT_TRUE(migrator.Up().ok());
  ASSERT_EQ(*migrator.CurrentVersion(), latest);
  EXPECT_EQ(db_.QueryValue("SELECT oldest_binary_version FROM "
                           "schema_compatibility"),
            "14");
  ExpectCoreFigures(runs, RollupOf(recipe), PoolRows());
  EXPECT_NE(BusyColumns(recipe), busy);
  EXPECT_NE(PoolColumns(), pools);
  EXPECT_NE(AttemptColumns(), attempts);

  runs.push_back(
      MakeRun(recipe, static_cast<int>(runs.size()),
              {2, 1200, 100, 50, 1.0, core::RunOutcome::kHardwareError}));
  ASSERT_TRUE(InsertRun(session_, runs.back()).ok());
  ExpectCoreFigures(runs, RollupOf(recipe), PoolRows());
}

// Runs stored before 0022 are counted by the batched backfill `migrate up`
// runs after it; a backfill that stopped after its first batch continues
// where the marks say, counting each run once; runs stored meanwhile are
// the triggers'.
TEST_F(FailureEvidenceTest, AnInterruptedBackfillCountsEveryRunOnce) {
  constexpr int kAttemptEvidenceVersion = 22;
  const core::Recipe recipe = testing::Llama8bLora(2048);
  Migrator migrator(session_, EmbeddedMigrations());
  ASSERT_TRUE(migrator.Down(MigrationsAbove(kAttemptEvidenceVersion - 1)).ok());
  std::vector<RunToStore> runs;
  for (int i = 0; i < 30; ++i) {
    runs.push_back(MakeRun(recipe, i, BriefRuns()[i % BriefRuns().size()]));
    runs.back().run.retry_outcomes.clear();  // schema 21 keeps none
    ASSERT_TRUE(InsertRun(session_, runs.back()).ok());
  }
  // 0022 applied by hand, and one batch of 7 of its backfill.
  const Migration* m = nullptr;
  for (const Migration& each : EmbeddedMigrations()) {
    if (each.version == kAttemptEvidenceVersion) m = &each;
  }
  ASSERT_NE(m, nullptr);
  db_.Execute(kCreateSchemaBackfills);
  db_.Execute(m->up_sql);
  db_.Execute(
      absl::StrCat("INSERT INTO schema_migrations (version, name) VALUES (",
                   kAttemptEvidenceVersion, ", '", m->name, "')"));
  EXPECT_NE(db_.QueryValue("SELECT placement_backfill_run_attempts(NULL, 7)"),
            "");
  EXPECT_EQ(db_.QueryValue(
                "SELECT count(*) FROM benchmark_runs WHERE attempts_counted"),
            "7");
  // A run stored now is the triggers'.
  runs.push_back(MakeRun(recipe, 30, BriefRuns()[4]));
  ASSERT_TRUE(InsertRun(session_, runs.back()).ok());
  ASSERT_TRUE(migrator.Up().ok());
  EXPECT_EQ(
      db_.QueryValue(
          "SELECT count(*) FROM benchmark_runs WHERE NOT attempts_counted"),
      "0");
  ExpectCoreFigures(runs, RollupOf(recipe), PoolRows());
}

// The cost report counts a failed run's kept steps as successful and
// wastes only its GPU time on the others (the planner's counting).
TEST_F(FailureEvidenceTest, CostRollupsCountAFailedRunsKeptSteps) {
  const core::Recipe recipe = testing::Llama8bLora(2048);
  int i = 0;
  for (const RunShape& shape : PerRunBriefRuns()) {
    ASSERT_TRUE(InsertRun(session_, MakeRun(recipe, i++, shape)).ok());
  }
  // outcome|successful_runs|successful_steps|wasted GPU-s, per outcome.
  EXPECT_EQ(
      db_.QueryValue(
          "SELECT string_agg(concat_ws('|', outcome, sum_ok, steps, wasted), "
          "',' ORDER BY outcome) FROM (SELECT outcome, sum(successful_runs) "
          "sum_ok, sum(successful_steps) steps, "
          "div(sum(wasted_gpu_microseconds), 1000000) wasted "
          "FROM cost_daily_rollups GROUP BY outcome) o"),
      // Timed out: 100 of 200 kept, half of 7200 GPU-s wasted. Out of
      // memory: nothing attempted, all wasted. Preempted: 1000 of 1500
      // kept, a third of 7200 wasted. Succeeded: every step, none wasted.
      "COLLECTIVE_TIMEOUT|0|100|3600,OUT_OF_MEMORY|0|0|600,"
      "PREEMPTED|0|1000|2400,SUCCEEDED|1|1000|0");
  // The pool and SKU rollups the report reads carry the same sums.
  EXPECT_EQ(db_.QueryValue("SELECT concat_ws('|', sum(successful_steps), "
                           "div(sum(wasted_gpu_microseconds), 1000000)) FROM "
                           "cost_daily_sku_rollups"),
            "2100|6600");
}

}  // namespace
}  // namespace placement::storage
