#include "storage/schema/migrations.h"

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "storage/stores/token_store.h"
#include "tests/support/test_database.h"

namespace placement::storage {
namespace {

using ::placement::testing::TestDatabase;

TEST(MigrationsTest, UpDownUpEndsWithTheSameSchema) {
  TestDatabase db;
  DbSession session(db.url());
  Migrator migrator(session, EmbeddedMigrations());
  const int latest = migrator.LatestVersion();
  ASSERT_GT(latest, 0);

  absl::StatusOr<int> applied = migrator.Up();
  ASSERT_TRUE(applied.ok()) << applied.status();
  EXPECT_EQ(*applied, static_cast<int>(EmbeddedMigrations().size()));
  EXPECT_EQ(*migrator.CurrentVersion(), latest);
  EXPECT_EQ(db.QueryValue("SELECT count(*) FROM skus"), "11");

  absl::StatusOr<int> reverted = migrator.Down(1000);
  ASSERT_TRUE(reverted.ok()) << reverted.status();
  EXPECT_EQ(*reverted, *applied);
  EXPECT_EQ(*migrator.CurrentVersion(), 0);
  EXPECT_EQ(db.QueryValue("SELECT to_regclass('skus') IS NULL"), "t");
  EXPECT_EQ(db.QueryValue("SELECT to_regclass('pools') IS NULL"), "t");

  applied = migrator.Up();
  ASSERT_TRUE(applied.ok()) << applied.status();
  EXPECT_EQ(*migrator.CurrentVersion(), latest);
  EXPECT_EQ(db.QueryValue("SELECT count(*) FROM skus"), "11");
  // A second up has nothing to do.
  EXPECT_EQ(*migrator.Up(), 0);
}

TEST(MigrationsTest, StatusListsPendingThenApplied) {
  TestDatabase db;
  DbSession session(db.url());
  Migrator migrator(session, EmbeddedMigrations());
  absl::StatusOr<std::vector<MigrationState>> before = migrator.Status();
  ASSERT_TRUE(before.ok()) << before.status();
  ASSERT_EQ(before->size(), EmbeddedMigrations().size());
  for (const MigrationState& state : *before) {
    EXPECT_FALSE(state.applied_at.has_value()) << state.name;
  }
  ASSERT_TRUE(migrator.Up().ok());
  absl::StatusOr<std::vector<MigrationState>> after = migrator.Status();
  ASSERT_TRUE(after.ok()) << after.status();
  for (const MigrationState& state : *after) {
    EXPECT_TRUE(state.applied_at.has_value()) << state.name;
  }
}

TEST(MigrationsTest, ConcurrentMigratorsEndWithOneCorrectSchema) {
  TestDatabase db;
  constexpr int kMigrators = 6;
  std::vector<absl::StatusOr<int>> results(kMigrators, 0);
  std::vector<std::thread> threads;
  for (int i = 0; i < kMigrators; ++i) {
    threads.emplace_back([&, i] {
      DbSession session(db.url());
      Migrator migrator(session, EmbeddedMigrations());
      results[i] = migrator.Up();
    });
  }
  for (std::thread& thread : threads) thread.join();

  int total_applied = 0;
  for (const absl::StatusOr<int>& result : results) {
    ASSERT_TRUE(result.ok()) << result.status();
    total_applied += *result;
  }
  // Each migration was applied exactly once, by one of the migrators.
  EXPECT_EQ(total_applied, static_cast<int>(EmbeddedMigrations().size()));
  EXPECT_EQ(db.QueryValue("SELECT count(*) FROM schema_migrations"),
            std::to_string(EmbeddedMigrations().size()));
  EXPECT_EQ(db.QueryValue("SELECT count(*) FROM skus"), "11");
}

// Migration 0023 binds tokens to teams. Without it a bound token would
// reach every team, so its down refuses while one is unrevoked; on the
// schema before it, tokens read as unbound and a bound one cannot be made.
TEST(MigrationsTest, TokenTeamsComeDownOnlyWithNoBoundTokenInUse) {
  TestDatabase db;
  DbSession session(db.url());
  Migrator migrator(session, EmbeddedMigrations());
  ASSERT_TRUE(migrator.Up(23).ok());
  TokenRecord bound{"00000000-0000-4000-8000-000000000001",
                    "agent-a",
                    "AGENT",
                    std::string(32, 'x'),
                    absl::Now(),
                    std::nullopt,
                    {"a", "b"}};
  ASSERT_TRUE(InsertToken(session, bound).ok());
  absl::StatusOr<std::vector<TokenRecord>> tokens = ListTokens(session);
  ASSERT_TRUE(tokens.ok()) << tokens.status();
  ASSERT_EQ(tokens->size(), 1u);
  EXPECT_EQ((*tokens)[0].teams, (std::vector<std::string>{"a", "b"}));

  const absl::StatusOr<int> refused = migrator.Down(1);
  EXPECT_FALSE(refused.ok());
  EXPECT_THAT(refused.status().message(),
              ::testing::HasSubstr("1 unrevoked token(s) bound to teams"));
  EXPECT_EQ(*migrator.CurrentVersion(), 23);
  ASSERT_TRUE(RevokeToken(session, bound.token_id).ok());
  ASSERT_TRUE(migrator.Down(1).ok());

  tokens = ListTokens(session);
  ASSERT_TRUE(tokens.ok()) << tokens.status();
  EXPECT_TRUE((*tokens)[0].teams.empty());
  bound.token_id = "00000000-0000-4000-8000-000000000002";
  bound.secret_hash = std::string(32, 'y');
  EXPECT_EQ(InsertToken(session, bound).code(),
            absl::StatusCode::kFailedPrecondition);
  bound.teams.clear();
  EXPECT_TRUE(InsertToken(session, bound).ok());
}

// A migration whose locks meet traffic's the other way round: PostgreSQL
// aborts one of the two to break the deadlock. When it is the migration,
// the migrator applies it again (the aborted transaction left nothing), and
// `migrate up` ends well.
TEST(MigrationsTest, AMigrationAbortedByADeadlockIsAppliedAgain) {
  TestDatabase db;
  db.Execute(
      "CREATE TABLE first_table (x int); CREATE TABLE then_table (x int)");
  const std::vector<Migration> against_traffic = {
      {1, "against_traffic",
       "LOCK TABLE then_table IN ACCESS EXCLUSIVE MODE;"
       " LOCK TABLE first_table IN ACCESS EXCLUSIVE MODE",
       ""}};
  std::atomic<bool> migrated{false};
  absl::StatusOr<int> applied = 0;
  std::thread migration;
  DbSession traffic(db.url());
  // Traffic takes first_table, then (once the migration waits for it, holding
  // then_table) then_table.
  const absl::Status traffic_done = traffic.Run([&](pqxx::connection_base& c) {
    pqxx::work txn(c);
    txn.exec("LOCK TABLE first_table IN ROW EXCLUSIVE MODE");
    migration = std::thread([&] {
      DbSession session(db.url());
      applied = Migrator(session, against_traffic).Up();
      migrated = true;
    });
    for (int i = 0; i < 20'000 && !migrated; ++i) {
      if (db.QueryValue("SELECT count(*) > 0 FROM pg_locks WHERE NOT granted"
                        " AND database = (SELECT oid FROM pg_database"
                        " WHERE datname = current_database())") == "t") {
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    txn.exec("LOCK TABLE then_table IN ROW EXCLUSIVE MODE");
    txn.commit();
    return absl::OkStatus();
  });
  if (migration.joinable()) migration.join();
  // Whichever PostgreSQL aborted, the migration is applied once.
  ASSERT_TRUE(applied.ok())
      << applied.status() << " (traffic: " << traffic_done << ")";
  EXPECT_EQ(*applied, 1);
  EXPECT_EQ(db.QueryValue("SELECT count(*) FROM schema_migrations"), "1");
}

TEST(MigrationsTest, UnreachableDatabaseIsUnavailable) {
  DbSession session("postgres://postgres@127.0.0.1:1/nothing");
  Migrator migrator(session, EmbeddedMigrations());
  EXPECT_EQ(migrator.Up().status().code(), absl::StatusCode::kUnavailable);
}

}  // namespace
}  // namespace placement::storage
