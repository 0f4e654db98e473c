// The evals of stored runs (eval_results, migration 0019): written with the
// run, once, read back by filter and page, read as changes since a horizon,
// and on a schema before 0019 stored in the upload only.
#include "storage/stores/eval_store.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/recipe.h"
#include "gtest/gtest.h"
#include "storage/schema/migrations.h"
#include "storage/session/transaction_horizon.h"
#include "storage/stores/pool_store.h"
#include "storage/stores/run_store.h"
#include "tests/storage/stored_records.h"
#include "tests/support/test_database.h"

namespace placement::storage {
namespace {

using ::placement::testing::MigrationsAbove;
using ::placement::testing::TestDatabase;

constexpr char kSku[] = "L40S-PCIE-48GB";
constexpr char kA100[] = "A100-SXM4-80GB";
constexpr char kPool[] = "l40s-train";
constexpr int kEvalResultsVersion = 19;

core::Pool L40sPool() {
  return testing::TrainingPool(kPool, kSku, core::Fabric::kPcie, 1'000'000);
}

core::EvalEvidence Eval(const std::string& sku, core::Precision precision,
                        const std::string& metric, double score) {
  core::EvalEvidence e;
  e.serving_sku_id = sku;
  e.serving_precision = precision;
  e.metric = metric;
  e.score = score;
  return e;
}

// Run `i`, a LoRA of Llama-3.1-8B, carrying `evals`.
RunToStore RunWithEvals(int i, std::vector<core::EvalEvidence> evals) {
  RunToStore in =
      testing::SucceededRun(testing::Llama8bLora(), L40sPool(), i,
                            absl::FromUnixSeconds(1'790'000'000 + i));
  for (core::EvalEvidence& e : evals) {
    e.run_id = in.run.run_id;
    e.recipe_key = in.run.recipe_key;
  }
  in.evals = std::move(evals);
  return in;
}

class EvalStoreTest : public ::testing::Test {
 protected:
  EvalStoreTest() : session_(db_.url()) {
    db_.Migrate();
    EXPECT_TRUE(CreatePool(session_, L40sPool(), kPool).ok());
  }

  std::vector<core::EvalEvidence> AllEvals() {
    absl::StatusOr<std::vector<core::EvalEvidence>> read =
        session_.Run([](pqxx::connection_base& c)
                         -> absl::StatusOr<std::vector<core::EvalEvidence>> {
          pqxx::read_transaction txn(c);
          return ReadEvals(txn);
        });
    EXPECT_TRUE(read.ok()) << read.status();
    return read.ok() ? *read : std::vector<core::EvalEvidence>{};
  }

  TestDatabase db_;
  DbSession session_;
};

TEST_F(EvalStoreTest, EvalsAreStoredOnceWithTheRun) {
  const RunToStore run = RunWithEvals(
      1, {Eval(kA100, core::Precision::kFp16, "exact_match", 0.71),
          Eval(kA100, core::Precision::kBf16, "exact_match", 0.74)});
  absl::StatusOr<RunAck> ack = InsertRun(session_, run);
  ASSERT_TRUE(ack.ok()) << ack.status();
  // A retry of the same upload writes nothing.
  ASSERT_TRUE(InsertRun(session_, run).ok());

  const std::vector<core::EvalEvidence> evals = AllEvals();
  ASSERT_EQ(evals.size(), 2u);
  EXPECT_EQ(evals[0].run_id, run.run.run_id);
  EXPECT_EQ(evals[0].recipe_key, run.run.recipe_key);
  EXPECT_EQ(evals[0].serving_sku_id, kA100);
  EXPECT_EQ(evals[0].serving_precision, core::Precision::kFp16);
  EXPECT_EQ(evals[0].metric, "exact_match");
  EXPECT_DOUBLE_EQ(evals[0].score, 0.71);
  EXPECT_EQ(evals[0].recorded, ack->accept_time);
  EXPECT_EQ(evals[1].serving_precision, core::Precision::kBf16);
}

TEST_F(EvalStoreTest, ListsByFilterNewestFirstPageByPage) {
  ASSERT_TRUE(
      InsertRun(session_, RunWithEvals(1, {Eval(kA100, core::Precision::kFp16,
                                                "exact_match", 0.5)}))
          .ok());
  ASSERT_TRUE(
      InsertRun(session_,
                RunWithEvals(
                    2, {Eval(kA100, core::Precision::kFp16, "exact_match", 0.6),
                        Eval(kSku, core::Precision::kFp16, "rouge", 1),
                        Eval(kA100, core::Precision::kInt8, "em", 2)}))
          .ok());

  EvalFilter fp16_on_a100;
  fp16_on_a100.serving_sku_id = kA100;
  fp16_on_a100.serving_precision = core::Precision::kFp16;
  absl::StatusOr<EvalPage> filtered =
      ListEvals(session_, fp16_on_a100, EvalCursor{}, 10);
  ASSERT_TRUE(filtered.ok()) << filtered.status();
  ASSERT_EQ(filtered->evals.size(), 2u);
  EXPECT_DOUBLE_EQ(filtered->evals[0].eval.score, 0.6);  // newer run first
  EXPECT_DOUBLE_EQ(filtered->evals[1].eval.score, 0.5);
  EXPECT_FALSE(filtered->more);

  // Four in all, three pages of at most two, none twice.
  std::vector<double> scores;
  EvalCursor cursor;
  for (int page = 0; page < 3; ++page) {
    absl::StatusOr<EvalPage> read =
        ListEvals(session_, EvalFilter{}, cursor, 2);
    ASSERT_TRUE(read.ok()) << read.status();
    for (const StoredEval& e : read->evals) scores.push_back(e.eval.score);
    if (!read->more) break;
    cursor =
        EvalCursor{read->evals.back().eval.recorded,
                   read->evals.back().eval.run_id, read->evals.back().ordinal};
  }
  EXPECT_EQ(scores, (std::vector<double>{2, 1, 0.6, 0.5}));

  EvalFilter other_key;
  other_key.recipe_key = "no-such-key";
  EXPECT_TRUE(ListEvals(session_, other_key, EvalCursor{}, 10)->evals.empty());
}

TEST_F(EvalStoreTest, ChangesSinceAHorizonAreTheEvalsStoredAfterIt) {
  ASSERT_TRUE(
      InsertRun(session_, RunWithEvals(1, {Eval(kA100, core::Precision::kFp16,
                                                "exact_match", 0.5)}))
          .ok());
  absl::StatusOr<TransactionHorizon> horizon = ReadTransactionHorizon(session_);
  ASSERT_TRUE(horizon.ok()) << horizon.status();
  ASSERT_TRUE(
      InsertRun(session_, RunWithEvals(2, {Eval(kA100, core::Precision::kFp16,
                                                "exact_match", 0.6)}))
          .ok());
  absl::StatusOr<std::vector<core::EvalEvidence>> changed =
      session_.Run([&](pqxx::connection_base& c)
                       -> absl::StatusOr<std::vector<core::EvalEvidence>> {
        pqxx::read_transaction txn(c);
        return ReadEvalsChangedSince(txn, *horizon);
      });
  ASSERT_TRUE(changed.ok()) << changed.status();
  ASSERT_EQ(changed->size(), 1u);
  EXPECT_DOUBLE_EQ((*changed)[0].score, 0.6);
}

// A binary started before `migrate up` (schema 17): the run is stored, its
// evals stay in the upload, reads find none and listing is FAILED_PRECONDITION.
TEST_F(EvalStoreTest, BeforeMigration19RunsAreStoredAndEvalsAreNotRead) {
  Migrator migrator(session_, EmbeddedMigrations());
  ASSERT_TRUE(migrator.Down(MigrationsAbove(kEvalResultsVersion - 1)).ok());
  EXPECT_EQ(db_.QueryValue("SELECT to_regclass('eval_results') IS NULL"), "t");
  ASSERT_TRUE(
      InsertRun(session_, RunWithEvals(1, {Eval(kA100, core::Precision::kFp16,
                                                "exact_match", 0.5)}))
          .ok());
  EXPECT_TRUE(AllEvals().empty());
  EXPECT_EQ(ListEvals(session_, EvalFilter{}, EvalCursor{}, 10).status().code(),
            absl::StatusCode::kFailedPrecondition);
  // Up again: no backfill (the evals are in upload bytes SQL cannot read).
  ASSERT_TRUE(migrator.Up().ok());
  EXPECT_TRUE(AllEvals().empty());
}

}  // namespace
}  // namespace placement::storage
