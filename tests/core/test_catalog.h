#ifndef PLACEMENT_TESTS_CORE_TEST_CATALOG_H_
#define PLACEMENT_TESTS_CORE_TEST_CATALOG_H_

// The 11 SKUs of testdata/gpu_skus.csv (the vendors' public datasheet
// figures, also seeded by migrations/0001_catalog.up.sql), built by hand so
// that unit tests need no I/O.

#include <algorithm>
#include <string>
#include <vector>

#include "core/pool.h"
#include "core/sku.h"

namespace placement::core::testing {

inline GpuSku MakeSku(const char* id, const char* family, const char* arch,
                      double memory_gb, const char* memory_type,
                      double bandwidth, const char* form_factor, double nvlink,
                      int pcie_gen, double bf16, double fp8, int tdp) {
  GpuSku sku;
  sku.id = id;
  sku.family = family;
  sku.architecture = arch;
  sku.memory_gb = memory_gb;
  sku.memory_type = memory_type;
  sku.memory_bandwidth_gb_s = bandwidth;
  sku.form_factor = form_factor;
  sku.max_nvlink_gb_s = nvlink;
  sku.pcie_gen = pcie_gen;
  sku.bf16_dense_tflops = bf16;
  sku.fp8_dense_tflops = fp8;
  sku.tdp_w = tdp;
  return sku;
}

inline const std::vector<GpuSku>& TestCatalog() {
  static const auto* const kCatalog = new std::vector<GpuSku>{
      MakeSku("L4-PCIE-24GB", "L4", "Ada Lovelace", 24, "GDDR6", 300, "PCIe", 0,
              4, 121, 242.5, 72),
      MakeSku("A10-PCIE-24GB", "A10", "Ampere", 24, "GDDR6", 600, "PCIe", 0, 4,
              125, 0, 150),
      MakeSku("L40S-PCIE-48GB", "L40S", "Ada Lovelace", 48, "GDDR6", 864,
              "PCIe", 0, 4, 362, 733, 350),
      MakeSku("A100-PCIE-40GB", "A100", "Ampere", 40, "HBM2", 1555, "PCIe", 600,
              4, 312, 0, 250),
      MakeSku("A100-PCIE-80GB", "A100", "Ampere", 80, "HBM2e", 1935, "PCIe",
              600, 4, 312, 0, 300),
      MakeSku("A100-SXM4-40GB", "A100", "Ampere", 40, "HBM2", 1555, "SXM4", 600,
              4, 312, 0, 400),
      MakeSku("A100-SXM4-80GB", "A100", "Ampere", 80, "HBM2e", 2039, "SXM4",
              600, 4, 312, 0, 400),
      MakeSku("H100-PCIE-80GB", "H100", "Hopper", 80, "HBM2e", 2000, "PCIe",
              600, 5, 756, 1513, 350),
      MakeSku("H100-NVL-94GB", "H100", "Hopper", 94, "HBM3", 3900, "PCIe", 600,
              5, 835, 1671, 400),
      MakeSku("H100-SXM5-80GB", "H100", "Hopper", 80, "HBM3", 3350, "SXM5", 900,
              5, 989, 1979, 700),
      MakeSku("H200-SXM-141GB", "H200", "Hopper", 141, "HBM3e", 4800, "SXM5",
              900, 5, 989, 1979, 700),
  };
  return *kCatalog;
}

inline const GpuSku& Sku(const std::string& id) {
  for (const GpuSku& sku : TestCatalog()) {
    if (sku.id == id) return sku;
  }
  static const GpuSku kMissing;
  return kMissing;
}

// A valid exclusive training pool of `nodes` x `gpus_per_node` cards.
inline Pool TrainingPool(const std::string& name, const std::string& sku_id,
                         Fabric fabric, int gpus_per_node = 8, int nodes = 1,
                         int64_t rate_micros = 2'000'000) {
  Pool pool;
  pool.name = name;
  pool.sku_id = sku_id;
  pool.node_count = nodes;
  pool.gpus_per_node = gpus_per_node;
  pool.fabric = fabric;
  pool.purpose = PoolPurpose::kTraining;
  pool.exclusive = true;
  pool.gpu_quota = nodes * gpus_per_node;
  pool.internal_rate_micros_per_gpu_hour = rate_micros;
  return pool;
}

// The pool a published run ran on: nodes of 8 cards, the job's GPU count
// rounded up to whole nodes. The sources name the cards, not the fabric
// between nodes: a run across nodes is assumed to have had one InfiniBand
// NIC per GPU (the HGX / DGX reference design of the clusters such
// benchmarks run on), not the planner's Ethernet default for a pool that
// never declared its fabric.
inline Pool PublishedRunPool(const GpuSku& sku, int gpu_count) {
  const int nodes = std::max(1, (gpu_count + 7) / 8);
  Pool pool = TrainingPool(
      "p", sku.id, sku.HasNvlink() ? Fabric::kNvlink : Fabric::kPcie, 8, nodes);
  if (nodes > 1) pool.inter_node_fabric = InterNodeFabric::kInfiniband;
  return pool;
}

}  // namespace placement::core::testing

#endif  // PLACEMENT_TESTS_CORE_TEST_CATALOG_H_
