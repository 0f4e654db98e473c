#include "core/pool.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace placement::core {
namespace {

using ::testing::ElementsAre;
using ::testing::Field;
using ::testing::IsEmpty;

GpuSku L40s() {
  GpuSku sku;
  sku.id = "L40S-PCIE-48GB";
  sku.form_factor = "PCIe";
  sku.max_nvlink_gb_s = 0;
  return sku;
}

GpuSku A100Sxm() {
  GpuSku sku;
  sku.id = "A100-SXM4-80GB";
  sku.form_factor = "SXM4";
  sku.max_nvlink_gb_s = 600;
  return sku;
}

GpuSku A100Pcie() {
  GpuSku sku;
  sku.id = "A100-PCIE-80GB";
  sku.form_factor = "PCIe";
  sku.max_nvlink_gb_s = 600;
  return sku;
}

Pool ValidPool() {
  Pool pool;
  pool.name = "a100-train";
  pool.sku_id = "A100-SXM4-80GB";
  pool.node_count = 2;
  pool.gpus_per_node = 8;
  pool.fabric = Fabric::kNvlink;
  pool.purpose = PoolPurpose::kTraining;
  pool.exclusive = true;
  pool.gpu_quota = 16;
  pool.internal_rate_micros_per_gpu_hour = 2'100'000;
  pool.labels = {{"team", "ml-platform"}, {"region", "us-tx"}};
  return pool;
}

FieldViolations Validate(const Pool& pool, const GpuSku& sku) {
  return ValidatePool(pool, sku, "pool.");
}

TEST(ValidatePoolTest, ValidPoolHasNoViolations) {
  EXPECT_THAT(Validate(ValidPool(), A100Sxm()), IsEmpty());
}

TEST(ValidatePoolTest, SxmCardCannotBePcieOnly) {
  Pool pool = ValidPool();
  pool.fabric = Fabric::kPcie;
  EXPECT_THAT(Validate(pool, A100Sxm()),
              ElementsAre(Field(&FieldViolation::field, "pool.fabric")));
}

TEST(ValidatePoolTest, CardWithoutNvlinkCannotHaveNvlinkFabric) {
  Pool pool = ValidPool();
  pool.sku_id = "L40S-PCIE-48GB";
  EXPECT_THAT(Validate(pool, L40s()),
              ElementsAre(Field(&FieldViolation::field, "pool.fabric")));
  pool.fabric = Fabric::kPcie;
  EXPECT_THAT(Validate(pool, L40s()), IsEmpty());
}

TEST(ValidatePoolTest, BridgedPcieCardMayUseEitherFabric) {
  Pool pool = ValidPool();
  pool.sku_id = "A100-PCIE-80GB";
  EXPECT_THAT(Validate(pool, A100Pcie()), IsEmpty());
  pool.fabric = Fabric::kPcie;
  EXPECT_THAT(Validate(pool, A100Pcie()), IsEmpty());
}

TEST(ValidatePoolTest, EachBrokenFieldIsNamed) {
  Pool pool = ValidPool();
  pool.name = "Bad Name";
  pool.node_count = 0;
  pool.gpus_per_node = 17;
  pool.purpose = PoolPurpose::kUnspecified;
  pool.gpu_quota = -1;
  pool.internal_rate_micros_per_gpu_hour = 0;
  pool.list_price_micros_per_gpu_hour = -5;
  pool.labels["bad key!"] = "x";
  std::vector<std::string> fields;
  for (const FieldViolation& v : Validate(pool, A100Sxm())) {
    fields.push_back(v.field);
  }
  EXPECT_THAT(
      fields,
      ElementsAre("pool.name", "pool.node_count", "pool.gpus_per_node",
                  "pool.purpose", "pool.gpu_quota",
                  "pool.internal_rate_micros_per_gpu_hour",
                  "pool.list_price_micros_per_gpu_hour", "pool.labels"));
}

TEST(ValidatePoolTest, QuotaCannotExceedThePoolsGpus) {
  Pool pool = ValidPool();
  pool.gpu_quota = 17;
  EXPECT_THAT(Validate(pool, A100Sxm()),
              ElementsAre(Field(&FieldViolation::field, "pool.gpu_quota")));
}

TEST(IsValidPoolNameTest, Rules) {
  EXPECT_TRUE(IsValidPoolName("l40s-adapters-2"));
  EXPECT_FALSE(IsValidPoolName(""));
  EXPECT_FALSE(IsValidPoolName("2fast"));
  EXPECT_FALSE(IsValidPoolName("trailing-"));
  EXPECT_FALSE(IsValidPoolName("UPPER"));
  EXPECT_FALSE(IsValidPoolName(std::string(64, 'a')));
}

}  // namespace
}  // namespace placement::core
