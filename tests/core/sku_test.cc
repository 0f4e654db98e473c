#include "core/sku.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace placement::core {
namespace {

using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::vector<GpuSku> Catalog() {
  std::vector<GpuSku> catalog;
  for (const char* id :
       {"L40S-PCIE-48GB", "A100-PCIE-40GB", "A100-PCIE-80GB", "A100-SXM4-40GB",
        "A100-SXM4-80GB", "H100-SXM5-80GB", "H200-SXM-141GB"}) {
    GpuSku sku;
    sku.id = id;
    catalog.push_back(sku);
  }
  return catalog;
}

TEST(ResolveSkuTest, ExactNameResolvesToCatalogSpelling) {
  absl::StatusOr<GpuSku> sku = ResolveSku("a100-sxm4-80gb", Catalog());
  ASSERT_TRUE(sku.ok()) << sku.status();
  EXPECT_EQ(sku->id, "A100-SXM4-80GB");
}

TEST(ResolveSkuTest, FamilyNameIsAmbiguousAndListsEveryCandidate) {
  absl::StatusOr<GpuSku> sku = ResolveSku("A100", Catalog());
  EXPECT_EQ(sku.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(sku.status().message(),
              AllOf(HasSubstr("A100-PCIE-40GB"), HasSubstr("A100-PCIE-80GB"),
                    HasSubstr("A100-SXM4-40GB"), HasSubstr("A100-SXM4-80GB")));
}

TEST(ResolveSkuTest, LooseNameListsOnlyMatchingCards) {
  EXPECT_THAT(SkuCandidates("a100 80g", Catalog()),
              ElementsAre("A100-PCIE-80GB", "A100-SXM4-80GB"));
  EXPECT_EQ(ResolveSku("a100 80g", Catalog()).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(ResolveSkuTest, PartialNameOfOneCardIsStillRefused) {
  absl::StatusOr<GpuSku> sku = ResolveSku("H200", Catalog());
  EXPECT_EQ(sku.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(sku.status().message(), HasSubstr("H200-SXM-141GB"));
}

TEST(ResolveSkuTest, UnknownNameIsNotFound) {
  EXPECT_EQ(ResolveSku("MI300X", Catalog()).status().code(),
            absl::StatusCode::kNotFound);
  EXPECT_EQ(ResolveSku("", Catalog()).status().code(),
            absl::StatusCode::kNotFound);
}

}  // namespace
}  // namespace placement::core
