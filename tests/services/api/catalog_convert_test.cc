// services/api/catalog_convert: a pool survives the trip through the API
// field for field (a list price only when it has one, never a price of 0);
// enums map both ways with undeclared numbers read as UNSPECIFIED.
#include "services/api/catalog_convert.h"

#include "absl/time/time.h"
#include "common/proto_time.h"
#include "gtest/gtest.h"

namespace placement::services {
namespace {

core::Pool AnyPool() {
  core::Pool p;
  p.name = "pool-h100";
  p.sku_id = "H100-SXM5-80GB";
  p.node_count = 4;
  p.gpus_per_node = 8;
  p.fabric = core::Fabric::kNvlink;
  p.inter_node_fabric = core::InterNodeFabric::kInfiniband;
  p.inter_node_gb_s_per_gpu = 50;
  p.purpose = core::PoolPurpose::kTraining;
  p.exclusive = true;
  p.gpu_quota = 16;
  p.internal_rate_micros_per_gpu_hour = 2'100'000;
  p.list_price_micros_per_gpu_hour = 3'990'000;
  p.labels = {{"team", "search"}, {"region", "eu-west"}};
  return p;
}

TEST(PoolConvertTest, RoundTripsEveryClientSettableField) {
  const core::Pool pool = AnyPool();
  const absl::Time created = absl::FromUnixMicros(1'700'000'000'000'001);
  const absl::Time updated = created + absl::Hours(1);
  const v1::Pool out = PoolToProto(pool, created, updated);
  EXPECT_EQ(out.name(), "pool-h100");
  EXPECT_EQ(out.sku(), "H100-SXM5-80GB");
  EXPECT_EQ(out.fabric(), v1::FABRIC_NVLINK);
  EXPECT_EQ(out.inter_node_fabric(), v1::INTER_NODE_FABRIC_INFINIBAND);
  EXPECT_EQ(out.purpose(), v1::POOL_PURPOSE_TRAINING);
  EXPECT_TRUE(out.has_list_price_micros_per_gpu_hour());
  EXPECT_EQ(out.list_price_micros_per_gpu_hour(), 3'990'000);
  EXPECT_EQ(out.labels().at("region"), "eu-west");
  EXPECT_EQ(common::TimeFromProto(out.create_time()), created);
  EXPECT_EQ(common::TimeFromProto(out.update_time()), updated);
  EXPECT_EQ(PoolFromProto(out), pool);
}

TEST(PoolConvertTest, NoListPriceStaysAbsentBothWays) {
  core::Pool pool = AnyPool();
  pool.list_price_micros_per_gpu_hour.reset();
  const v1::Pool out = PoolToProto(pool, absl::UnixEpoch(), absl::UnixEpoch());
  EXPECT_FALSE(out.has_list_price_micros_per_gpu_hour());
  EXPECT_EQ(PoolFromProto(out).list_price_micros_per_gpu_hour, std::nullopt);
}

TEST(PoolConvertTest, AListPriceOfZeroIsAPrice) {
  v1::Pool in;
  in.set_list_price_micros_per_gpu_hour(0);
  EXPECT_EQ(PoolFromProto(in).list_price_micros_per_gpu_hour, 0);
}

TEST(CatalogEnumConvertTest, EveryValueRoundTrips) {
  for (core::Fabric f : {core::Fabric::kUnspecified, core::Fabric::kNvlink,
                         core::Fabric::kPcie}) {
    EXPECT_EQ(FabricFromProto(FabricToProto(f)), f);
  }
  for (core::InterNodeFabric f :
       {core::InterNodeFabric::kUnspecified, core::InterNodeFabric::kNone,
        core::InterNodeFabric::kEthernet, core::InterNodeFabric::kRoce,
        core::InterNodeFabric::kInfiniband}) {
    EXPECT_EQ(InterNodeFabricFromProto(InterNodeFabricToProto(f)), f);
  }
  for (core::PoolPurpose p :
       {core::PoolPurpose::kUnspecified, core::PoolPurpose::kTraining,
        core::PoolPurpose::kServing}) {
    EXPECT_EQ(PurposeFromProto(PurposeToProto(p)), p);
  }
}

TEST(CatalogEnumConvertTest, UndeclaredNumbersAreUnspecified) {
  EXPECT_EQ(FabricFromProto(static_cast<v1::Fabric>(77)),
            core::Fabric::kUnspecified);
  EXPECT_EQ(InterNodeFabricFromProto(static_cast<v1::InterNodeFabric>(77)),
            core::InterNodeFabric::kUnspecified);
  EXPECT_EQ(PurposeFromProto(static_cast<v1::PoolPurpose>(77)),
            core::PoolPurpose::kUnspecified);
}

TEST(SkuToProtoTest, NamesTheSkuByItsIdAndKeepsItsFigures) {
  core::GpuSku sku;
  sku.id = "H100-SXM5-80GB";
  sku.memory_gb = 80;
  sku.bf16_dense_tflops = 989;
  sku.pcie_gen = 5;
  const v1::Sku out = SkuToProto(sku);
  EXPECT_EQ(out.name(), "H100-SXM5-80GB");
  EXPECT_EQ(out.memory_gb(), 80);
  EXPECT_EQ(out.bf16_dense_tflops(), 989);
  EXPECT_EQ(out.pcie_gen(), 5);
}

}  // namespace
}  // namespace placement::services
