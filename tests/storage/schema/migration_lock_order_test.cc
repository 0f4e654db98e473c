// Migrations applied while runs are uploaded (a rolling upgrade,
// docs/RELIABILITY.md): each must take its locks in the order an upload
// takes them, or the two wait for each other and PostgreSQL aborts one.
// An upload inserts its run first (ROW EXCLUSIVE on benchmark_runs, held to
// its commit), then its triggers write the rollups, some at commit. A
// migration that locks a rollup table and then benchmark_runs (an ALTER,
// then a CREATE TRIGGER) closes a cycle with every upload in between.

#include <atomic>
#include <chrono>
#include <string>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "core/recipe.h"
#include "gtest/gtest.h"
#include "storage/schema/migrations.h"
#include "storage/stores/pool_store.h"
#include "storage/stores/run_store.h"
#include "tests/storage/stored_records.h"
#include "tests/support/test_database.h"

namespace placement::storage {
namespace {

using ::placement::testing::TestDatabase;

// The oldest schema a serving binary accepts (kOldestSchemaVersion): every
// migration after it may run beside uploads.
constexpr int kOldestServedSchema = 17;
constexpr char kSku[] = "H100-SXM5-80GB";
constexpr char kPool[] = "h100-train";
// The advisory lock the test holds to stop an upload just after its INSERT
// took benchmark_runs, before any trigger wrote a rollup.
constexpr int kHoldKey = 7702;

// The hold: an upload's BEFORE INSERT trigger waits while the test holds
// kHoldKey ($1 cannot reach a function's body, so the key is written in).
constexpr char kCreateHold[] = R"sql(
CREATE FUNCTION test_hold_upload() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_advisory_lock_shared(%d);
  PERFORM pg_advisory_unlock_shared(%d);
  RETURN NEW;
END $$;
CREATE TRIGGER aaa_test_hold_upload BEFORE INSERT ON benchmark_runs
  FOR EACH ROW EXECUTE FUNCTION test_hold_upload();
)sql";

// In this test's database (other tests run beside it), somebody waits for
// a lock other than the test's hold: the migration.
constexpr char kMigrationWaits[] =
    "SELECT count(*) > 0 FROM pg_locks WHERE NOT granted"
    " AND locktype <> 'advisory' AND database ="
    " (SELECT oid FROM pg_database WHERE datname = current_database())";
constexpr char kUploadHeld[] =
    "SELECT count(*) > 0 FROM pg_locks WHERE NOT granted"
    " AND locktype = 'advisory' AND database ="
    " (SELECT oid FROM pg_database WHERE datname = current_database())";

core::Pool H100Pool() {
  return testing::TrainingPool(kPool, kSku, core::Fabric::kNvlink, 3'600'000);
}

// A preempted two-GPU run with a retry: it reaches every rollup an upload
// writes (cost, evidence, attempts, the pool's reliability).
RunToStore PreemptedRun(int id) {
  RunToStore in =
      testing::SucceededRun(testing::Llama8bLora(), H100Pool(), id,
                            absl::FromUnixSeconds(1'788'220'800 + 3'600 * id));
  core::MeasuredRun& run = in.run;
  testing::OnNvlinkGpus(2, &run);
  run.started = run.ended - absl::Seconds(1'800);
  run.steps_attempted = 400;
  run.steps_succeeded = 300;
  run.retries = 1;
  run.peak_memory_gb = 40;
  run.outcome = core::RunOutcome::kPreempted;
  return in;
}

// Waits (bounded, so that a broken run ends) until `sql` reads true, or
// `done` is set; whether `sql` did.
bool WaitFor(const TestDatabase& db, const char* sql,
             const std::atomic<bool>& done) {
  for (int i = 0; i < 20'000 && !done.load(); ++i) {
    if (db.QueryValue(sql) == "t") return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return false;
}

// For each migration a serving binary may meet: an upload is stopped just
// after its INSERT, the migration starts (and waits for the upload, or
// finishes), then the upload goes on to its triggers and commit. Both end
// well: no deadlock, whichever way PostgreSQL would have chosen its victim.
// The migration is applied as one plain transaction, so that a deadlock
// fails it rather than being retried away by the migrator.
TEST(MigrationLockOrderTest, EachMigrationAppliesBesideAnUploadInFlight) {
  TestDatabase db;
  DbSession session(db.url());
  Migrator migrator(session, EmbeddedMigrations());
  ASSERT_TRUE(migrator.Up(kOldestServedSchema).ok());
  ASSERT_TRUE(CreatePool(session, H100Pool(), kPool).ok());
  db.Execute(absl::StrFormat(kCreateHold, kHoldKey, kHoldKey));

  DbSession upload_session(db.url());
  DbSession hold_session(db.url());
  int run_id = 0;
  int checked = 0;
  int waited = 0;
  for (const Migration& m : EmbeddedMigrations()) {
    if (m.version <= kOldestServedSchema) continue;
    SCOPED_TRACE(absl::StrCat("migration ", m.version, " ", m.name));
    ASSERT_TRUE(hold_session
                    .Run([](pqxx::connection_base& c) {
                      pqxx::nontransaction txn(c);
                      txn.exec_params("SELECT pg_advisory_lock($1)", kHoldKey);
                      return absl::OkStatus();
                    })
                    .ok());

    std::atomic<bool> upload_done{false};
    absl::Status uploaded;
    std::thread upload([&, id = run_id++] {
      uploaded = InsertRun(upload_session, PreemptedRun(id)).status();
      upload_done = true;
    });
    EXPECT_TRUE(WaitFor(db, kUploadHeld, upload_done));

    std::atomic<bool> migration_done{false};
    std::string migration_error;
    std::thread migration([&] {
      try {
        // One implicit transaction, as the migrator applies it.
        db.Execute(absl::StrCat(
            m.up_sql,
            ";\nINSERT INTO schema_migrations (version, name) VALUES (",
            m.version, ", '", m.name, "')"));
      } catch (const std::exception& e) {
        migration_error = e.what();
      }
      migration_done = true;
    });
    if (WaitFor(db, kMigrationWaits, migration_done)) ++waited;

    EXPECT_TRUE(hold_session
                    .Run([](pqxx::connection_base& c) {
                      pqxx::nontransaction txn(c);
                      txn.exec_params("SELECT pg_advisory_unlock($1)",
                                      kHoldKey);
                      return absl::OkStatus();
                    })
                    .ok());
    upload.join();
    migration.join();
    EXPECT_TRUE(uploaded.ok()) << uploaded;
    EXPECT_EQ(migration_error, "");
    if (!migration_error.empty()) {
      // Applied by the migrator instead, to go on to the next one.
      ASSERT_TRUE(migrator.Up(m.version).ok());
    }
    // Its backfills, if any, before the next migration.
    ASSERT_TRUE(migrator.Up(m.version).ok());
    ++checked;
  }
  EXPECT_GE(checked, 10);
  // Those that change benchmark_runs or its triggers (0022, 0028) waited
  // for the upload: the hold stopped it where the test means it to.
  EXPECT_GE(waited, 2);
}

}  // namespace
}  // namespace placement::storage
