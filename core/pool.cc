#include "core/pool.h"

#include <cmath>
#include <string>
#include <utility>

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

bool IsValidLabel(const std::string& key, const std::string& value) {
  return IsValidLabelPart(key, /*allow_empty=*/false) &&
         IsValidLabelPart(value, /*allow_empty=*/true);
}

namespace {

// Collects violations, each field named under a prefix ("pool.").
class PoolViolations {
 public:
  explicit PoolViolations(const std::string& field_prefix)
      : field_prefix_(field_prefix) {}

  void Add(const char* field, std::string description) {
    violations_.push_back(
        {absl::StrCat(field_prefix_, field), std::move(description)});
  }
  FieldViolations Take() { return std::move(violations_); }

 private:
  const std::string& field_prefix_;
  FieldViolations violations_;
};

// The pool's name, node count and GPUs per node.
void ValidateSize(const Pool& pool, PoolViolations* v) {
  if (!IsValidPoolName(pool.name)) {
    v->Add("name", absl::StrCat("must be 1-", kMaxPoolNameLength,
                                " characters of a-z, 0-9 and '-', starting "
                                "with a letter and not ending with '-'"));
  }
  if (pool.node_count < 1 || pool.node_count > kMaxNodesPerPool) {
    v->Add("node_count",
           absl::StrCat("must be between 1 and ", kMaxNodesPerPool));
  }
  if (pool.gpus_per_node < 1 || pool.gpus_per_node > kMaxGpusPerNode) {
    v->Add("gpus_per_node",
           absl::StrCat("must be between 1 and ", kMaxGpusPerNode));
  }
}

// The fabric within a node, as the card's form factor allows.
void ValidateFabric(const Pool& pool, const GpuSku& sku, PoolViolations* v) {
  switch (pool.fabric) {
    case Fabric::kUnspecified:
      v->Add("fabric", "must be NVLINK or PCIE");
      break;
    case Fabric::kPcie:
      if (sku.IsSxm()) {
        v->Add("fabric", absl::StrCat(sku.id,
                                      " is an SXM card: its boards always "
                                      "join GPUs through NVLink/NVSwitch, so "
                                      "the pool cannot be PCIe-only"));
      }
      break;
    case Fabric::kNvlink:
      if (!sku.HasNvlink()) {
        v->Add("fabric", absl::StrCat(sku.id,
                                      " has no NVLink at all, so the pool "
                                      "cannot have an NVLink fabric"));
      }
      break;
  }
}

// The purpose, and a quota no larger than the pool.
void ValidatePurposeAndQuota(const Pool& pool, PoolViolations* v) {
  if (pool.purpose == PoolPurpose::kUnspecified) {
    v->Add("purpose", "must be TRAINING or SERVING");
  }
  const int64_t total_gpus =
      static_cast<int64_t>(pool.node_count) * pool.gpus_per_node;
  if (pool.gpu_quota < 0) {
    v->Add("gpu_quota", "must not be negative");
  } else if (pool.node_count > 0 && pool.gpus_per_node > 0 &&
             pool.gpu_quota > total_gpus) {
    v->Add("gpu_quota",
           absl::StrCat("must not exceed the pool's ", total_gpus, " GPUs"));
  }
}

// The internal rate and the list price, positive and bounded.
void ValidateRates(const Pool& pool, PoolViolations* v) {
  if (pool.internal_rate_micros_per_gpu_hour <= 0 ||
      pool.internal_rate_micros_per_gpu_hour > kMaxRateMicrosPerGpuHour) {
    v->Add("internal_rate_micros_per_gpu_hour",
           absl::StrCat("must be positive and at most ",
                        kMaxRateMicrosPerGpuHour));
  }
  if (pool.list_price_micros_per_gpu_hour.has_value() &&
      (*pool.list_price_micros_per_gpu_hour <= 0 ||
       *pool.list_price_micros_per_gpu_hour > kMaxRateMicrosPerGpuHour)) {
    v->Add("list_price_micros_per_gpu_hour",
           absl::StrCat("must be positive and at most ",
                        kMaxRateMicrosPerGpuHour, " when set"));
  }
}

// The fabric and bandwidth between nodes, consistent with each other.
void ValidateInterNode(const Pool& pool, PoolViolations* v) {
  // Between nodes. NONE keeps every job inside one node, so a bandwidth
  // with it contradicts it; a bandwidth needs the fabric it is of.
  const double bandwidth = pool.inter_node_gb_s_per_gpu;
  if (!std::isfinite(bandwidth) || bandwidth < 0 ||
      bandwidth > kMaxInterNodeGbSPerGpu) {
    v->Add("inter_node_bandwidth_gb_s_per_gpu",
           absl::StrCat("must be between 0 (not declared) and ",
                        kMaxInterNodeGbSPerGpu,
                        " GB/s per GPU each way (GB/s, not Gb/s: 400 Gb/s "
                        "NDR InfiniBand is 50 GB/s)"));
  } else if (bandwidth > 0 &&
             pool.inter_node_fabric == InterNodeFabric::kNone) {
    v->Add("inter_node_bandwidth_gb_s_per_gpu",
           "must be 0 when inter_node_fabric is NONE (no fabric between "
           "nodes has no bandwidth)");
  } else if (bandwidth > 0 &&
             pool.inter_node_fabric == InterNodeFabric::kUnspecified) {
    v->Add("inter_node_fabric",
           "must be declared (ETHERNET, ROCE or INFINIBAND) when "
           "inter_node_bandwidth_gb_s_per_gpu is set");
  }
}

// At most kMaxPoolLabels labels of valid keys and values.
void ValidateLabels(const Pool& pool, PoolViolations* v) {
  if (pool.labels.size() > kMaxPoolLabels) {
    v->Add("labels", absl::StrCat("at most ", kMaxPoolLabels, " labels"));
  }
  for (const auto& [key, value] : pool.labels) {
    if (!IsValidLabel(key, value)) {
      v->Add("labels",
             absl::StrCat("label '", key.substr(0, kMaxLabelLength),
                          "': keys and values are at most ", kMaxLabelLength,
                          " characters of letters, digits, '-', '_', '.'"));
    }
  }
}

}  // namespace

FieldViolations ValidatePool(const Pool& pool, const GpuSku& sku,
                             const std::string& field_prefix) {
  PoolViolations v(field_prefix);
  ValidateSize(pool, &v);
  ValidateFabric(pool, sku, &v);
  ValidatePurposeAndQuota(pool, &v);
  ValidateRates(pool, &v);
  ValidateInterNode(pool, &v);
  ValidateLabels(pool, &v);
  return v.Take();
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
