#ifndef PLACEMENT_CLIENTS_AGENT_SKU_NAMING_H_
#define PLACEMENT_CLIENTS_AGENT_SKU_NAMING_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"

namespace placement::agent {

// One GPU as the driver reports it.
struct GpuSighting {
  // The driver's product name, e.g. "NVIDIA A100-SXM4-80GB".
  std::string name;
  // Total framebuffer memory in MiB, as nvidia-smi's memory.total.
  int64_t memory_mib = 0;
  // NVLink links reported active (0: none, or no NVLink at all).
  int nvlink_active_links = 0;
};

// A catalog SKU as the agent can recognize it. The names and memory sizes
// mirror migrations/0001_catalog.up.sql; the driver names and MiB figures
// are what nvidia-smi prints on those cards (see tests/agent/testdata/).
struct KnownSku {
  const char* sku;          // exact catalog name
  const char* driver_name;  // nvidia-smi "name" without the "NVIDIA " prefix
  int64_t memory_mib;       // nvidia-smi "memory.total" on that card
  double memory_gb;         // the catalog's nominal memory
};

// Every card the agent names; anything else is unknown.
const std::vector<KnownSku>& KnownSkus();

// The known card with catalog name `sku` (exact, case-sensitive), or null.
const KnownSku* FindKnownSku(absl::string_view sku);

// Whether the node's GPUs are joined by NVLink.
enum class NvlinkState {
  kNone,     // no GPU reports an active link
  kActive,   // every GPU reports at least one active link
  kPartial,  // some do, some do not
};
const char* NvlinkStateName(NvlinkState state);

// What detection concluded about a node.
struct NodeDetection {
  // The exact catalog SKU; empty when the node cannot be named exactly.
  std::string sku;
  int gpu_count = 0;
  NvlinkState nvlink = NvlinkState::kNone;
  // "nvml" or "nvidia-smi".
  std::string source;
  // Why the node could not be named (empty when sku is set).
  std::string problem;
  // What was seen, one entry per GPU.
  std::vector<GpuSighting> gpus;

  bool named() const { return !sku.empty(); }
};

// The exact catalog SKU of one card from its driver name and memory, or ""
// with `*why` set. Names must match exactly (the "NVIDIA " prefix is
// optional, as older drivers omit it) and memory.total must be within 3% of
// what that card reports: a MIG slice, a partitioned card or an unlisted
// variant is never rounded to a neighbour.
std::string NameCard(const GpuSighting& gpu, std::string* why);

// Names a node: every GPU must be the same exact SKU.
NodeDetection NameNode(std::vector<GpuSighting> gpus, std::string source);

}  // namespace placement::agent

#endif  // PLACEMENT_CLIENTS_AGENT_SKU_NAMING_H_
