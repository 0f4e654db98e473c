// Evidence rollups keep the exact peak memory of succeeded runs (max, and
// sum / count for the mean; of the allocator's allocated and reserved peaks
// when runs report them), maintained in the upload's transaction under
// concurrent and repeated uploads, and backfilled by migration 0012 from the
// stored runs.
#include "storage/stores/run_store.h"

#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "core/evidence/evidence.h"
#include "core/recipe.h"
#include "gtest/gtest.h"
#include "storage/schema/migrations.h"
#include "storage/stores/pool_store.h"
#include "tests/storage/stored_records.h"
#include "tests/support/test_database.h"

namespace placement::storage {
namespace {

using ::placement::testing::MigrationsAbove;
using ::placement::testing::TestDatabase;

constexpr char kSku[] = "L40S-PCIE-48GB";
constexpr char kPool[] = "l40s-train";
// The version that adds the exact figures.
constexpr int kExactPeaksVersion = 12;

core::Pool L40sPool() {
  return testing::TrainingPool(kPool, kSku, core::Fabric::kPcie, 1'000'000);
}

// Run `i` of `recipe`: peak `peak_gb`, and the allocator's peaks when > 0.
RunToStore RunWithPeak(const core::Recipe& recipe, int i, double peak_gb,
                       core::RunOutcome outcome, double allocated_gb = 0,
                       double reserved_gb = 0) {
  RunToStore in = testing::SucceededRun(
      recipe, L40sPool(), i, absl::FromUnixSeconds(1'790'000'000 + i));
  core::MeasuredRun& run = in.run;
  run.steps_succeeded = outcome == core::RunOutcome::kSucceeded ? 100 : 3;
  run.peak_memory_gb = peak_gb;
  run.peak_memory_allocated_gb = allocated_gb;
  run.peak_memory_reserved_gb = reserved_gb;
  run.outcome = outcome;
  return in;
}

class RunStoreTest : public ::testing::Test {
 protected:
  RunStoreTest() : session_(db_.url()) {
    db_.Migrate();
    EXPECT_TRUE(CreatePool(session_, L40sPool(), kPool).ok());
  }

  // Every run uploaded by four uploaders at once, each sending all of them
  // in its own order, twice (a retry after a lost acknowledgement).
  void UploadConcurrently(const std::vector<RunToStore>& runs) {
    std::vector<std::thread> uploaders;
    for (int t = 0; t < 4; ++t) {
      uploaders.emplace_back([&, t] {
        DbSession session(db_.url());
        for (int pass = 0; pass < 2; ++pass) {
          for (size_t k = 0; k < runs.size(); ++k) {
            const RunToStore& run = runs[(k * (2 * t + 1) + t) % runs.size()];
            absl::StatusOr<RunAck> ack = InsertRun(session, run);
            if (!ack.ok()) {
              // Two first uploads of one run at once: one is told to retry.
              ASSERT_TRUE(absl::IsAborted(ack.status())) << ack.status();
              ASSERT_TRUE(InsertRun(session, run).ok());
            }
          }
        }
      });
    }
    for (std::thread& uploader : uploaders) uploader.join();
  }

  core::EvidenceRollup RollupOf(const core::Recipe& recipe) {
    absl::StatusOr<std::vector<StoredRollup>> rollups = ListRollups(session_);
    EXPECT_TRUE(rollups.ok()) << rollups.status();
    for (const StoredRollup& stored : *rollups) {
      if (stored.rollup.recipe_key == core::RecipeKey(recipe) &&
          stored.rollup.sku_id == kSku) {
        return stored.rollup;
      }
    }
    ADD_FAILURE() << "no rollup of " << core::RecipeKey(recipe);
    return {};
  }

  TestDatabase db_;
  DbSession session_;
};

// Long: the concurrent writers and the exact peaks they must leave are one
// scenario.
TEST_F(RunStoreTest, ExactPeaksOfSucceededRunsUnderConcurrentRepeatedUploads) {
  const core::Recipe recipe = testing::Llama8bLora(2048);
  const core::Recipe other = testing::Llama8bLora(4096);
  std::vector<RunToStore> runs;
  // 30 succeeded runs peaking at 38.00, 38.11, ... 41.19 GB and one at
  // 41.3 GB; every third reports both allocator peaks, every fifth only the
  // reserved one.
  double sum = 0, allocated_sum = 0, reserved_sum = 0;
  int allocated_runs = 0, reserved_runs = 0;
  for (int i = 0; i < 31; ++i) {
    const double peak = i == 30 ? 41.3 : 38.0 + 0.11 * i;
    const double allocated = i % 3 == 0 ? peak - 2.5 : 0;
    const double reserved = i % 3 == 0 || i % 5 == 0 ? peak : 0;
    runs.push_back(RunWithPeak(recipe, i, peak, core::RunOutcome::kSucceeded,
                               allocated, reserved));
    sum += peak;
    if (allocated > 0) allocated_sum += allocated, ++allocated_runs;
    if (reserved > 0) reserved_sum += reserved, ++reserved_runs;
  }
  // Runs that did not succeed: their peaks are where they stopped, counted
  // in the all-runs maximum and the histogram only.
  runs.push_back(
      RunWithPeak(recipe, 31, 44.6, core::RunOutcome::kOom, 44.0, 44.6));
  runs.push_back(RunWithPeak(recipe, 32, 12.0, core::RunOutcome::kFailed));
  // Another recipe key: its own rollup.
  runs.push_back(RunWithPeak(other, 33, 45.25, core::RunOutcome::kSucceeded));
  UploadConcurrently(runs);
  ASSERT_EQ(db_.QueryValue("SELECT count(*) FROM benchmark_runs"), "34");

  const core::EvidenceRollup rollup = RollupOf(recipe);
  EXPECT_EQ(rollup.runs, 33);
  EXPECT_EQ(rollup.successful_runs, 31);
  EXPECT_EQ(rollup.max_peak_memory_gb, 44.6);
  EXPECT_EQ(rollup.succeeded_peak.runs, 31);
  EXPECT_EQ(rollup.succeeded_peak.max_gb, 41.3);
  EXPECT_NEAR(rollup.succeeded_peak.MeanGb(), sum / 31, 1e-12);
  EXPECT_EQ(rollup.succeeded_allocated.runs, allocated_runs);
  EXPECT_EQ(rollup.succeeded_allocated.max_gb, 41.3 - 2.5);
  EXPECT_NEAR(rollup.succeeded_allocated.MeanGb(),
              allocated_sum / allocated_runs, 1e-12);
  EXPECT_EQ(rollup.succeeded_reserved.runs, reserved_runs);
  EXPECT_EQ(rollup.succeeded_reserved.max_gb, 41.3);
  EXPECT_NEAR(rollup.succeeded_reserved.MeanGb(), reserved_sum / reserved_runs,
              1e-12);

  // What the planner reads: 41.3 GB exactly, where the histogram's p95
  // would have been a bucket's middle.
  const core::EvidenceStats stats = core::Summarize(rollup);
  EXPECT_TRUE(stats.peak_memory_exact);
  EXPECT_EQ(stats.peak_memory_gb, 41.3);
  EXPECT_NE(rollup.peak_memory_hist.Quantile(core::kPeakMemoryHistogram, 0.95),
            41.3);

  const core::EvidenceRollup other_rollup = RollupOf(other);
  EXPECT_EQ(other_rollup.succeeded_peak.runs, 1);
  EXPECT_EQ(other_rollup.succeeded_peak.max_gb, 45.25);
  EXPECT_EQ(other_rollup.succeeded_allocated.runs, 0);

  // The rollup equals an aggregate over the stored runs.
  EXPECT_EQ(db_.QueryValue(R"sql(
    SELECT count(*) FROM evidence_rollups e JOIN (
      SELECT recipe_key, sku_id,
             count(*) FILTER (WHERE outcome = 'SUCCEEDED') AS n,
             max(peak_memory_gb) FILTER (WHERE outcome = 'SUCCEEDED') AS mx,
             count(peak_memory_allocated_gb)
               FILTER (WHERE outcome = 'SUCCEEDED') AS na,
             max(peak_memory_allocated_gb)
               FILTER (WHERE outcome = 'SUCCEEDED') AS mxa,
             count(peak_memory_reserved_gb)
               FILTER (WHERE outcome = 'SUCCEEDED') AS nr,
             coalesce(sum(peak_memory_reserved_gb)
               FILTER (WHERE outcome = 'SUCCEEDED'), 0) AS sr
      FROM benchmark_runs GROUP BY recipe_key, sku_id) raw
    USING (recipe_key, sku_id)
    WHERE e.succeeded_peak_runs = raw.n AND e.succeeded_peak_max_gb = raw.mx
      AND e.succeeded_allocated_runs = raw.na
      AND e.succeeded_allocated_max_gb = coalesce(raw.mxa, 0)
      AND e.succeeded_reserved_runs = raw.nr
      AND abs(e.succeeded_reserved_sum_gb - raw.sr) < 1e-9)sql"),
            "2");
}

TEST_F(RunStoreTest, MigrationBackfillsSucceededPeaksFromStoredRuns) {
  const core::Recipe recipe = testing::Llama8bLora(2048);
  std::vector<RunToStore> runs = {
      RunWithPeak(recipe, 1, 40.0, core::RunOutcome::kSucceeded, 38.0, 40.0),
      RunWithPeak(recipe, 2, 41.3, core::RunOutcome::kSucceeded, 39.1, 41.3),
      RunWithPeak(recipe, 3, 46.0, core::RunOutcome::kOom),
  };
  for (const RunToStore& run : runs) ASSERT_TRUE(InsertRun(session_, run).ok());
  const core::EvidenceRollup before = RollupOf(recipe);

  // Back to the schema before the exact figures, then forward again: the
  // rollup row is recomputed from benchmark_runs.
  Migrator migrator(session_, EmbeddedMigrations());
  const int latest = migrator.LatestVersion();
  ASSERT_TRUE(migrator.Down(MigrationsAbove(kExactPeaksVersion - 1)).ok());
  ASSERT_EQ(*migrator.CurrentVersion(), kExactPeaksVersion - 1);
  ASSERT_TRUE(migrator.Up().ok());
  ASSERT_EQ(*migrator.CurrentVersion(), latest);

  const core::EvidenceRollup after = RollupOf(recipe);
  EXPECT_EQ(after.succeeded_peak, before.succeeded_peak);
  EXPECT_EQ(after.succeeded_peak.runs, 2);
  EXPECT_EQ(after.succeeded_peak.max_gb, 41.3);
  EXPECT_DOUBLE_EQ(after.succeeded_peak.MeanGb(), (40.0 + 41.3) / 2);
  // The allocator's peaks lived only in the upload bytes before: not
  // backfilled, counted from the next run on.
  EXPECT_EQ(after.succeeded_allocated.runs, 0);
  EXPECT_EQ(after.succeeded_reserved.runs, 0);
  EXPECT_EQ(core::Summarize(after).peak_memory_gb, 41.3);

  ASSERT_TRUE(
      InsertRun(session_, RunWithPeak(recipe, 4, 40.5,
                                      core::RunOutcome::kSucceeded, 38.5, 40.7))
          .ok());
  const core::EvidenceRollup next = RollupOf(recipe);
  EXPECT_EQ(next.succeeded_peak.runs, 3);
  EXPECT_EQ(next.succeeded_allocated.runs, 1);
  EXPECT_EQ(next.succeeded_allocated.max_gb, 38.5);
  EXPECT_EQ(next.succeeded_reserved.max_gb, 40.7);
}

}  // namespace
}  // namespace placement::storage
