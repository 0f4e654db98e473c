#ifndef PLACEMENT_CORE_MEMORY_MODEL_H_
#define PLACEMENT_CORE_MEMORY_MODEL_H_

#include <string>

#include "absl/status/statusor.h"
#include "core/recipe.h"

namespace placement::core {

// Predicted peak memory of ONE GPU of a job, term by term, in GB (1e9 bytes),
// so that a plan can say why a job does not fit.
struct MemoryBreakdown {
  double weights_gb = 0;      // base weights (+ fp32 master copy, adapters)
  double gradients_gb = 0;    // gradients of the trainable parameters
  double optimizer_gb = 0;    // optimizer states
  double activations_gb = 0;  // saved activations of the transformer blocks
  double logits_gb = 0;       // output logits and loss working memory
  double overhead_gb = 0;     // CUDA context, NCCL buffers, allocator slack
  double total_gb = 0;        // the sum of the terms above
  // True when the optimizer keeps its states in pageable unified memory
  // (paged 8-bit AdamW): the "fit" may lean on CPU RAM, i.e. offload.
  bool optimizer_may_page_to_cpu = false;
};

// Calibration constants. Each has a physical meaning; where it comes from is
// said next to its definition in memory_model.cc. They are global, never
// per recipe or per measurement.
struct MemoryModelConstants {
  // Saved activation elements per token per layer, as multiples of the
  // hidden size, KV width and MLP width (16-bit elements without
  // checkpointing), see memory_model.cc.
  double activation_hidden_multiple = 0;
  double activation_mlp_multiple_gated = 0;
  double activation_mlp_multiple_plain = 0;
  // Bytes per token per vocabulary entry for logits + loss.
  double logits_bytes_per_token_vocab = 0;
  double cuda_context_gb = 0;
  double nccl_buffers_gb = 0;
  // Fraction of the dynamic (activation) memory lost to allocator
  // fragmentation.
  double allocator_slack_fraction = 0;
};

// The constants the model ships with.
const MemoryModelConstants& DefaultMemoryModelConstants();

// Predicts the peak memory of one GPU for a recipe (normalized and valid,
// see NormalizeRecipe and ValidateRecipe). Model states are divided as the
// layout divides them: ZeRO-2 shards gradients and optimizer states, ZeRO-3
// and FSDP shard the weights too (plus one gathered block), tensor parallel
// divides weights and activations, pipeline parallel divides the layers.
// Returns INVALID_ARGUMENT when the recipe is invalid, NOT_FOUND for an
// unknown model.
absl::StatusOr<MemoryBreakdown> PredictPeakMemory(const Recipe& recipe);

// Same, on an already resolved architecture and explicit constants (used by
// the calibration test and the planner's cache). Never fails: garbage in,
// garbage out; call ValidateRecipe first.
MemoryBreakdown PredictPeakMemory(const Recipe& recipe,
                                  const ModelArchitecture& arch,
                                  const MemoryModelConstants& constants);

// "weights 16.1 GB + gradients 0.0 GB + ... = 23.4 GB" for reasons.
std::string DescribeBreakdown(const MemoryBreakdown& breakdown);

}  // namespace placement::core

#endif  // PLACEMENT_CORE_MEMORY_MODEL_H_
