// SKU naming from nvidia-smi outputs of real cards (tests/agent/testdata/)
// and from a fake NVML: exact names only, unknown cards reported as seen.
#include <fstream>
#include <sstream>

#include "clients/agent/gpu_probe.h"
#include "clients/agent/sku_naming.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace placement::agent {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

std::string Fixture(const std::string& name) {
  std::ifstream file("testdata/" + name);
  EXPECT_TRUE(file) << "missing fixture " << name;
  std::stringstream text;
  text << file.rdbuf();
  return text.str();
}

// What DetectNode concludes from the two recorded outputs of `node`.
NodeDetection FromFixtures(const std::string& node, bool with_nvlink = true) {
  absl::StatusOr<std::vector<GpuSighting>> gpus =
      ParseNvidiaSmiCsv(Fixture(node + ".csv"));
  EXPECT_TRUE(gpus.ok()) << gpus.status();
  if (!gpus.ok()) return {};
  if (with_nvlink) ApplyNvlinkStatus(Fixture(node + ".nvlink.txt"), &*gpus);
  return NameNode(*std::move(gpus), "nvidia-smi");
}

struct Case {
  const char* node;
  const char* sku;
  int gpus;
  NvlinkState nvlink;
};

class NamedNodeTest : public ::testing::TestWithParam<Case> {};

TEST_P(NamedNodeTest, NamesTheExactSku) {
  const Case& c = GetParam();
  const NodeDetection d = FromFixtures(c.node);
  EXPECT_TRUE(d.named()) << d.problem;
  EXPECT_EQ(d.sku, c.sku);
  EXPECT_EQ(d.gpu_count, c.gpus);
  EXPECT_EQ(d.nvlink, c.nvlink);
  EXPECT_EQ(d.source, "nvidia-smi");
  // Every name the agent produces is a catalog SKU.
  EXPECT_NE(FindKnownSku(d.sku), nullptr);
}

INSTANTIATE_TEST_SUITE_P(
    RecordedCards, NamedNodeTest,
    ::testing::Values(
        Case{"l40s-4gpu", "L40S-PCIE-48GB", 4, NvlinkState::kNone},
        Case{"a100-pcie-40gb-2gpu", "A100-PCIE-40GB", 2, NvlinkState::kNone},
        Case{"a100-pcie-80gb-1gpu", "A100-PCIE-80GB", 1, NvlinkState::kNone},
        Case{"a100-sxm4-80gb-8gpu", "A100-SXM4-80GB", 8, NvlinkState::kActive},
        Case{"a100-sxm4-40gb-8gpu", "A100-SXM4-40GB", 8, NvlinkState::kActive},
        Case{"h100-sxm5-8gpu", "H100-SXM5-80GB", 8, NvlinkState::kActive},
        Case{"h100-pcie-1gpu", "H100-PCIE-80GB", 1, NvlinkState::kNone},
        Case{"h100-nvl-2gpu", "H100-NVL-94GB", 2, NvlinkState::kActive},
        Case{"h200-8gpu", "H200-SXM-141GB", 8, NvlinkState::kActive},
        Case{"l4-1gpu", "L4-PCIE-24GB", 1, NvlinkState::kNone}),
    [](const ::testing::TestParamInfo<Case>& info) {
      std::string name = info.param.node;
      for (char& c : name) {
        if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
      }
      return name;
    });

TEST(SkuDetectionTest, CountsActiveLinksPerGpu) {
  const NodeDetection a100 = FromFixtures("a100-sxm4-80gb-8gpu");
  ASSERT_EQ(a100.gpus.size(), 8u);
  EXPECT_EQ(a100.gpus[7].nvlink_active_links, 12);
  const NodeDetection h200 = FromFixtures("h200-8gpu");
  EXPECT_EQ(h200.gpus[0].nvlink_active_links, 18);
  // A PCIe A100 without a bridge lists its links, all inactive.
  const NodeDetection pcie = FromFixtures("a100-pcie-40gb-2gpu");
  EXPECT_EQ(pcie.gpus[0].nvlink_active_links, 0);
}

TEST(SkuDetectionTest, OldDriverWithoutPrefixAndOtherColumnOrder) {
  const NodeDetection d = FromFixtures("a100-sxm4-40gb-old-driver",
                                       /*with_nvlink=*/false);
  EXPECT_EQ(d.sku, "A100-SXM4-40GB");
  EXPECT_EQ(d.gpu_count, 2);
  EXPECT_EQ(d.gpus[0].memory_mib, 40536);
}

TEST(SkuDetectionTest, UnknownCardIsReportedWithWhatWasSeen) {
  const NodeDetection d = FromFixtures("rtx6000-ada-1gpu");
  EXPECT_FALSE(d.named());
  EXPECT_EQ(d.sku, "");
  EXPECT_EQ(d.gpu_count, 1);
  EXPECT_THAT(d.problem, HasSubstr("NVIDIA RTX 6000 Ada Generation"));
  EXPECT_THAT(d.problem, HasSubstr("49140 MiB"));
  EXPECT_THAT(d.problem, HasSubstr("not a card of the catalog"));
}

TEST(SkuDetectionTest, MemoryThatContradictsTheNameIsNotRounded) {
  const NodeDetection d = FromFixtures("a100-mig-slice-1gpu");
  EXPECT_FALSE(d.named());
  EXPECT_THAT(d.problem, HasSubstr("19968 MiB"));
  EXPECT_THAT(d.problem, HasSubstr("A100-SXM4-80GB"));
}

TEST(SkuDetectionTest, MixedNodeIsNotNamed) {
  const NodeDetection d = FromFixtures("mixed-l40s-l4", /*with_nvlink=*/false);
  EXPECT_FALSE(d.named());
  EXPECT_THAT(d.problem, HasSubstr("mixed node"));
  EXPECT_THAT(d.problem, HasSubstr("L4-PCIE-24GB"));
}

TEST(SkuDetectionTest, FamilyAndNeighbourNamesAreNotGuessed) {
  std::string why;
  EXPECT_EQ(NameCard({"NVIDIA A100", 81920, 0}, &why), "");
  EXPECT_EQ(NameCard({"NVIDIA H200 NVL", 143771, 0}, &why), "");
  EXPECT_EQ(NameCard({"NVIDIA H100", 81559, 0}, &why), "");
  EXPECT_EQ(NameCard({"NVIDIA A100-SXM4-80GB", 40960, 0}, &why), "");
  EXPECT_EQ(NameCard({"NVIDIA L40S", 0, 0}, &why), "");  // [N/A] memory
  EXPECT_EQ(NameCard({"NVIDIA A100-SXM4-80GB", 81920, 0}, &why),
            "A100-SXM4-80GB");
  EXPECT_EQ(NameCard({"NVIDIA H100 80GB HBM3", 81559, 0}, &why),
            "H100-SXM5-80GB");
}

TEST(SkuDetectionTest, NoGpuIsUnknown) {
  const NodeDetection d = NameNode({}, "nvidia-smi");
  EXPECT_FALSE(d.named());
  EXPECT_EQ(d.problem, "no GPU was found");
}

// A machine without a GPU: no driver, so neither NVML nor nvidia-smi. The
// problem says so in words and what to do, not a shell exit status.
TEST(SkuDetectionTest, NoDriverSaysWhatIsMissingAndWhatToDo) {
  absl::StatusOr<std::unique_ptr<Nvml>> nvml =
      LoadNvml("libnvidia-ml-absent-for-this-test.so.1");
  ASSERT_FALSE(nvml.ok());
  const NodeDetection d = DetectNode(nullptr, "/nonexistent/bin/nvidia-smi",
                                     std::string(nvml.status().message()));
  EXPECT_FALSE(d.named());
  EXPECT_THAT(d.problem, HasSubstr("NVML could not be loaded"));
  EXPECT_THAT(d.problem, HasSubstr("libnvidia-ml-absent-for-this-test.so.1"));
  EXPECT_THAT(d.problem, HasSubstr("nvidia-smi is not installed"));
  EXPECT_THAT(d.problem, HasSubstr("install the NVIDIA driver"));
  EXPECT_THAT(d.problem, Not(HasSubstr("exited")));
}

// nvidia-smi that is there but fails is a different problem from a missing one.
TEST(SkuDetectionTest, FailingNvidiaSmiIsNotCalledMissing) {
  const NodeDetection d = DetectNode(nullptr, "/bin/false");
  EXPECT_FALSE(d.named());
  EXPECT_THAT(d.problem, HasSubstr("nvidia-smi failed"));
  EXPECT_THAT(d.problem, Not(HasSubstr("not installed")));
}

TEST(SkuDetectionTest, MalformedCsvIsAnError) {
  EXPECT_FALSE(ParseNvidiaSmiCsv("").ok());
  EXPECT_FALSE(ParseNvidiaSmiCsv("index, pci.bus_id\n0, 00:01\n").ok());
  EXPECT_FALSE(
      ParseNvidiaSmiCsv("name, memory.total [MiB]\nNVIDIA L40S\n").ok());
}

// NVML behind its interface: the fake stands in for libnvidia-ml.
class FakeNvml : public Nvml {
 public:
  explicit FakeNvml(std::vector<GpuSighting> gpus) : gpus_(std::move(gpus)) {}
  absl::StatusOr<std::vector<GpuSighting>> Devices() override { return gpus_; }
  absl::StatusOr<std::vector<uint64_t>> MemoryUsedBytes() override {
    return std::vector<uint64_t>(gpus_.size(), 1ull << 30);
  }

 private:
  std::vector<GpuSighting> gpus_;
};

TEST(SkuDetectionTest, NvmlIsPreferredOverNvidiaSmi) {
  FakeNvml nvml(std::vector<GpuSighting>(
      8, GpuSighting{"NVIDIA H100 80GB HBM3", 81559, 18}));
  const NodeDetection d = DetectNode(&nvml, "/nonexistent/nvidia-smi");
  EXPECT_EQ(d.source, "nvml");
  EXPECT_EQ(d.sku, "H100-SXM5-80GB");
  EXPECT_EQ(d.gpu_count, 8);
  EXPECT_EQ(d.nvlink, NvlinkState::kActive);
}

TEST(SkuDetectionTest, PartialNvlinkIsReported) {
  FakeNvml nvml({{"NVIDIA A100-SXM4-80GB", 81920, 12},
                 {"NVIDIA A100-SXM4-80GB", 81920, 0}});
  const NodeDetection d = DetectNode(&nvml, "/nonexistent/nvidia-smi");
  EXPECT_EQ(d.nvlink, NvlinkState::kPartial);
}

TEST(SkuDetectionTest, MissingNvmlLibraryIsNotFound) {
  EXPECT_TRUE(
      absl::IsNotFound(LoadNvml("libnvidia-ml-not-here.so.1").status()));
}

TEST(SkuDetectionTest, KnownSkusMirrorTheCatalog) {
  // migrations/0001_catalog.up.sql seeds exactly these eleven.
  EXPECT_EQ(KnownSkus().size(), 11u);
  EXPECT_EQ(FindKnownSku("H200-SXM-141GB")->memory_gb, 141);
  EXPECT_EQ(FindKnownSku("L40S-PCIE-48GB")->memory_gb, 48);
  EXPECT_EQ(FindKnownSku("A100"), nullptr);
  EXPECT_EQ(FindKnownSku("a100-sxm4-80gb"), nullptr);
}

}  // namespace
}  // namespace placement::agent
