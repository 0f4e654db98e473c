#ifndef PLACEMENT_CORE_PLAN_CONFIGURATION_SEARCH_H_
#define PLACEMENT_CORE_PLAN_CONFIGURATION_SEARCH_H_

// The configurations a plan may choose for a recipe on one pool: what the
// request left open (gpu_count = 0, parallelism UNSPECIFIED, activation
// checkpointing UNSPECIFIED) is enumerated; what it set is honoured exactly.

#include <vector>

#include "core/pool.h"
#include "core/recipe.h"
#include "core/sku.h"

namespace placement::core {

// What a request (as sent, before NormalizeRecipe) leaves to the planner.
struct OpenSettings {
  bool gpu_count = false;
  bool parallelism = false;
  bool checkpointing = false;

  bool any() const { return gpu_count || parallelism || checkpointing; }
};
OpenSettings OpenSettingsOf(const Recipe& requested);

// Most GPUs a plan may take from `pool`: its size, its quota and the
// request's max_gpus (0 = no limit).
int GpuLimit(const Pool& pool, int max_gpus);

// The GPU counts tried when gpu_count is open: 1, 2, 4, ... below a node,
// then whole nodes x 1, 2, 4, ... and the largest whole-node count, all
// within GpuLimit. Ascending, without duplicates.
std::vector<int> GpuCountsToTry(const Pool& pool, int max_gpus);

// Every configuration of `requested` (as sent) worth evaluating on `pool`,
// each normalized and valid (ValidateRecipe empty). For an open layout:
// SINGLE on 1 GPU; DDP, ZeRO-2 and FSDP (ZeRO-3's memory and traffic are
// FSDP's, so FSDP stands for both); TENSOR inside an NVLink node; tensor
// parallel inside a node x FSDP across the rest (tp x dp); and TENSOR
// inside nodes x PIPELINE across nodes. Tensor-parallel layouts the fabric
// rule would reject are not proposed (a layout the request set is always
// returned, for the rule to reject). Open checkpointing yields OFF and ON.
// Deterministic order; empty when nothing valid exists (e.g. the pool is
// smaller than the fixed gpu_count).
std::vector<Recipe> EnumerateConfigurations(const Recipe& requested,
                                            const Pool& pool, const GpuSku& sku,
                                            int max_gpus);

// Same, with the request already normalized (`normalized`, valid apart from
// its layout) and its layer count resolved: what Plan calls per pool.
std::vector<Recipe> EnumerateConfigurations(const Recipe& requested,
                                            const Recipe& normalized,
                                            int num_layers, const Pool& pool,
                                            const GpuSku& sku, int max_gpus);

// "FSDP over 16 GPUs (tp=1 pp=1 dp=16), checkpointing on" for reasons.
std::string DescribeConfiguration(const Recipe& recipe);

}  // namespace placement::core

#endif  // PLACEMENT_CORE_PLAN_CONFIGURATION_SEARCH_H_
