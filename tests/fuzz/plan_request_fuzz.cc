// The planner's request validation, and the planner on every request that
// passes it: never a crash, and ranks are 1..n over the candidates.
#include <cstdlib>

#include "core/plan/planner.h"
#include "services/api/placement_convert.h"
#include "tests/fuzz/fuzz_input.h"

namespace {

placement::core::Pool MakePool(const char* name, const char* sku,
                               placement::core::Fabric fabric) {
  placement::core::Pool pool;
  pool.name = name;
  pool.sku_id = sku;
  pool.node_count = 2;
  pool.gpus_per_node = 8;
  pool.fabric = fabric;
  pool.purpose = placement::core::PoolPurpose::kTraining;
  pool.exclusive = true;
  pool.gpu_quota = 16;
  pool.internal_rate_micros_per_gpu_hour = 2'000'000;
  return pool;
}

placement::core::GpuSku Sku(const char* id, double memory, const char* form,
                            double nvlink, double tflops) {
  placement::core::GpuSku sku;
  sku.id = id;
  sku.memory_gb = memory;
  sku.form_factor = form;
  sku.max_nvlink_gb_s = nvlink;
  sku.bf16_dense_tflops = tflops;
  sku.memory_bandwidth_gb_s = 1000;
  return sku;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  placement::v1::PlacePlanRequest proto;
  if (!placement::fuzz::ParseInput(data, size, &proto)) return 0;
  using namespace placement::core;
  static const std::vector<Pool> pools = {
      MakePool("l40s", "L40S-PCIE-48GB", Fabric::kPcie),
      MakePool("a100", "A100-SXM4-80GB", Fabric::kNvlink)};
  static const std::vector<GpuSku> skus = {
      Sku("L40S-PCIE-48GB", 48, "PCIe", 0, 362),
      Sku("A100-SXM4-80GB", 80, "SXM4", 600, 312)};
  PlanRequest request = placement::services::PlanRequestFromProto(proto);
  if (request.serving.has_value()) request.serving->sku_id = "L40S-PCIE-48GB";
  if (!ValidatePlanRequest(request).empty()) return 0;
  static const InMemoryEvidence evidence;
  absl::StatusOr<PlanResult> plan = Plan(request, pools, skus, evidence);
  if (!plan.ok()) return 0;
  for (size_t i = 0; i < plan->candidates.size(); ++i) {
    if (plan->candidates[i].rank != static_cast<int>(i) + 1) std::abort();
  }
  if (plan->candidates.size() + plan->rejections.size() != pools.size()) {
    std::abort();  // every pool is either a candidate or a rejection
  }
  return 0;
}
