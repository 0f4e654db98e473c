#include "services/api/catalog_convert.h"

#include "common/proto_time.h"

namespace placement::services {

v1::Sku SkuToProto(const core::GpuSku& sku) {
  v1::Sku out;
  out.set_name(sku.id);
  out.set_family(sku.family);
  out.set_architecture(sku.architecture);
  out.set_memory_gb(sku.memory_gb);
  out.set_memory_type(sku.memory_type);
  out.set_memory_bandwidth_gb_s(sku.memory_bandwidth_gb_s);
  out.set_form_factor(sku.form_factor);
  out.set_max_nvlink_gb_s(sku.max_nvlink_gb_s);
  out.set_pcie_gen(sku.pcie_gen);
  out.set_bf16_dense_tflops(sku.bf16_dense_tflops);
  out.set_fp8_dense_tflops(sku.fp8_dense_tflops);
  out.set_tdp_w(sku.tdp_w);
  return out;
}

core::Fabric FabricFromProto(v1::Fabric fabric) {
  switch (fabric) {
    case v1::FABRIC_NVLINK:
      return core::Fabric::kNvlink;
    case v1::FABRIC_PCIE:
      return core::Fabric::kPcie;
    default:
      return core::Fabric::kUnspecified;
  }
}

v1::Fabric FabricToProto(core::Fabric fabric) {
  switch (fabric) {
    case core::Fabric::kNvlink:
      return v1::FABRIC_NVLINK;
    case core::Fabric::kPcie:
      return v1::FABRIC_PCIE;
    case core::Fabric::kUnspecified:
      break;
  }
  return v1::FABRIC_UNSPECIFIED;
}

core::InterNodeFabric InterNodeFabricFromProto(v1::InterNodeFabric fabric) {
  switch (fabric) {
    case v1::INTER_NODE_FABRIC_NONE:
      return core::InterNodeFabric::kNone;
    case v1::INTER_NODE_FABRIC_ETHERNET:
      return core::InterNodeFabric::kEthernet;
    case v1::INTER_NODE_FABRIC_ROCE:
      return core::InterNodeFabric::kRoce;
    case v1::INTER_NODE_FABRIC_INFINIBAND:
      return core::InterNodeFabric::kInfiniband;
    default:
      return core::InterNodeFabric::kUnspecified;
  }
}

v1::InterNodeFabric InterNodeFabricToProto(core::InterNodeFabric fabric) {
  switch (fabric) {
    case core::InterNodeFabric::kNone:
      return v1::INTER_NODE_FABRIC_NONE;
    case core::InterNodeFabric::kEthernet:
      return v1::INTER_NODE_FABRIC_ETHERNET;
    case core::InterNodeFabric::kRoce:
      return v1::INTER_NODE_FABRIC_ROCE;
    case core::InterNodeFabric::kInfiniband:
      return v1::INTER_NODE_FABRIC_INFINIBAND;
    case core::InterNodeFabric::kUnspecified:
      break;
  }
  return v1::INTER_NODE_FABRIC_UNSPECIFIED;
}

core::PoolPurpose PurposeFromProto(v1::PoolPurpose purpose) {
  switch (purpose) {
    case v1::POOL_PURPOSE_TRAINING:
      return core::PoolPurpose::kTraining;
    case v1::POOL_PURPOSE_SERVING:
      return core::PoolPurpose::kServing;
    default:
      return core::PoolPurpose::kUnspecified;
  }
}

v1::PoolPurpose PurposeToProto(core::PoolPurpose purpose) {
  switch (purpose) {
    case core::PoolPurpose::kTraining:
      return v1::POOL_PURPOSE_TRAINING;
    case core::PoolPurpose::kServing:
      return v1::POOL_PURPOSE_SERVING;
    case core::PoolPurpose::kUnspecified:
      break;
  }
  return v1::POOL_PURPOSE_UNSPECIFIED;
}

core::Pool PoolFromProto(const v1::Pool& in) {
  core::Pool pool;
  pool.name = in.name();
  pool.sku_id = in.sku();
  pool.node_count = in.node_count();
  pool.gpus_per_node = in.gpus_per_node();
  pool.fabric = FabricFromProto(in.fabric());
  pool.inter_node_fabric = InterNodeFabricFromProto(in.inter_node_fabric());
  pool.inter_node_gb_s_per_gpu = in.inter_node_bandwidth_gb_s_per_gpu();
  pool.purpose = PurposeFromProto(in.purpose());
  pool.exclusive = in.exclusive();
  pool.gpu_quota = in.gpu_quota();
  pool.internal_rate_micros_per_gpu_hour =
      in.internal_rate_micros_per_gpu_hour();
  if (in.has_list_price_micros_per_gpu_hour()) {
    pool.list_price_micros_per_gpu_hour = in.list_price_micros_per_gpu_hour();
  }
  pool.labels.insert(in.labels().begin(), in.labels().end());
  return pool;
}

v1::Pool PoolToProto(const core::Pool& pool, absl::Time create_time,
                     absl::Time update_time) {
  v1::Pool out;
  out.set_name(pool.name);
  out.set_sku(pool.sku_id);
  out.set_node_count(pool.node_count);
  out.set_gpus_per_node(pool.gpus_per_node);
  out.set_fabric(FabricToProto(pool.fabric));
  out.set_inter_node_fabric(InterNodeFabricToProto(pool.inter_node_fabric));
  out.set_inter_node_bandwidth_gb_s_per_gpu(pool.inter_node_gb_s_per_gpu);
  out.set_purpose(PurposeToProto(pool.purpose));
  out.set_exclusive(pool.exclusive);
  out.set_gpu_quota(pool.gpu_quota);
  out.set_internal_rate_micros_per_gpu_hour(
      pool.internal_rate_micros_per_gpu_hour);
  if (pool.list_price_micros_per_gpu_hour.has_value()) {
    out.set_list_price_micros_per_gpu_hour(
        *pool.list_price_micros_per_gpu_hour);
  }
  out.mutable_labels()->insert(pool.labels.begin(), pool.labels.end());
  common::TimeToProto(create_time, out.mutable_create_time());
  common::TimeToProto(update_time, out.mutable_update_time());
  return out;
}

}  // namespace placement::services
