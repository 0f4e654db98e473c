// Standards (migration 0021): written once per request id, read, listed
// newest first by page, retired; the active ones read whole for the
// planner's snapshot; and before 0021 the snapshot has none and the rest is
// FAILED_PRECONDITION.
#include "storage/stores/standard_store.h"

#include <cstdio>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "storage/schema/migrations.h"
#include "tests/support/test_database.h"

namespace placement::storage {
namespace {

using ::placement::testing::MigrationsAbove;
using ::placement::testing::TestDatabase;

constexpr int kStandardsVersion = 21;

StandardRecord Record(int i, const std::string& request_id) {
  StandardRecord r;
  char id[37];
  std::snprintf(id, sizeof(id), "00000000-0000-7000-8000-%012d", i);
  r.standard.standard_id = id;
  r.standard.request_id = request_id;
  r.standard.pool_name = "a100-train";
  r.standard.sku_id = "A100-SXM4-80GB";
  r.standard.plan_id = "00000000-0000-7000-8000-000000000999";
  r.standard.written_by = "ops (ADMIN)";
  r.standard.reason = "won the bake-off";
  r.standard.cost_micros_per_successful_step_band = {900, 1100};
  r.standard.failure_rate_per_hour_band = {0.001, 0.02};
  r.recipe_class_proto = "class-bytes";
  r.model = "Llama-3.1-8B";
  r.fingerprint = "00ff";
  return r;
}

class StandardStoreTest : public ::testing::Test {
 protected:
  StandardStoreTest() : session_(db_.url()) { db_.Migrate(); }

  std::vector<StandardRecord> Active() {
    absl::StatusOr<std::vector<StandardRecord>> read =
        session_.Run([](pqxx::connection_base& c)
                         -> absl::StatusOr<std::vector<StandardRecord>> {
          pqxx::read_transaction txn(c);
          return ReadActiveStandards(txn);
        });
    EXPECT_TRUE(read.ok()) << read.status();
    return read.ok() ? *read : std::vector<StandardRecord>{};
  }

  TestDatabase db_;
  DbSession session_;
};

TEST_F(StandardStoreTest, WrittenOncePerRequestIdAndReadBack) {
  absl::StatusOr<StandardRecord> first =
      InsertStandard(session_, Record(1, "k"));
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_EQ(first->recipe_class_proto, "class-bytes");
  EXPECT_DOUBLE_EQ(first->standard.failure_rate_per_hour_band.high, 0.02);
  EXPECT_TRUE(first->standard.active());
  // The same request again (under a new id): the first standard.
  absl::StatusOr<StandardRecord> retry =
      InsertStandard(session_, Record(2, "k"));
  ASSERT_TRUE(retry.ok());
  EXPECT_EQ(retry->standard.standard_id, first->standard.standard_id);
  // Other content under the same key: refused, nothing written.
  StandardRecord other = Record(3, "k");
  other.fingerprint = "0100";
  EXPECT_EQ(InsertStandard(session_, other).status().code(),
            absl::StatusCode::kAlreadyExists);
  EXPECT_EQ(db_.QueryValue("SELECT count(*) FROM standards"), "1");
  absl::StatusOr<StandardRecord> got =
      GetStandard(session_, first->standard.standard_id);
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got->standard.reason, "won the bake-off");
  EXPECT_EQ(GetStandard(session_, "00000000-0000-7000-8000-000000000777")
                .status()
                .code(),
            absl::StatusCode::kNotFound);
}

TEST_F(StandardStoreTest, RetiredStandardsLeaveTheActiveSetAndTheDefaultList) {
  for (int i = 1; i <= 3; ++i) {
    ASSERT_TRUE(InsertStandard(session_, Record(i, absl::StrCat("k", i))).ok());
  }
  const std::string retired_id = Record(2, "").standard.standard_id;
  absl::StatusOr<StandardRecord> retired =
      RetireStandard(session_, retired_id, "ops (ADMIN)", "graphs");
  ASSERT_TRUE(retired.ok());
  ASSERT_TRUE(retired->standard.retired.has_value());
  EXPECT_EQ(retired->standard.retire_reason, "graphs");
  // Retiring again changes nothing.
  absl::StatusOr<StandardRecord> again =
      RetireStandard(session_, retired_id, "someone else", "again");
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->standard.retired_by, "ops (ADMIN)");

  EXPECT_EQ(Active().size(), 2u);
  absl::StatusOr<StandardPage> active =
      ListStandards(session_, StandardCursor{}, 10, false, {});
  ASSERT_TRUE(active.ok());
  EXPECT_EQ(active->standards.size(), 2u);
  // Every one, two a page, newest first.
  absl::StatusOr<StandardPage> page =
      ListStandards(session_, StandardCursor{}, 2, true, {});
  ASSERT_TRUE(page.ok());
  ASSERT_EQ(page->standards.size(), 2u);
  EXPECT_TRUE(page->more);
  const core::Standard& last = page->standards.back().standard;
  absl::StatusOr<StandardPage> rest = ListStandards(
      session_, StandardCursor{last.created, last.standard_id}, 2, true, {});
  ASSERT_TRUE(rest.ok());
  ASSERT_EQ(rest->standards.size(), 1u);
  EXPECT_FALSE(rest->more);
}

TEST_F(StandardStoreTest, BeforeMigration21ThereAreNone) {
  Migrator migrator(session_, EmbeddedMigrations());
  ASSERT_TRUE(migrator.Down(MigrationsAbove(kStandardsVersion - 1)).ok());
  EXPECT_TRUE(Active().empty());
  // Not UNAVAILABLE, which a client retries for ever: no retry helps until
  // `migrate up`.
  EXPECT_EQ(InsertStandard(session_, Record(1, "k")).status().code(),
            absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(
      ListStandards(session_, StandardCursor{}, 10, true, {}).status().code(),
      absl::StatusCode::kFailedPrecondition);
  ASSERT_TRUE(migrator.Up().ok());
  EXPECT_TRUE(InsertStandard(session_, Record(1, "k")).ok());
}

}  // namespace
}  // namespace placement::storage
