#ifndef PLACEMENT_CORE_SKU_H_
#define PLACEMENT_CORE_SKU_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace placement::core {

// Datasheet figures of one exactly named GPU SKU (e.g. "A100-SXM4-80GB").
// Dense (non-sparse) tensor throughput; memory in the vendor's nominal GB.
struct GpuSku {
  std::string id;            // exact catalog name, e.g. "L40S-PCIE-48GB"
  std::string family;        // "A100": never enough to name a card
  std::string architecture;  // "Ampere"
  double memory_gb = 0;
  std::string memory_type;  // "HBM2e", "GDDR6"
  double memory_bandwidth_gb_s = 0;
  std::string form_factor;     // "PCIe", "SXM4", "SXM5"
  double max_nvlink_gb_s = 0;  // what the card can do; 0 = no NVLink at all
  int pcie_gen = 0;
  double bf16_dense_tflops = 0;
  double fp8_dense_tflops = 0;  // 0 = no FP8 tensor cores
  int tdp_w = 0;

  // SXM boards always join their cards through NVLink/NVSwitch.
  bool IsSxm() const;
  // Whether the card can be joined by NVLink at all (bridge or switch).
  bool HasNvlink() const { return max_nvlink_gb_s > 0; }
  bool HasFp8() const { return fp8_dense_tflops > 0; }
  // What CUDA can allocate, in GB (1e9 bytes, the unit of every predicted
  // and measured peak). An HBM card's nominal "80GB" is 80 GiB, of which
  // torch.cuda.mem_get_info reports 79.15 GiB total on an A100/H100 80GB
  // (85.0 GB; stas00's ml-engineering and LitGPT's OOM message quote the
  // same): nominal x 79.15 / 80 x 1.073741824. GDDR cards are taken at
  // their nominal GB (an L40S exposes 46,068 MiB = 48.3 GB).
  double UsableMemoryGb() const;

  friend bool operator==(const GpuSku&, const GpuSku&) = default;
};

// Resolves a user-supplied SKU name against the catalog.
//
// Only an exact name is accepted (compared case-insensitively, the catalog's
// spelling is returned): "A100" or "a100 80g" names more than one card, and
// even a partial name that matches a single card is refused, because the
// guide's first rule is that a provider must name the exact SKU.
//
// Returns the SKU on an exact match; INVALID_ARGUMENT listing the exact
// candidates when the name is partial or ambiguous; NOT_FOUND when nothing in
// the catalog resembles it.
absl::StatusOr<GpuSku> ResolveSku(absl::string_view name,
                                  const std::vector<GpuSku>& catalog);

// The catalog SKUs whose name contains every alphanumeric token of `name`
// (case-insensitive, separators ignored), in catalog order.
std::vector<std::string> SkuCandidates(absl::string_view name,
                                       const std::vector<GpuSku>& catalog);

}  // namespace placement::core

#endif  // PLACEMENT_CORE_SKU_H_
