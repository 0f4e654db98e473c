#include "clients/agent/sku_naming.h"

#include <cstdlib>

#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"

namespace placement::agent {

const std::vector<KnownSku>& KnownSkus() {
  // memory_mib: memory.total as nvidia-smi prints it on each card (driver
  // 535-550); the usable framebuffer is a little below the nominal size.
  static const auto* const skus = new std::vector<KnownSku>{
      {"L4-PCIE-24GB", "L4", 23034, 24},
      {"A10-PCIE-24GB", "A10", 23028, 24},
      {"L40S-PCIE-48GB", "L40S", 46068, 48},
      {"A100-PCIE-40GB", "A100-PCIE-40GB", 40960, 40},
      {"A100-PCIE-80GB", "A100 80GB PCIe", 81920, 80},
      {"A100-SXM4-40GB", "A100-SXM4-40GB", 40960, 40},
      {"A100-SXM4-80GB", "A100-SXM4-80GB", 81920, 80},
      // Hopper names say the memory, not the form factor: 80GB HBM3 is the
      // SXM5 board; the PCIe card is HBM2e and says so.
      {"H100-PCIE-80GB", "H100 PCIe", 81559, 80},
      {"H100-NVL-94GB", "H100 NVL", 95830, 94},
      {"H100-SXM5-80GB", "H100 80GB HBM3", 81559, 80},
      {"H200-SXM-141GB", "H200", 143771, 141},
  };
  return *skus;
}

const KnownSku* FindKnownSku(absl::string_view sku) {
  for (const KnownSku& known : KnownSkus()) {
    if (sku == known.sku) return &known;
  }
  return nullptr;
}

const char* NvlinkStateName(NvlinkState state) {
  switch (state) {
    case NvlinkState::kNone:
      return "none";
    case NvlinkState::kActive:
      return "active";
    case NvlinkState::kPartial:
      return "partial";
  }
  return "none";
}

std::string NameCard(const GpuSighting& gpu, std::string* why) {
  absl::string_view name = absl::StripAsciiWhitespace(gpu.name);
  absl::ConsumePrefix(&name, "NVIDIA ");
  for (const KnownSku& known : KnownSkus()) {
    if (name != known.driver_name) continue;
    // 3%: drivers differ by a few MiB of reserved memory; the nearest other
    // size of any family is 15% away.
    if (std::llabs(gpu.memory_mib - known.memory_mib) * 100 >
        known.memory_mib * 3) {
      *why = absl::StrCat("'", gpu.name, "' with ", gpu.memory_mib,
                          " MiB: the name says ", known.sku,
                          " but that card "
                          "has ",
                          known.memory_mib,
                          " MiB (a MIG slice or another variant?)");
      return "";
    }
    return known.sku;
  }
  *why = absl::StrCat("'", gpu.name, "' with ", gpu.memory_mib,
                      " MiB is not a card of the catalog");
  return "";
}

NodeDetection NameNode(std::vector<GpuSighting> gpus, std::string source) {
  NodeDetection d;
  d.source = std::move(source);
  d.gpu_count = static_cast<int>(gpus.size());
  int with_links = 0;
  for (const GpuSighting& gpu : gpus) {
    if (gpu.nvlink_active_links > 0) ++with_links;
  }
  d.nvlink = with_links == 0             ? NvlinkState::kNone
             : with_links == d.gpu_count ? NvlinkState::kActive
                                         : NvlinkState::kPartial;
  d.gpus = std::move(gpus);
  if (d.gpus.empty()) {
    d.problem = "no GPU was found";
    return d;
  }
  std::string sku;
  for (size_t i = 0; i < d.gpus.size(); ++i) {
    std::string why;
    const std::string card = NameCard(d.gpus[i], &why);
    if (card.empty()) {
      d.problem = absl::StrCat("GPU ", i, ": ", why);
      return d;
    }
    if (!sku.empty() && card != sku) {
      d.problem =
          absl::StrCat("mixed node: GPU 0 is ", sku, ", GPU ", i, " is ", card);
      return d;
    }
    sku = card;
  }
  d.sku = sku;
  return d;
}

}  // namespace placement::agent
