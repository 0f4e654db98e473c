// Migration 0027's recount of the cost rollups, on the real PostgreSQL: runs
// stored before migration 0017 (a failed run counted with no successful
// steps and all of its GPU time wasted) are recounted by `migrate up`, so a
// report over a range that spans 0017 reads one definition; an interrupted
// backfill continues without counting a run twice or missing one; and runs
// uploaded while it runs, in between its batches or at the same time, are
// counted once.
#include <atomic>
#include <chrono>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/civil_time.h"
#include "core/recipe.h"
#include "gtest/gtest.h"
#include "storage/schema/migrations.h"
#include "storage/stores/cost_store.h"
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
// Before 0017, the cost rollups counted the way of 0004.
constexpr int kBefore0017 = 16;
constexpr int kRecountVersion = 27;
// 2026-09-01 00:00 UTC: the first day of the runs.
constexpr int64_t kFirstDay = 1'788'220'800;
constexpr int kDays = 3;

core::Pool H100Pool() {
  return testing::TrainingPool(kPool, kSku, core::Fabric::kNvlink,
                               3'600'000);  // $3.60 / GPU-hour
}

struct RunShape {
  int day;  // 0 .. kDays - 1
  int gpus;
  int wall_s;
  int64_t attempted;
  int64_t succeeded;
  core::RunOutcome outcome;
};

// Run `id` (its run_id sorts by it: the backfill walks runs in this order),
// ending at noon UTC on its day.
RunToStore MakeRun(int id, const RunShape& shape) {
  RunToStore in = testing::SucceededRun(
      testing::Llama8bLora(), H100Pool(), id,
      absl::FromUnixSeconds(kFirstDay + 86'400 * shape.day + 43'200 + id));
  core::MeasuredRun& run = in.run;
  testing::OnNvlinkGpus(shape.gpus, &run);
  run.started = run.ended - absl::Seconds(shape.wall_s);
  run.steps_attempted = shape.attempted;
  run.steps_succeeded = shape.succeeded;
  run.peak_memory_gb = 40;
  run.outcome = shape.outcome;
  return in;
}

// Backfill batches of `size` rows, stopping after `max` batches if given.
BackfillOptions Batches(int size, std::optional<int64_t> max = std::nullopt) {
  BackfillOptions options;
  options.batch_size = size;
  options.max_batches = max;
  return options;
}

// What the cost report must say of a set of runs, by docs/FINANCE.md
// (migration 0017's counting), computed here independently of the SQL.
struct Figures {
  int64_t runs = 0;
  int64_t successful_steps = 0;
  int64_t gpu_microseconds = 0;
  int64_t wasted_gpu_microseconds = 0;

  void Add(const core::MeasuredRun& run) {
    const int64_t gpu_us = GpuMicroseconds(run);
    ++runs;
    successful_steps += run.steps_succeeded;
    gpu_microseconds += gpu_us;
    if (run.steps_attempted == 0) {
      wasted_gpu_microseconds +=
          run.outcome == core::RunOutcome::kSucceeded ? 0 : gpu_us;
    } else {
      // gpu_us x unsucceeded / attempted, rounded half up.
      const int64_t numerator =
          gpu_us * (run.steps_attempted - run.steps_succeeded);
      wasted_gpu_microseconds +=
          (2 * numerator + run.steps_attempted) / (2 * run.steps_attempted);
    }
  }
  std::string Text() const {
    return absl::StrCat("runs=", runs, " successful_steps=", successful_steps,
                        " gpu_us=", gpu_microseconds,
                        " wasted_gpu_us=", wasted_gpu_microseconds);
  }
};

class CostRecountTest : public ::testing::Test {
 protected:
  CostRecountTest() : session_(db_.url()) {}

  // The schema before 0017, with the pool.
  void SetUpBefore0017() {
    Migrator migrator(session_, EmbeddedMigrations());
    ASSERT_TRUE(migrator.Up(kBefore0017).ok());
    ASSERT_TRUE(CreatePool(session_, H100Pool(), kPool).ok());
  }

  // Up to the schema before the recount: 0017 and what follows it.
  void MigrateToBeforeRecount() {
    Migrator migrator(session_, EmbeddedMigrations());
    ASSERT_TRUE(migrator.Up(kRecountVersion - 1).ok());
  }

  void Store(int id, const RunShape& shape) {
    const RunToStore run = MakeRun(id, shape);
    absl::StatusOr<RunAck> ack = InsertRun(session_, run);
    ASSERT_TRUE(ack.ok()) << ack.status();
    expected_.Add(run.run);
    expected_by_day_[shape.day].Add(run.run);
  }

  // One report row's figures, from the report by day over the three days
  // (`day` -1: the totals of the report over the whole range, ungrouped).
  std::string Reported(int day) {
    CostQuery query;
    const absl::CivilDay first =
        absl::ToCivilDay(absl::FromUnixSeconds(kFirstDay), absl::UTCTimeZone());
    query.start = day < 0 ? first : first + day;
    query.end = day < 0 ? first + kDays : first + day + 1;
    absl::StatusOr<CostPage> page =
        GetCostReport(session_, query, std::nullopt, 10);
    EXPECT_TRUE(page.ok()) << page.status();
    if (!page.ok() || page->rows.size() != 1) return "no single row";
    const CostRow& row = page->rows[0];
    return absl::StrCat("runs=", row.runs,
                        " successful_steps=", row.successful_steps,
                        " gpu_us=", row.gpu_microseconds,
                        " wasted_gpu_us=", row.wasted_gpu_microseconds);
  }

  // The report over the range, and each of its days, against the runs.
  void ExpectReportCountsEveryRunTheCurrentWay() {
    EXPECT_EQ(Reported(-1), expected_.Text());
    for (const auto& [day, figures] : expected_by_day_) {
      EXPECT_EQ(Reported(day), figures.Text()) << "day " << day;
    }
    // Every detailed row is its runs as cost_run_facts counts them now,
    // and the pool and SKU rows are the sums of the detailed rows.
    EXPECT_EQ(db_.QueryValue(R"sql(
      SELECT count(*)
      FROM cost_daily_rollups d FULL JOIN (
        SELECT day, pool_name, sku_id, recipe_key, model, method, team,
               outcome, count(*) AS runs, sum(successful_steps) AS steps,
               sum(wasted_gpu_microseconds) AS wasted
        FROM cost_run_facts
        GROUP BY day, pool_name, sku_id, recipe_key, model, method, team,
                 outcome) f
      USING (day, pool_name, sku_id, recipe_key, model, method, team, outcome)
      WHERE (d.runs, d.successful_steps, d.wasted_gpu_microseconds)
            IS DISTINCT FROM (f.runs, f.steps, f.wasted))sql"),
              "0");
    EXPECT_EQ(db_.QueryValue(R"sql(
      SELECT count(*)
      FROM (SELECT day, pool_name, sum(runs) r, sum(successful_steps) s,
                   sum(wasted_gpu_microseconds) w,
                   sum(internal_rate_x_gpu_us) m
            FROM cost_daily_rollups GROUP BY day, pool_name) d
      FULL JOIN cost_daily_pool_rollups p USING (day, pool_name)
      FULL JOIN cost_daily_sku_rollups k USING (day)
      WHERE (d.r, d.s, d.w, d.m) IS DISTINCT FROM
            (p.runs, p.successful_steps, p.wasted_gpu_microseconds,
             p.internal_rate_x_gpu_us)
         OR (d.r, d.s, d.w, d.m) IS DISTINCT FROM
            (k.runs, k.successful_steps, k.wasted_gpu_microseconds,
             k.internal_rate_x_gpu_us))sql"),
              "0");
  }

  bool BackfillsDone() {
    Migrator migrator(session_, EmbeddedMigrations());
    absl::StatusOr<std::vector<BackfillState>> backfills = migrator.Backfills();
    EXPECT_TRUE(backfills.ok()) << backfills.status();
    EXPECT_FALSE(backfills->empty());
    for (const BackfillState& backfill : *backfills) {
      if (!backfill.done_at.has_value()) return false;
    }
    return true;
  }

  TestDatabase db_;
  DbSession session_;
  Figures expected_;
  std::map<int, Figures> expected_by_day_;
};

constexpr core::RunOutcome kSucceeded = core::RunOutcome::kSucceeded;
constexpr core::RunOutcome kPreempted = core::RunOutcome::kPreempted;
constexpr core::RunOutcome kTimeout = core::RunOutcome::kCollectiveTimeout;
constexpr core::RunOutcome kOom = core::RunOutcome::kOom;
constexpr core::RunOutcome kHardware = core::RunOutcome::kHardwareError;

TEST_F(CostRecountTest, MigrateUpRecountsRunsStoredBefore0017) {
  SetUpBefore0017();
  // Counted the old way: day 0 has a succeeded run, a preempted one that
  // kept 1000 of 1500 steps (2 GPU-h) and a timed-out one that kept 100 of
  // 200 (4 GPUs x 30 min); day 1 a preempted one that kept 300 of 600 and
  // one out of memory before its first step.
  Store(0, {0, 2, 3600, 1000, 1000, kSucceeded});
  Store(2, {0, 1, 7200, 1500, 1000, kPreempted});
  Store(4, {0, 4, 1800, 200, 100, kTimeout});
  Store(6, {1, 1, 3600, 600, 300, kPreempted});
  Store(8, {1, 1, 600, 0, 0, kOom});
  MigrateToBeforeRecount();
  // Counted the new way: on day 1, in the same rollup row as run 6 (one
  // row, two countings); on day 2, a row of its own.
  Store(10, {1, 1, 3600, 900, 600, kPreempted});
  Store(12, {2, 2, 1800, 100, 50, kHardware});

  // Before the recount, the range mixes the two: the old runs' 1400 kept
  // steps are missing and their lost steps' GPU time is all waste.
  const std::string mixed = Reported(-1);
  EXPECT_NE(mixed, expected_.Text());
  EXPECT_EQ(mixed,
            "runs=7 successful_steps=1650 gpu_us=33000000000 "
            "wasted_gpu_us=21600000000");
  EXPECT_EQ(expected_.Text(),
            "runs=7 successful_steps=3050 gpu_us=33000000000 "
            "wasted_gpu_us=11400000000");

  Migrator migrator(session_, EmbeddedMigrations(), Batches(2));
  absl::StatusOr<int> applied = migrator.Up();
  ASSERT_TRUE(applied.ok()) << applied.status();
  EXPECT_TRUE(BackfillsDone());
  ExpectReportCountsEveryRunTheCurrentWay();
  // The money is what it was: only counts of steps and waste moved.
  EXPECT_EQ(db_.QueryValue("SELECT round(sum(internal_rate_x_gpu_us) / "
                           "3.6e15, 6) FROM cost_daily_sku_rollups"),
            "33.000000");
  EXPECT_EQ(db_.QueryValue("SELECT count(*) FROM cost_recount_rows"), "0");

  // Down and up again: registered afresh, recounted from the start, and
  // nothing counted twice.
  ASSERT_TRUE(migrator.Down(MigrationsAbove(kRecountVersion - 1)).ok());
  ASSERT_TRUE(migrator.Up().ok());
  EXPECT_TRUE(BackfillsDone());
  ExpectReportCountsEveryRunTheCurrentWay();
}

// The backfill stopped after every batch (a crash between two batches
// leaves what the last committed one recorded) and an upload stored at
// each stop, into rows it has passed and rows it has yet to reach: each
// run is counted once, and a rerun after the end changes nothing.
TEST_F(CostRecountTest, InterruptedRecountContinuesAndCountsUploadsOnce) {
  SetUpBefore0017();
  const RunShape old_shapes[] = {
      {0, 1, 7200, 1500, 1000, kPreempted}, {0, 4, 1800, 200, 100, kTimeout},
      {0, 2, 3600, 1000, 1000, kSucceeded}, {1, 1, 3600, 600, 300, kPreempted},
      {1, 2, 3600, 800, 200, kTimeout},     {1, 1, 600, 0, 0, kOom},
      {2, 1, 3600, 900, 600, kPreempted},   {2, 8, 900, 300, 100, kHardware}};
  int id = 0;
  for (const RunShape& shape : old_shapes) {
    Store(id, shape);
    id += 10;
  }
  MigrateToBeforeRecount();

  Migrator step_by_step(session_, EmbeddedMigrations(), Batches(2, 1));
  int stops = 0;
  for (; stops < 50; ++stops) {
    ASSERT_TRUE(step_by_step.Up().ok());
    if (BackfillsDone()) break;
    // Alternately behind and ahead of the walk over run ids, on the rows
    // of the old runs (a preempted run of day 0, 1 or 2, keeping steps).
    const int upload_id = stops % 2 == 0 ? 1 + stops : 75 + stops;
    Store(upload_id, {stops % kDays, 1, 1800, 500, 250, kPreempted});
  }
  // The stage walked 8 runs and the uploads, 2 a batch; the apply its rows.
  EXPECT_GE(stops, 6);
  ASSERT_TRUE(BackfillsDone());
  ExpectReportCountsEveryRunTheCurrentWay();

  Migrator migrator(session_, EmbeddedMigrations());
  ASSERT_TRUE(migrator.Up().ok());
  ExpectReportCountsEveryRunTheCurrentWay();
}

// Uploads at the same time as the recount, from two connections, onto the
// rows it recounts: no lock cycle with it (an upload takes its detailed,
// pool and SKU rows in that order), and each run counted once.
TEST_F(CostRecountTest, UploadsDuringTheRecountAreCountedOnce) {
  SetUpBefore0017();
  int id = 0;
  for (int i = 0; i < 24; ++i) {
    Store(id++, {i % kDays, 1 + i % 2, 3600, 600, 100 + 10 * i,
                 i % 3 == 0 ? kTimeout : kPreempted});
  }
  MigrateToBeforeRecount();

  constexpr int kUploaders = 2;
  constexpr int kUploads = 15;
  std::vector<RunToStore> uploads;
  for (int i = 0; i < kUploaders * kUploads; ++i) {
    uploads.push_back(
        MakeRun(1000 + i, {i % kDays, 1, 1800, 400, 100 + i, kPreempted}));
    expected_.Add(uploads.back().run);
    expected_by_day_[i % kDays].Add(uploads.back().run);
  }
  std::vector<std::thread> uploaders;
  std::atomic<int> failures{0};
  for (int u = 0; u < kUploaders; ++u) {
    uploaders.emplace_back([&, u] {
      // From the moment the recount is registered (its first batch next).
      for (int wait = 0;
           wait < 10'000 &&
           db_.QueryValue("SELECT to_regclass('cost_recount_rows')"
                          " IS NOT NULL") != "t";
           ++wait) {
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
      }
      DbSession session(db_.url());
      for (int i = u; i < kUploaders * kUploads; i += kUploaders) {
        if (!InsertRun(session, uploads[i]).ok()) ++failures;
      }
    });
  }
  Migrator migrator(session_, EmbeddedMigrations(), Batches(1));
  absl::StatusOr<int> applied = migrator.Up();
  for (std::thread& uploader : uploaders) uploader.join();
  ASSERT_TRUE(applied.ok()) << applied.status();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_TRUE(BackfillsDone());
  ExpectReportCountsEveryRunTheCurrentWay();
}

}  // namespace
}  // namespace placement::storage
