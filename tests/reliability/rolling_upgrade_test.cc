// A rolling upgrade with real processes: a replica of the previous release
// keeps serving uploads while `migrate up` runs under it (and while a long
// ACCESS EXCLUSIVE lock stands in for a table rebuild), refusing only with
// retryable codes; the cost rollups agree, and the start-up and failure
// evidence counts every run, whichever binary stored the run; and a new
// binary started before the migration refuses writes with UNAVAILABLE,
// never INTERNAL; and a `migrate down` after a failed upgrade refuses to
// drop decision records (eval results, eval criteria, standards).
//
// The previous release is this build with --newest_schema_version: its
// window is then that one version (this build's oldest is its newest), and
// its statements must work there. They do: its writes are those of the
// releases before it (what 0017 adds is maintained by the database), and
// its catalog reads leave out what an older schema lacks.
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <map>
#include <pqxx/pqxx>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "placement/v1/catalog.grpc.pb.h"
#include "placement/v1/telemetry.grpc.pb.h"
#include "services/server/version.h"
#include "storage/schema/migrations.h"
#include "storage/schema/schema_window.h"
#include "tests/support/fixtures.h"
#include "tests/support/placementd_process.h"
#include "tests/support/test_database.h"

namespace placement {
namespace {

using ::placement::testing::Deadline;
using ::placement::testing::PlacementdProcess;
using ::placement::testing::SucceededRun;
using ::placement::testing::TestDatabase;
using ::placement::testing::TrainingPool;

constexpr char kSku[] = "L40S-PCIE-48GB";

void MigrateTo(const TestDatabase& db, std::optional<int> version) {
  storage::DbSession session(db.url());
  storage::Migrator migrator(session, storage::EmbeddedMigrations());
  absl::StatusOr<int> applied = migrator.Up(version);
  ASSERT_TRUE(applied.ok()) << applied.status();
}

grpc::Status CreatePool(const std::shared_ptr<grpc::Channel>& channel) {
  auto catalog = v1::CatalogService::NewStub(channel);
  v1::CreatePoolRequest request;
  *request.mutable_pool() = TrainingPool("l40s", kSku, 4, 8);
  v1::CreatePoolResponse response;
  return catalog->CreatePool(Deadline().get(), request, &response);
}

// A succeeded run, or (`preempted`) one preempted after keeping 500 of its
// 1000 steps: 1 GPU-h, half of it wasted.
grpc::Status Upload(const std::shared_ptr<grpc::Channel>& channel,
                    bool preempted = false) {
  auto telemetry = v1::TelemetryService::NewStub(channel);
  v1::UploadBenchmarkRunRequest upload;
  *upload.mutable_run() = SucceededRun("l40s", kSku);
  if (preempted) {
    upload.mutable_run()->set_outcome(v1::RUN_OUTCOME_PREEMPTED);
    upload.mutable_run()->set_steps_succeeded(500);
  }
  v1::UploadBenchmarkRunResponse ack;
  return telemetry->UploadBenchmarkRun(Deadline(15).get(), upload, &ack);
}

bool Retryable(grpc::StatusCode code) {
  return code == grpc::StatusCode::UNAVAILABLE ||
         code == grpc::StatusCode::RESOURCE_EXHAUSTED ||
         code == grpc::StatusCode::ABORTED ||
         code == grpc::StatusCode::DEADLINE_EXCEEDED;
}

// Every figure of the SKU rollups, the pool rollups and the detailed
// rollups summed over everything: rows where they differ (0 when cost by
// SKU, by pool and by recipe agree).
std::string RollupDisagreements(const TestDatabase& db) {
  return db.QueryValue(R"sql(
    WITH d AS (SELECT day, sku_id, sum(runs) r, sum(gpu_microseconds) g,
                      sum(internal_rate_x_gpu_us) m
               FROM cost_daily_rollups GROUP BY day, sku_id),
         p AS (SELECT day, sku_id, sum(runs) r, sum(gpu_microseconds) g,
                      sum(internal_rate_x_gpu_us) m
               FROM cost_daily_pool_rollups GROUP BY day, sku_id),
         s AS (SELECT day, sku_id, runs r, gpu_microseconds g,
                      internal_rate_x_gpu_us m FROM cost_daily_sku_rollups)
    SELECT count(*) FROM d FULL JOIN p USING (day, sku_id)
                           FULL JOIN s USING (day, sku_id)
    WHERE d.r IS DISTINCT FROM p.r OR d.r IS DISTINCT FROM s.r
       OR d.g IS DISTINCT FROM p.g OR d.g IS DISTINCT FROM s.g
       OR d.m IS DISTINCT FROM p.m OR d.m IS DISTINCT FROM s.m)sql");
}

// Detailed cost rollup rows whose runs, steps kept and GPU time wasted are
// not those of their runs as cost_run_facts counts them now.
std::string RowsNotCountedByTheirRuns(const TestDatabase& db) {
  return db.QueryValue(R"sql(
    SELECT count(*)
    FROM cost_daily_rollups d FULL JOIN (
      SELECT day, pool_name, sku_id, recipe_key, model, method, team, outcome,
             count(*) AS runs, sum(successful_steps) AS steps,
             sum(wasted_gpu_microseconds) AS wasted
      FROM cost_run_facts
      GROUP BY day, pool_name, sku_id, recipe_key, model, method, team,
               outcome) f
    USING (day, pool_name, sku_id, recipe_key, model, method, team, outcome)
    WHERE (d.runs, d.successful_steps, d.wasted_gpu_microseconds)
          IS DISTINCT FROM (f.runs, f.steps, f.wasted))sql");
}

TEST(SchemaWindowTest, BinaryWindowEndsAtItsNewestMigration) {
  EXPECT_EQ(services::kNewestSchemaVersion, storage::RequiredSchemaVersion());
  EXPECT_LE(services::kOldestSchemaVersion, services::kNewestSchemaVersion);
  const storage::SchemaWindow window{14, 15};
  EXPECT_FALSE(storage::JudgeSchema(window, 13, std::nullopt).served);
  EXPECT_TRUE(storage::JudgeSchema(window, 14, std::nullopt).served);
  EXPECT_TRUE(storage::JudgeSchema(window, 16, 14).served);
  EXPECT_FALSE(storage::JudgeSchema(window, 16, 16).served);
  EXPECT_FALSE(storage::JudgeSchema(window, 16, std::nullopt).served);
}

// Long: one rolling upgrade in the order an operator runs it (the
// previous release under load, a long lock, the migration, the new
// release joining), each step asserting what clients saw then; the load
// and the health watch run through every step.
TEST(RollingUpgradeTest, PreviousReleaseKeepsServingWhileTheSchemaMigrates) {
  TestDatabase db;
  MigrateTo(db, services::kNewestSchemaVersion - 1);
  // The previous release: this build, serving as one whose newest
  // migration is the one before this build's.
  auto previous = PlacementdProcess::Start(
      db.url(), {absl::StrCat("--newest_schema_version=",
                              services::kNewestSchemaVersion - 1)});
  ASSERT_TRUE(previous.ok()) << previous.status();
  ASSERT_TRUE((*previous)->WaitForHealth(true, absl::Seconds(15)))
      << (*previous)->LogTail();
  ASSERT_TRUE(CreatePool((*previous)->channel()).ok());

  // Health, watched all along.
  std::atomic<bool> stop{false};
  std::atomic<int> not_serving{0};
  std::thread watcher([&] {
    while (!stop) {
      if (!(*previous)->WaitForHealth(true, absl::Milliseconds(300))) {
        ++not_serving;
      }
      absl::SleepFor(absl::Milliseconds(50));
    }
  });
  // Bounded load: each client stores kRuns runs, retrying retryable codes.
  constexpr int kClients = 4;
  constexpr int kRuns = 40;
  constexpr int kAttempts = 200;
  absl::Mutex mu;
  std::map<grpc::StatusCode, int> refusals;
  std::atomic<int> stored{0};
  std::vector<std::thread> clients;
  for (int c = 0; c < kClients; ++c) {
    clients.emplace_back([&] {
      for (int run = 0; run < kRuns; ++run) {
        for (int attempt = 0; attempt < kAttempts; ++attempt) {
          grpc::Status status = Upload((*previous)->channel(), run % 2 == 1);
          if (status.ok()) {
            ++stored;
            break;
          }
          absl::MutexLock lock(&mu);
          ++refusals[status.error_code()];
          if (!Retryable(status.error_code())) break;
          absl::SleepFor(absl::Milliseconds(20));
        }
      }
    });
  }
  while (stored.load() < kClients * 5) absl::SleepFor(absl::Milliseconds(10));

  // A long table rebuild's ACCESS EXCLUSIVE lock, held while uploads come
  // in: they must time out and be retried, not park every worker.
  {
    pqxx::connection blocker(db.url());
    pqxx::work txn(blocker);
    txn.exec(
        "LOCK TABLE benchmark_runs, step_samples IN ACCESS EXCLUSIVE MODE");
    absl::SleepFor(absl::Seconds(5));
    txn.commit();
  }
  // A preempted run as a release before 0017 counted it (no kept step, all
  // of its GPU time wasted), in the row the uploads keep adding to: the
  // migration's recount (0027) sets it right while they go on, when this
  // upgrade applies 0027 (tests/storage/schema/cost_recount_test.cc
  // recounts under concurrent uploads whatever the newest migration).
  constexpr int kCostRecountVersion = 27;
  if (services::kNewestSchemaVersion - 1 < kCostRecountVersion) {
    db.Execute(R"sql(
      UPDATE cost_daily_rollups
      SET successful_steps = successful_steps - 500,
          wasted_gpu_microseconds = wasted_gpu_microseconds + 1800000000
      WHERE outcome = 'PREEMPTED')sql");
  }
  MigrateTo(db, std::nullopt);  // the newest (this build's)
  EXPECT_EQ(db.QueryValue("SELECT max(version) FROM schema_migrations"),
            absl::StrCat(services::kNewestSchemaVersion));

  // The new release joins while the previous one still serves.
  auto next = PlacementdProcess::Start(db.url());
  ASSERT_TRUE(next.ok()) << next.status();
  ASSERT_TRUE((*next)->WaitForHealth(true, absl::Seconds(15)))
      << (*next)->LogTail();
  for (int i = 0; i < 10; ++i) {
    EXPECT_TRUE(Upload((*next)->channel()).ok());
  }
  for (std::thread& client : clients) client.join();
  stop = true;
  watcher.join();

  EXPECT_EQ(stored.load(), kClients * kRuns);
  EXPECT_EQ(not_serving.load(), 0) << (*previous)->LogTail();
  for (const auto& [code, count] : refusals) {
    EXPECT_TRUE(Retryable(code))
        << count << " calls refused with code " << code << "\n"
        << (*previous)->LogTail();
  }
  EXPECT_GT(refusals[grpc::StatusCode::UNAVAILABLE], 0)
      << "the lock held for 5 s should have timed uploads out";
  EXPECT_TRUE((*previous)->WaitForHealth(true, absl::Seconds(1)));
  EXPECT_EQ(db.QueryValue("SELECT count(*) FROM benchmark_runs"),
            absl::StrCat(kClients * kRuns + 10));
  EXPECT_EQ(db.QueryValue("SELECT sum(runs) FROM cost_daily_sku_rollups"),
            absl::StrCat(kClients * kRuns + 10));
  EXPECT_EQ(RollupDisagreements(db), "0");
  EXPECT_EQ(RowsNotCountedByTheirRuns(db), "0");
  // Runs stored before the migration were backfilled, those after it were
  // added by its triggers: each counted once.
  EXPECT_EQ(db.QueryValue("SELECT sum(runs) FROM pool_reliability_rollups"),
            absl::StrCat(kClients * kRuns + 10));
  EXPECT_EQ(db.QueryValue(R"sql(
    SELECT bool_and(e.busy_gpu_microseconds = r.busy
                    AND e.succeeded_gpu_microseconds = r.succeeded)
    FROM evidence_rollups e JOIN (
      SELECT recipe_key, sku_id, sum(placement_run_busy_gpu_us(b)) AS busy,
             coalesce(sum(gpu_microseconds)
                        FILTER (WHERE outcome = 'SUCCEEDED'), 0) AS succeeded
      FROM benchmark_runs b GROUP BY recipe_key, sku_id) r
    USING (recipe_key, sku_id))sql"),
            "t");

  // A binary from before the derived rollups existed writes only the
  // detailed rollup: the database derives the rest.
  db.Execute(R"sql(
    INSERT INTO cost_daily_rollups
    SELECT day, pool_name, sku_id, 'older-binary', model, method, team,
           outcome, runs, successful_runs, retries, steps_attempted,
           successful_steps, gpu_microseconds, wasted_gpu_microseconds,
           internal_rate_x_gpu_us, list_price_x_gpu_us,
           list_priced_gpu_microseconds, now()
    FROM cost_daily_rollups LIMIT 1)sql");
  EXPECT_EQ(RollupDisagreements(db), "0");
}

TEST(RollingUpgradeTest, NewBinaryBeforeMigrateUpRefusesWritesRetryably) {
  TestDatabase db;
  const int previous_schema = services::kOldestSchemaVersion - 1;
  MigrateTo(db, previous_schema);
  {
    // The pools exist already: the release before made them.
    auto previous = PlacementdProcess::Start(
        db.url(), {absl::StrCat("--newest_schema_version=", previous_schema)});
    ASSERT_TRUE(previous.ok()) << previous.status();
    // Writes wait for the first schema check (UNAVAILABLE until then).
    ASSERT_TRUE((*previous)->WaitForHealth(true, absl::Seconds(15)))
        << (*previous)->LogTail();
    ASSERT_TRUE(CreatePool((*previous)->channel()).ok())
        << (*previous)->LogTail();
  }
  auto next = PlacementdProcess::Start(db.url());
  ASSERT_TRUE(next.ok()) << next.status();
  EXPECT_TRUE((*next)->WaitForHealth(false, absl::Seconds(15)));
  absl::SleepFor(absl::Seconds(1));  // past the first schema check
  for (int i = 0; i < 5; ++i) {
    grpc::Status pool = CreatePool((*next)->channel());
    EXPECT_EQ(pool.error_code(), grpc::StatusCode::UNAVAILABLE)
        << pool.error_message();
    grpc::Status upload = Upload((*next)->channel());
    EXPECT_EQ(upload.error_code(), grpc::StatusCode::UNAVAILABLE)
        << upload.error_message();
  }
  MigrateTo(db, std::nullopt);
  ASSERT_TRUE((*next)->WaitForHealth(true, absl::Seconds(15)))
      << (*next)->LogTail();
  EXPECT_TRUE(CreatePool((*next)->channel()).ok());
  EXPECT_TRUE(Upload((*next)->channel()).ok());
}

// A failed upgrade is often rolled back with `migrate down`. The down
// migrations of the tables that hold decision records (0019's eval results,
// 0020's eval criteria, 0021's standards: kept nowhere else a plan reads)
// refuse while their table holds rows, name the count and how to export
// them, and change nothing; once they are exported and deleted, the down
// goes through.
// Long: the records written, then each down refused, exported, emptied
// and let through in the order `migrate down` takes them.
TEST(RollingUpgradeTest, MigrateDownRefusesToDropDecisionRecords) {
  TestDatabase db;
  MigrateTo(db, std::nullopt);
  {
    auto server = PlacementdProcess::Start(db.url());
    ASSERT_TRUE(server.ok()) << server.status();
    ASSERT_TRUE((*server)->WaitForHealth(true, absl::Seconds(15)))
        << (*server)->LogTail();
    ASSERT_TRUE(CreatePool((*server)->channel()).ok());
    auto telemetry = v1::TelemetryService::NewStub((*server)->channel());
    for (int i = 0; i < 2; ++i) {
      v1::UploadBenchmarkRunRequest upload;
      *upload.mutable_run() = SucceededRun("l40s", kSku);
      v1::EvalResult* eval = upload.mutable_run()->add_evals();
      eval->set_serving_sku(kSku);
      eval->set_serving_precision(v1::PRECISION_BF16);
      eval->set_metric_name("mmlu");
      eval->set_score(0.6 + 0.01 * i);
      v1::UploadBenchmarkRunResponse ack;
      ASSERT_TRUE(
          telemetry->UploadBenchmarkRun(Deadline().get(), upload, &ack).ok());
    }
  }
  db.Execute(R"sql(
    INSERT INTO eval_criteria (name, pool_name, metric, min_score)
    VALUES ('mmlu-floor', 'l40s', 'mmlu', 0.5);
    INSERT INTO standards (standard_id, request_id, fingerprint, recipe_class,
                           model, pool_name, sku_id, plan_id, written_by,
                           reason, cost_band_low, cost_band_high,
                           failure_rate_p10, failure_rate_p90)
    VALUES (gen_random_uuid(), 'r1', decode('00', 'hex'),
            decode('00', 'hex'), 'meta-llama/Llama-3.1-8B', 'l40s',
            'L40S-PCIE-48GB', gen_random_uuid(), 'admin', 'measured', 1, 2, 0,
            0.01))sql");

  storage::DbSession session(db.url());
  storage::Migrator migrator(session, storage::EmbeddedMigrations());
  const int newest = services::kNewestSchemaVersion;
  struct Records {
    const char* table;
    int migration;
    const char* count;
  };
  // Newest first, as `migrate down` goes; each table is emptied (after its
  // export) before the next down reaches the one below it.
  for (const Records& records :
       {Records{"standards", 21, "1"}, Records{"eval_criteria", 20, "1"},
        Records{"eval_results", 19, "2"}}) {
    SCOPED_TRACE(records.table);
    absl::StatusOr<int> reverted = migrator.Down(newest);
    ASSERT_FALSE(reverted.ok());
    EXPECT_EQ(reverted.status().code(), absl::StatusCode::kFailedPrecondition);
    const std::string message(reverted.status().message());
    EXPECT_THAT(message,
                ::testing::HasSubstr(absl::StrCat(records.table, " holds ",
                                                  records.count, " rows")));
    EXPECT_THAT(message,
                ::testing::HasSubstr(absl::StrCat("\\copy ", records.table)));
    // Nothing of it was dropped, and no migration below it was reverted.
    EXPECT_EQ(
        db.QueryValue(absl::StrCat("SELECT count(*) FROM ", records.table)),
        records.count);
    EXPECT_EQ(db.QueryValue(absl::StrCat(
                  "SELECT count(*) FROM schema_migrations WHERE version = ",
                  records.migration)),
              "1");
    // What the message says to do: export, then empty the table.
    const std::string file = absl::StrCat(::testing::TempDir(), "/",
                                          records.table, "-", getpid(), ".csv");
    ASSERT_EQ(::placement::testing::RunCommand(absl::StrCat(
                  "psql -q '", db.url(), "' -c \"\\copy ", records.table,
                  " TO '", file, "' WITH (FORMAT csv, HEADER)\"")),
              0);
    std::string exported;
    ASSERT_EQ(::placement::testing::RunCommand(absl::StrCat("wc -l < ", file),
                                               &exported),
              0);
    EXPECT_EQ(std::stoi(exported), std::stoi(records.count) + 1);  // header
    std::remove(file.c_str());
    db.Execute(absl::StrCat("TRUNCATE ", records.table));
  }
  absl::StatusOr<int> reverted = migrator.Down(newest);
  ASSERT_TRUE(reverted.ok()) << reverted.status();
  EXPECT_EQ(*migrator.CurrentVersion(), 0);
}

}  // namespace
}  // namespace placement
