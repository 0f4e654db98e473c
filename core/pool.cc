#include "core/pool.h"

#include <cmath>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "core/enum_names.h"

namespace placement::core {
namespace {

bool IsValidLabelPart(const std::string& text, bool allow_empty) {
  if (text.empty()) return allow_empty;
  if (text.size() > kMaxLabelLength) return false;
  for (char c : text) {
    if (!absl::ascii_isalnum(c) && c != '-' && c != '_' && c != '.') {
      return false;
    }
  }
  return true;
}

}  // namespace

bool IsValidPoolName(const std::string& name) {
  if (name.empty() || name.size() > kMaxPoolNameLength) return false;
  if (!absl::ascii_islower(name.front())) return false;
  for (char c : name) {
    if (!absl::ascii_islower(c) && !absl::ascii_isdigit(c) && c != '-') {
      return false;
    }
  }
  return name.back() != '-';
}

FieldViolations ValidatePool(const Pool& pool, const GpuSku& sku,
                             const std::string& field_prefix) {
  FieldViolations violations;
  auto violate = [&](const char* field, std::string description) {
    violations.push_back(
        {absl::StrCat(field_prefix, field), std::move(description)});
  };

  if (!IsValidPoolName(pool.name)) {
    violate("name", absl::StrCat("must be 1-", kMaxPoolNameLength,
                                 " characters of a-z, 0-9 and '-', starting "
                                 "with a letter and not ending with '-'"));
  }
  if (pool.node_count < 1 || pool.node_count > kMaxNodesPerPool) {
    violate("node_count",
            absl::StrCat("must be between 1 and ", kMaxNodesPerPool));
  }
  if (pool.gpus_per_node < 1 || pool.gpus_per_node > kMaxGpusPerNode) {
    violate("gpus_per_node",
            absl::StrCat("must be between 1 and ", kMaxGpusPerNode));
  }
  switch (pool.fabric) {
    case Fabric::kUnspecified:
      violate("fabric", "must be NVLINK or PCIE");
      break;
    case Fabric::kPcie:
      if (sku.IsSxm()) {
        violate("fabric", absl::StrCat(sku.id,
                                       " is an SXM card: its boards always "
                                       "join GPUs through NVLink/NVSwitch, so "
                                       "the pool cannot be PCIe-only"));
      }
      break;
    case Fabric::kNvlink:
      if (!sku.HasNvlink()) {
        violate("fabric", absl::StrCat(sku.id,
                                       " has no NVLink at all, so the pool "
                                       "cannot have an NVLink fabric"));
      }
      break;
  }
  if (pool.purpose == PoolPurpose::kUnspecified) {
    violate("purpose", "must be TRAINING or SERVING");
  }
  const int64_t total_gpus =
      static_cast<int64_t>(pool.node_count) * pool.gpus_per_node;
  if (pool.gpu_quota < 0) {
    violate("gpu_quota", "must not be negative");
  } else if (pool.node_count > 0 && pool.gpus_per_node > 0 &&
             pool.gpu_quota > total_gpus) {
    violate("gpu_quota",
            absl::StrCat("must not exceed the pool's ", total_gpus, " GPUs"));
  }
  if (pool.internal_rate_micros_per_gpu_hour <= 0 ||
      pool.internal_rate_micros_per_gpu_hour > kMaxRateMicrosPerGpuHour) {
    violate("internal_rate_micros_per_gpu_hour",
            absl::StrCat("must be positive and at most ",
                         kMaxRateMicrosPerGpuHour));
  }
  if (pool.list_price_micros_per_gpu_hour.has_value() &&
      (*pool.list_price_micros_per_gpu_hour <= 0 ||
       *pool.list_price_micros_per_gpu_hour > kMaxRateMicrosPerGpuHour)) {
    violate("list_price_micros_per_gpu_hour",
            absl::StrCat("must be positive and at most ",
                         kMaxRateMicrosPerGpuHour, " when set"));
  }
  // Between nodes. NONE keeps every job inside one node, so a bandwidth
  // with it contradicts it; a bandwidth needs the fabric it is of.
  const double bandwidth = pool.inter_node_gb_s_per_gpu;
  if (!std::isfinite(bandwidth) || bandwidth < 0 ||
      bandwidth > kMaxInterNodeGbSPerGpu) {
    violate("inter_node_bandwidth_gb_s_per_gpu",
            absl::StrCat("must be between 0 (not declared) and ",
                         kMaxInterNodeGbSPerGpu,
                         " GB/s per GPU each way (GB/s, not Gb/s: 400 Gb/s "
                         "NDR InfiniBand is 50 GB/s)"));
  } else if (bandwidth > 0 &&
             pool.inter_node_fabric == InterNodeFabric::kNone) {
    violate("inter_node_bandwidth_gb_s_per_gpu",
            "must be 0 when inter_node_fabric is NONE (no fabric between "
            "nodes has no bandwidth)");
  } else if (bandwidth > 0 &&
             pool.inter_node_fabric == InterNodeFabric::kUnspecified) {
    violate("inter_node_fabric",
            "must be declared (ETHERNET, ROCE or INFINIBAND) when "
            "inter_node_bandwidth_gb_s_per_gpu is set");
  }
  if (pool.labels.size() > kMaxPoolLabels) {
    violate("labels", absl::StrCat("at most ", kMaxPoolLabels, " labels"));
  }
  for (const auto& [key, value] : pool.labels) {
    if (!IsValidLabelPart(key, /*allow_empty=*/false) ||
        !IsValidLabelPart(value, /*allow_empty=*/true)) {
      violate("labels",
              absl::StrCat("label '", key.substr(0, kMaxLabelLength),
                           "': keys and values are at most ", kMaxLabelLength,
                           " characters of letters, digits, '-', '_', '.'"));
    }
  }
  return violations;
}

const char* FabricName(Fabric fabric) {
  switch (fabric) {
    case Fabric::kNvlink:
      return "NVLINK";
    case Fabric::kPcie:
      return "PCIE";
    case Fabric::kUnspecified:
      break;
  }
  return "UNSPECIFIED";
}

const char* InterNodeFabricName(InterNodeFabric fabric) {
  switch (fabric) {
    case InterNodeFabric::kNone:
      return "NONE";
    case InterNodeFabric::kEthernet:
      return "ETHERNET";
    case InterNodeFabric::kRoce:
      return "ROCE";
    case InterNodeFabric::kInfiniband:
      return "INFINIBAND";
    case InterNodeFabric::kUnspecified:
      break;
  }
  return "UNSPECIFIED";
}

const char* PoolPurposeName(PoolPurpose purpose) {
  switch (purpose) {
    case PoolPurpose::kTraining:
      return "TRAINING";
    case PoolPurpose::kServing:
      return "SERVING";
    case PoolPurpose::kUnspecified:
      break;
  }
  return "UNSPECIFIED";
}

std::optional<Fabric> ParseFabric(absl::string_view name) {
  return ParseEnumName<Fabric, Fabric::kPcie>(name, FabricName);
}

std::optional<InterNodeFabric> ParseInterNodeFabric(absl::string_view name) {
  return ParseEnumName<InterNodeFabric, InterNodeFabric::kInfiniband>(
      name, InterNodeFabricName);
}

std::optional<PoolPurpose> ParsePoolPurpose(absl::string_view name) {
  return ParseEnumName<PoolPurpose, PoolPurpose::kServing>(name,
                                                           PoolPurposeName);
}

}  // namespace placement::core
