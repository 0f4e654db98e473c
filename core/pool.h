#ifndef PLACEMENT_CORE_POOL_H_
#define PLACEMENT_CORE_POOL_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "absl/strings/string_view.h"
#include "core/field_violation.h"
#include "core/sku.h"

namespace placement::core {

// How the GPUs inside one node of a pool talk to each other.
enum class Fabric {
  kUnspecified = 0,
  kNvlink = 1,  // NVLink bridges or NVSwitch: collectives are cheap
  kPcie = 2,    // PCIe only: collectives cross the host bridge
};

// How the nodes of a pool talk to each other (the second fabric: Fabric is
// the one inside a node).
enum class InterNodeFabric {
  kUnspecified = 0,  // never declared: plans assume a conservative bandwidth
  kNone = 1,         // no usable network between nodes: a job stays in a node
  kEthernet = 2,     // TCP sockets over Ethernet
  kRoce = 3,         // RDMA over converged Ethernet
  kInfiniband = 4,
};

// What a pool is reserved for. Fine-tunes never go to serving pools.
enum class PoolPurpose {
  kUnspecified = 0,
  kTraining = 1,
  kServing = 2,
};

// A named, separately budgeted group of identical nodes with exactly one SKU.
struct Pool {
  std::string name;
  std::string sku_id;
  int node_count = 0;
  int gpus_per_node = 0;
  Fabric fabric = Fabric::kUnspecified;  // inside a node
  InterNodeFabric inter_node_fabric = InterNodeFabric::kUnspecified;
  // Network bandwidth per GPU between nodes, GB/s per direction.
  double inter_node_gb_s_per_gpu = 0;  // 0 = not declared
  PoolPurpose purpose = PoolPurpose::kUnspecified;
  bool exclusive = false;  // cards not time-sliced with other tenants
  int gpu_quota = 0;       // most GPUs a plan may take from this pool
  // Money is kept in integer micro-units (1e-6 of the currency) so that sums
  // never drift.
  int64_t internal_rate_micros_per_gpu_hour = 0;
  std::optional<int64_t> list_price_micros_per_gpu_hour;
  std::map<std::string, std::string> labels;  // e.g. team, region

  int total_gpus() const { return node_count * gpus_per_node; }

  friend bool operator==(const Pool&, const Pool&) = default;
};

// Bounds on pool fields, shared by validation and the API documentation.
inline constexpr int kMaxPoolNameLength = 63;
inline constexpr int kMaxNodesPerPool = 10000;
inline constexpr int kMaxGpusPerNode = 16;
inline constexpr int kMaxPoolLabels = 16;
inline constexpr int kMaxLabelLength = 63;
// $100,000 per GPU-hour: anything above is a unit mistake, not a price.
inline constexpr int64_t kMaxRateMicrosPerGpuHour = 100'000'000'000;
// GB/s per GPU each way between nodes: twice the fastest NIC per GPU sold
// (800 Gb/s XDR InfiniBand = 100 GB/s). Above it is a unit mistake (Gb/s).
inline constexpr double kMaxInterNodeGbSPerGpu = 200;

// Checks every field of `pool` against the rules of the catalog, `sku` being
// the pool's resolved SKU. Returns one violation per broken rule (empty when
// the pool is valid); field paths are prefixed with `field_prefix`
// (e.g. "pool.").
//
// Fabric rules: an SXM card is always joined by NVLink/NVSwitch, so it cannot
// be PCIe-only; a card without NVLink (L40S, L4, A10) cannot have an NVLink
// fabric.
FieldViolations ValidatePool(const Pool& pool, const GpuSku& sku,
                             const std::string& field_prefix);

// Whether `name` is a valid pool name: lower-case letters, digits and '-',
// starting with a letter, at most kMaxPoolNameLength characters.
bool IsValidPoolName(const std::string& name);
// A label's key (not empty) and value (may be empty): at most
// kMaxLabelLength characters of letters, digits, '-', '_' and '.'.
bool IsValidLabel(const std::string& key, const std::string& value);

// The one textual form of each enum (core/enum_names.h), and its inverse:
// nullopt for a name that is not one of them.
const char* FabricName(Fabric fabric);
std::optional<Fabric> ParseFabric(absl::string_view name);
const char* InterNodeFabricName(InterNodeFabric fabric);
std::optional<InterNodeFabric> ParseInterNodeFabric(absl::string_view name);
const char* PoolPurposeName(PoolPurpose purpose);
std::optional<PoolPurpose> ParsePoolPurpose(absl::string_view name);

}  // namespace placement::core

#endif  // PLACEMENT_CORE_POOL_H_
