#ifndef PLACEMENT_CORE_MODELS_STEP_TIME_MODEL_H_
#define PLACEMENT_CORE_MODELS_STEP_TIME_MODEL_H_

#include <map>
#include <string>

#include "absl/status/statusor.h"
#include "core/pool.h"
#include "core/recipe.h"
#include "core/sku.h"

namespace placement::core {

// An ESTIMATED optimizer-step time, used only when no measured run of the
// recipe on the SKU exists. It is a roofline whose matmul efficiency is
// fitted per SKU family x method: treat it as low confidence (the
// cross-validation test reports its error).
struct StepTimeEstimate {
  double flops_per_token = 0;            // training FLOPs per token (all GPUs)
  double efficiency = 0;                 // share of the dense peak reached
  double compute_s = 0;                  // matmuls, pipeline bubble, dequant
  double dequantization_s = 0;           // NF4 dequantization (in compute_s)
  double optimizer_update_s = 0;         // memory-bound optimizer step
  double communication_s = 0;            // collectives, before overlap
  double exposed_communication_s = 0;    // the part on the critical path
  double collective_bandwidth_gb_s = 0;  // slowest link used; 0 if none
  double inter_node_bandwidth_gb_s = 0;  // when the job spans nodes
  double step_time_s = 0;                // one optimizer step
  double tokens_per_step = 0;            // all replicas
  double tokens_per_s_per_gpu = 0;
};

// Whether the GPUs of a job of `group_size` on `pool` talk over NVLink:
// SXM boards always do; PCIe-form-factor A100/H100 with an NVLink fabric
// are bridged in PAIRS only, so they are NVLink-class for groups of at most
// two; a group spanning nodes leaves NVLink for the network.
bool CollectivesUseNvlink(const GpuSku& sku, const Pool& pool, int group_size);

// Effective collective (NCCL bus) bandwidth in GB/s for a group of
// `group_size` GPUs on `pool` (see step_time_model.cc for the constants).
double CollectiveBandwidthGbS(const GpuSku& sku, const Pool& pool,
                              int group_size);

// The bandwidth per GPU between the nodes of a pool: the declared
// pool.inter_node_gb_s_per_gpu, else a default for the declared kind, else
// (never declared) the conservative Ethernet default. `source` says which.
struct InterNodeBandwidth {
  double gb_s_per_gpu = 0;
  const char* source = "";
};
InterNodeBandwidth InterNodeBandwidthOf(const Pool& pool);

// Training FLOPs per token: 6 x matmul parameters for full fine-tuning (2
// forward + 4 backward), 4 x for a frozen backbone with adapters (no weight
// gradients), 2 x for head-only (no backward through the backbone), plus
// 2 x with activation recompute, plus attention 12 * L * s * d_q.
double TrainingFlopsPerToken(const Recipe& recipe,
                             const ModelArchitecture& arch);
// The attention part of TrainingFlopsPerToken (scores and their product
// with the values): causal, half the s x s matrix, for SDPA and flash
// kernels; EAGER attention computes the whole matrix and masks it.
double AttentionFlopsPerToken(const Recipe& recipe,
                              const ModelArchitecture& arch);

// The constants of the step-time model. Matmul efficiency (model FLOPs
// utilization) factors as base_mfu x ridge factor x SKU family factor x
// method factor: a rank-one table over SKU x method in log space, so that a
// SKU measured on one method informs the others, and whose SKU side follows
// the datasheet for a SKU never measured. Each value, its prior and its source
// are in step_time_model.cc and docs/CORE.md.
struct StepTimeModelConstants {
  double base_mfu = 0;
  // Efficiency falls with the card's FLOP-to-byte ratio (dense bf16 TFLOPs
  // per TB/s of memory bandwidth; 200 = reference): the memory-bound parts
  // of a step (norms, activations, softmax, optimizer) take a larger share
  // of it on a card whose matmuls are faster relative to its memory. The
  // factor is (ratio / 200)^-ridge_exponent.
  double ridge_exponent = 0;
  std::map<std::string, double> sku_family_factor;  // by GpuSku::family;
                                                    // missing = 1
  double full_factor = 1;                           // every weight trainable
  double adapter_factor = 1;  // LoRA / QLoRA (frozen backbone)
  double head_only_factor = 1;
  // Memory traffic of dequantizing one NF4 weight to bf16, per pass
  // (forward, backward, recompute), in bytes at the card's bandwidth.
  double nf4_dequant_bytes_per_param = 0;
  // Fixed time of one transformer layer per micro-batch (forward +
  // backward), whatever its size: kernel launches and framework dispatch,
  // which dominate a step when micro-batches are small. x1.5 with
  // activation recompute (the forward runs twice).
  double layer_overhead_s = 0;
  // Share of data-parallel communication (gradient all-reduce, FSDP
  // gather/scatter) left on the critical path after overlap with compute.
  double data_parallel_exposed_fraction = 0;
  // FP8 linear layers (Transformer Engine, torchao Float8): the share of
  // their bf16 efficiency they keep at the card's FP8 rate. Scaling and
  // casting every operand is memory-bound work the FP8 peak does not
  // speed up, so FP8 runs faster than bf16 by less than the datasheet's
  // 2x.
  double fp8_factor = 1;
  // Memory traffic of EAGER attention per element of its s x s score
  // matrix, per layer, forward and backward: the scores written, masked,
  // upcast to an fp32 softmax, cast back, read for the values' product,
  // and their gradients. SDPA and flash kernels keep the scores on chip.
  double eager_attention_bytes_per_score = 0;
  // Fixed time per adapted module per layer per micro-batch: the kernels
  // of an adapter branch (input dropout, the two low-rank products, the
  // scale and the add, and their gradients), launched whatever the batch.
  // x1.5 with activation recompute.
  double adapter_module_overhead_s = 0;

  // The ridge factor times the family's own factor.
  double SkuFactor(const GpuSku& sku) const;
  double MethodFactor(FineTuneMethod method) const;
};

// The analytic constants (the priors of the fit).
const StepTimeModelConstants& AnalyticStepTimeModelConstants();
// The constants the model ships with, fitted to the published rows.
const StepTimeModelConstants& ShippedStepTimeModelConstants();
// The constants the model uses: the shipped ones, unless a process set
// others at start (SetDefaultStepTimeModelConstants; placementd
// --model_constants_file, core/models/model_constants_file.h).
const StepTimeModelConstants& DefaultStepTimeModelConstants();
// Call once at start, before any thread reads DefaultStepTimeModelConstants.
void SetDefaultStepTimeModelConstants(const StepTimeModelConstants& constants);

// The tokens one micro-batch computes: sequence_length x micro_batch_size,
// or mean_tokens_per_sample x micro_batch_size on PADDED_PER_BATCH data
// whose mean is given.
double ComputedTokensPerMicroBatch(const Recipe& recipe);

// Estimates one optimizer step of a (normalized, valid) recipe with its
// architecture on `sku` in `pool`. Never fails; validate first.
StepTimeEstimate EstimateStepTime(const Recipe& recipe,
                                  const ModelArchitecture& arch,
                                  const GpuSku& sku, const Pool& pool,
                                  const StepTimeModelConstants& constants);
// Same with DefaultStepTimeModelConstants().
StepTimeEstimate EstimateStepTime(const Recipe& recipe,
                                  const ModelArchitecture& arch,
                                  const GpuSku& sku, const Pool& pool);

// Same, resolving the architecture. INVALID_ARGUMENT for an invalid recipe,
// NOT_FOUND for an unknown model.
absl::StatusOr<StepTimeEstimate> EstimateStepTime(const Recipe& recipe,
                                                  const GpuSku& sku,
                                                  const Pool& pool);

// The dense tensor throughput a recipe can use on `sku`: FP8 when the recipe
// is FP8 and the card has FP8 tensor cores, TF32 (half of bf16) for FP32,
// bf16 otherwise (NF4/INT8 bases compute in bf16).
double PeakDenseTflops(const Recipe& recipe, const GpuSku& sku);

// The analytic prior of base_mfu: the model FLOPs utilization of large
// dense bf16 matmuls before any SKU or method factor or fixed per-layer
// overhead (see .cc).
inline constexpr double kAssumedMfu = 0.50;

}  // namespace placement::core

#endif  // PLACEMENT_CORE_MODELS_STEP_TIME_MODEL_H_
