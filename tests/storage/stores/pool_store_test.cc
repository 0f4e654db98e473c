#include "storage/stores/pool_store.h"

#include <thread>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "storage/schema/migrations.h"
#include "storage/stores/sku_store.h"
#include "tests/support/test_database.h"

namespace placement::storage {
namespace {

using ::placement::testing::MigrationsAbove;
using ::placement::testing::TestDatabase;
using ::testing::ElementsAre;
using ::testing::Field;
using ::testing::SizeIs;

core::Pool A100Pool(const std::string& name) {
  core::Pool pool;
  pool.name = name;
  pool.sku_id = "A100-SXM4-80GB";
  pool.node_count = 2;
  pool.gpus_per_node = 8;
  pool.fabric = core::Fabric::kNvlink;
  pool.purpose = core::PoolPurpose::kTraining;
  pool.exclusive = true;
  pool.gpu_quota = 16;
  pool.internal_rate_micros_per_gpu_hour = 2'100'000;
  pool.list_price_micros_per_gpu_hour = 4'100'000;
  pool.labels = {{"team", "ml-platform"}, {"region", "us-tx"}};
  pool.inter_node_fabric = core::InterNodeFabric::kInfiniband;
  pool.inter_node_gb_s_per_gpu = 25.5;
  return pool;
}

class PoolStoreTest : public ::testing::Test {
 protected:
  PoolStoreTest() : session_(db_.url()) { db_.Migrate(); }

  TestDatabase db_;
  DbSession session_;
};

TEST_F(PoolStoreTest, SkuCatalogIsSeededWithExactNames) {
  absl::StatusOr<std::vector<core::GpuSku>> skus = ListSkus(session_);
  ASSERT_TRUE(skus.ok()) << skus.status();
  ASSERT_THAT(*skus, SizeIs(11));
  const auto a100 = std::find_if(skus->begin(), skus->end(), [](auto& s) {
    return s.id == "A100-SXM4-80GB";
  });
  ASSERT_NE(a100, skus->end());
  EXPECT_EQ(a100->memory_gb, 80);
  EXPECT_EQ(a100->form_factor, "SXM4");
  EXPECT_EQ(a100->fp8_dense_tflops, 0);  // no FP8 on Ampere
}

TEST_F(PoolStoreTest, CreateThenGetRoundTripsEveryField) {
  absl::StatusOr<PoolRecord> created =
      CreatePool(session_, A100Pool("a100-train"), "req-1");
  ASSERT_TRUE(created.ok()) << created.status();
  absl::StatusOr<PoolRecord> read = GetPool(session_, "a100-train");
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(read->pool, A100Pool("a100-train"));
  EXPECT_EQ(read->create_time, created->create_time);
}

TEST_F(PoolStoreTest, UpdateRoundTripsTheInterNodeFabric) {
  ASSERT_TRUE(CreatePool(session_, A100Pool("a100-train"), "req-1").ok());
  absl::StatusOr<PoolRecord> updated =
      UpdatePool(session_, "a100-train", [](core::Pool& pool) {
        pool.inter_node_fabric = core::InterNodeFabric::kRoce;
        pool.inter_node_gb_s_per_gpu = 0.1;
        return absl::OkStatus();
      });
  ASSERT_TRUE(updated.ok()) << updated.status();
  absl::StatusOr<PoolRecord> read = GetPool(session_, "a100-train");
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(read->pool.inter_node_fabric, core::InterNodeFabric::kRoce);
  EXPECT_EQ(read->pool.inter_node_gb_s_per_gpu, 0.1);  // exact, not rounded
  EXPECT_EQ(db_.QueryValue("SELECT inter_node_fabric FROM pools"), "ROCE");
}

TEST_F(PoolStoreTest, TheSchemaRefusesFabricNoneWithABandwidth) {
  core::Pool pool = A100Pool("a100-train");
  pool.inter_node_fabric = core::InterNodeFabric::kNone;
  EXPECT_FALSE(CreatePool(session_, pool, "req-1").ok());
  EXPECT_EQ(db_.QueryValue("SELECT count(*) FROM pools"), "0");
}

// Migration 0007 on a database that already has pools: they read as never
// declared, and down then up leaves them so.
TEST(PoolMigrationTest, PoolsOfBeforeTheInterNodeFabricReadAsNeverDeclared) {
  TestDatabase db;
  DbSession session(db.url());
  Migrator migrator(session, EmbeddedMigrations());
  ASSERT_TRUE(migrator.Up(6).ok());
  db.Execute(
      "INSERT INTO pools (name, sku_id, node_count, gpus_per_node, fabric, "
      "purpose, exclusive, gpu_quota, internal_rate_micros_per_gpu_hour) "
      "VALUES ('old-pool', 'A100-SXM4-80GB', 2, 8, 'NVLINK', 'TRAINING', "
      "true, 16, 2100000)");
  ASSERT_TRUE(migrator.Up().ok());
  absl::StatusOr<PoolRecord> read = GetPool(session, "old-pool");
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(read->pool.inter_node_fabric, core::InterNodeFabric::kUnspecified);
  EXPECT_EQ(read->pool.inter_node_gb_s_per_gpu, 0);

  ASSERT_TRUE(migrator.Down(MigrationsAbove(6)).ok());
  EXPECT_EQ(db.QueryValue("SELECT count(*) FROM information_schema.columns "
                          "WHERE table_name = 'pools' AND column_name LIKE "
                          "'inter_node%'"),
            "0");
  EXPECT_EQ(db.QueryValue("SELECT count(*) FROM pools"), "1");
  ASSERT_TRUE(migrator.Up().ok());
  EXPECT_EQ(GetPool(session, "old-pool")->pool.inter_node_fabric,
            core::InterNodeFabric::kUnspecified);
}

TEST_F(PoolStoreTest, RetryWithSameRequestIdReturnsTheOriginal) {
  ASSERT_TRUE(CreatePool(session_, A100Pool("a100-train"), "req-1").ok());
  absl::StatusOr<PoolRecord> again =
      CreatePool(session_, A100Pool("a100-train"), "req-1");
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(again->pool, A100Pool("a100-train"));
  EXPECT_EQ(db_.QueryValue("SELECT count(*) FROM pools"), "1");
}

TEST_F(PoolStoreTest,
       SameNameWithOtherContentIsAlreadyExistsAndChangesNothing) {
  ASSERT_TRUE(CreatePool(session_, A100Pool("a100-train"), "req-1").ok());
  core::Pool other = A100Pool("a100-train");
  other.gpu_quota = 8;
  EXPECT_EQ(CreatePool(session_, other, "req-2").status().code(),
            absl::StatusCode::kAlreadyExists);
  EXPECT_EQ(GetPool(session_, "a100-train")->pool, A100Pool("a100-train"));
  // The same content under a new request id is the same pool: no error.
  EXPECT_TRUE(CreatePool(session_, A100Pool("a100-train"), "req-3").ok());
}

TEST_F(PoolStoreTest, RequestIdReusedForAnotherPoolIsAlreadyExists) {
  ASSERT_TRUE(CreatePool(session_, A100Pool("a100-train"), "req-1").ok());
  EXPECT_EQ(
      CreatePool(session_, A100Pool("a100-other"), "req-1").status().code(),
      absl::StatusCode::kAlreadyExists);
  EXPECT_EQ(GetPool(session_, "a100-other").status().code(),
            absl::StatusCode::kNotFound);
}

TEST_F(PoolStoreTest, ConcurrentCreatesOfOnePoolMakeOneRow) {
  std::vector<std::thread> threads;
  std::vector<absl::Status> results(8);
  for (int i = 0; i < 8; ++i) {
    threads.emplace_back([&, i] {
      DbSession session(db_.url());
      results[i] =
          CreatePool(session, A100Pool("a100-train"), "req-same").status();
    });
  }
  for (auto& thread : threads) thread.join();
  for (const absl::Status& status : results) EXPECT_TRUE(status.ok()) << status;
  EXPECT_EQ(db_.QueryValue("SELECT count(*) FROM pools"), "1");
}

TEST_F(PoolStoreTest, LabelsWithHostileTextRoundTripVerbatim) {
  core::Pool pool = A100Pool("a100-train");
  pool.labels = {{"team", "x'); DROP TABLE pools; --"},
                 {"quote", "\"\\\n\t\x01 é"}};
  ASSERT_TRUE(CreatePool(session_, pool, "").ok());
  EXPECT_EQ(GetPool(session_, "a100-train")->pool.labels, pool.labels);
}

TEST_F(PoolStoreTest, UpdateKeepsNameAndSkuAndRollsBackOnError) {
  ASSERT_TRUE(CreatePool(session_, A100Pool("a100-train"), "").ok());
  absl::StatusOr<PoolRecord> updated =
      UpdatePool(session_, "a100-train", [](core::Pool& pool) {
        pool.gpu_quota = 8;
        pool.sku_id = "L40S-PCIE-48GB";  // ignored: a pool's SKU is fixed
        return absl::OkStatus();
      });
  ASSERT_TRUE(updated.ok()) << updated.status();
  EXPECT_EQ(updated->pool.gpu_quota, 8);
  EXPECT_EQ(updated->pool.sku_id, "A100-SXM4-80GB");
  EXPECT_GE(updated->update_time, updated->create_time);

  absl::Status refused =
      UpdatePool(session_, "a100-train", [](core::Pool& pool) {
        pool.gpu_quota = 1;
        return absl::InvalidArgumentError("no");
      }).status();
  EXPECT_EQ(refused.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(GetPool(session_, "a100-train")->pool.gpu_quota, 8);
  EXPECT_EQ(UpdatePool(session_, "missing",
                       [](core::Pool&) { return absl::OkStatus(); })
                .status()
                .code(),
            absl::StatusCode::kNotFound);
}

TEST_F(PoolStoreTest, ListPagesInNameOrder) {
  for (const char* name : {"pool-c", "pool-a", "pool-e", "pool-b", "pool-d"}) {
    ASSERT_TRUE(CreatePool(session_, A100Pool(name), "").ok());
  }
  absl::StatusOr<PoolPage> first = ListPools(session_, 2, "");
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_THAT(
      first->pools,
      ElementsAre(
          Field(&PoolRecord::pool, Field(&core::Pool::name, "pool-a")),
          Field(&PoolRecord::pool, Field(&core::Pool::name, "pool-b"))));
  EXPECT_TRUE(first->more);
  absl::StatusOr<PoolPage> last = ListPools(session_, 2, "pool-d");
  ASSERT_TRUE(last.ok());
  ASSERT_THAT(last->pools, SizeIs(1));
  EXPECT_EQ(last->pools[0].pool.name, "pool-e");
  EXPECT_EQ(last->pools[0].pool.labels, A100Pool("x").labels);
  EXPECT_FALSE(last->more);
}

}  // namespace
}  // namespace placement::storage
