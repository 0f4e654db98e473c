#ifndef PLACEMENT_CORE_MODELS_STEP_TIME_MODEL_PHASES_H_
#define PLACEMENT_CORE_MODELS_STEP_TIME_MODEL_PHASES_H_

// The steps EstimateStepTime (step_time_model.h) composes, one function per
// term of the estimate, declared here so that a test can check each term on
// its own. Internal to the step-time model: everything else calls
// EstimateStepTime.

#include "core/models/step_time_model.h"
#include "core/pool.h"
#include "core/recipe.h"
#include "core/sku.h"

namespace placement::core::step_time_model_internal {

// The layout of a recipe's step.
struct StepShape {
  int tp = 1;  // tensor, pipeline and data-parallel degrees (>= 1)
  int pp = 1;
  int dp = 1;
  int ga = 1;               // micro-batches per optimizer step (>= 1)
  double micro_tokens = 0;  // ComputedTokensPerMicroBatch
};
StepShape ShapeOf(const Recipe& recipe);

// --- Compute. ---

// The share of the dense peak the matmuls reach: base_mfu x SKU factor x
// method factor, at most 0.95.
double MatmulEfficiency(const Recipe& recipe, const GpuSku& sku,
                        const StepTimeModelConstants& constants);
// The stored weights on one GPU (its tensor/pipeline share), in bytes.
double WeightBytesPerGpu(const Recipe& recipe, const ModelArchitecture& arch,
                         const StepShape& shape);
// One micro-batch on one GPU: its matmuls at `efficiency`, and streaming
// its weights once per pass (forward, backward, recompute), which bounds
// the matmuls from below when micro-batches are small. The linear layers
// run at the recipe's dense rate (FP8 ones at fp8_factor of their
// efficiency), attention (`attention_flops_per_token` of the total) at
// bf16's.
double MatmulSeconds(const Recipe& recipe, const GpuSku& sku,
                     const StepTimeModelConstants& constants,
                     const StepShape& shape, double flops_per_token,
                     double attention_flops_per_token, double efficiency);
double WeightStreamingSeconds(const Recipe& recipe,
                              const ModelArchitecture& arch, const GpuSku& sku,
                              const StepShape& shape);
// NF4 dequantization of one micro-batch (0 unless NF4).
double DequantizationSeconds(const Recipe& recipe,
                             const ModelArchitecture& arch, const GpuSku& sku,
                             const StepTimeModelConstants& constants,
                             const StepShape& shape);
// Launch and dispatch overhead of the layers of one micro-batch, adapter
// branches included.
double LayerOverheadSeconds(const Recipe& recipe, const ModelArchitecture& arch,
                            const StepTimeModelConstants& constants,
                            const StepShape& shape);
// The memory-bound score traffic of EAGER attention in one micro-batch (0
// for SDPA and flash attention).
double EagerAttentionSeconds(const Recipe& recipe,
                             const ModelArchitecture& arch, const GpuSku& sku,
                             const StepTimeModelConstants& constants,
                             const StepShape& shape);
// 1F1B pipeline bubble: idle slots per micro-batch of a step.
double PipelineBubble(const StepShape& shape);

struct ComputeTime {
  double compute_s = 0;         // the step's micro-batches, with the bubble
  double dequantization_s = 0;  // the part spent dequantizing NF4
};
// Every micro-batch of one optimizer step on one GPU.
ComputeTime StepCompute(const Recipe& recipe, const ModelArchitecture& arch,
                        const GpuSku& sku,
                        const StepTimeModelConstants& constants,
                        const StepShape& shape, double flops_per_token,
                        double efficiency);

// --- Optimizer update. ---

// Bytes the optimizer's update streams per trainable parameter.
double UpdateBytesPerParam(const Recipe& recipe);
// The memory-bound optimizer update on one GPU (sharded by ZeRO-2/3, FSDP).
double OptimizerUpdateSeconds(const Recipe& recipe,
                              const ModelArchitecture& arch, const GpuSku& sku,
                              const StepShape& shape);

// --- Communication. ---

// Bytes each GPU sends per optimizer step, by kind of collective.
struct CollectiveBytes {
  double data_parallel = 0;    // gradient all-reduce or FSDP gather/scatter
  double tensor_parallel = 0;  // Megatron's activation all-reduces
  double pipeline = 0;         // activations and gradients between stages
};
CollectiveBytes CollectiveBytesPerStep(const Recipe& recipe,
                                       const ModelArchitecture& arch,
                                       const StepShape& shape);

struct CommunicationTime {
  double communication_s = 0;            // every collective, before overlap
  double exposed_s = 0;                  // on the critical path
  double collective_bandwidth_gb_s = 0;  // slowest link used; 0 if none
  double inter_node_bandwidth_gb_s = 0;  // when the job spans nodes
};
// Tensor parallel runs over its NVLink group; data parallel and pipeline
// stages over the network when the job spans nodes, else the node's links.
// Only data-parallel traffic overlaps with compute.
CommunicationTime CommunicationTimeOf(const Recipe& recipe, const GpuSku& sku,
                                      const Pool& pool,
                                      const StepTimeModelConstants& constants,
                                      const StepShape& shape,
                                      const CollectiveBytes& bytes);

}  // namespace placement::core::step_time_model_internal

#endif  // PLACEMENT_CORE_MODELS_STEP_TIME_MODEL_PHASES_H_
