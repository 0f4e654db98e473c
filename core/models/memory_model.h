#ifndef PLACEMENT_CORE_MODELS_MEMORY_MODEL_H_
#define PLACEMENT_CORE_MODELS_MEMORY_MODEL_H_

#include <array>
#include <string>

#include "absl/status/statusor.h"
#include "core/recipe.h"

namespace placement::core {

// The moments of one training step at which the memory of a GPU can peak.
enum class MemoryPhase {
  kUnspecified = 0,
  kForward = 1,        // end of forward: every saved activation + the loss
  kBackward = 2,       // backward: activations freed as gradients appear
  kOptimizerStep = 3,  // all gradients + the optimizer's temporaries
  // Before the first step, while a sharded (FSDP / ZeRO-3) model is built:
  // a framework that materializes the whole 16-bit model on every GPU and
  // shards it afterwards holds both at once.
  kModelSetup = 4,
};

// Predicted peak memory of ONE GPU of a job, in GB (1e9 bytes). The terms
// say what lives at some moment of a step; the peak is the largest of the
// three phases, not the sum of every term (backward frees activations as
// gradients appear, and the loss's working memory is gone before the
// optimizer step).
struct MemoryBreakdown {
  double weights_gb = 0;      // base weights (+ fp32 master copy, adapters,
                              // dequantized NF4 blocks)
  double gradients_gb = 0;    // gradients of the trainable parameters
  double optimizer_gb = 0;    // optimizer states
  double activations_gb = 0;  // saved activations at the end of forward
  double logits_gb = 0;       // output logits and loss working memory
  double backward_working_gb = 0;        // one block recomputed / its gradients
  double optimizer_step_working_gb = 0;  // the optimizer's temporaries
  // CUDA context, NCCL buffers and the allocator's slack at the peak.
  double overhead_gb = 0;

  // Allocated memory of each phase (what torch.cuda.max_memory_allocated
  // would see at that moment).
  double forward_gb = 0;
  double backward_gb = 0;
  double optimizer_step_gb = 0;
  double model_setup_gb = 0;  // 0 unless the framework builds unsharded
  MemoryPhase peak_phase = MemoryPhase::kUnspecified;

  double allocated_gb = 0;  // max over the phases
  double reserved_gb = 0;   // + the caching allocator's slack
  double device_gb = 0;     // + CUDA context (+ NCCL): what the card holds
  // The figure of the kind the recipe says its runs report (allocated,
  // reserved or device used); device used when unspecified.
  double reported_gb = 0;
  // The peak the card must hold: device_gb.
  double total_gb = 0;
  // True when the optimizer keeps its states in pageable unified memory
  // (paged 8-bit AdamW): the "fit" may lean on CPU RAM, i.e. offload.
  bool optimizer_may_page_to_cpu = false;
};

// The constants that differ between training frameworks.
struct FrameworkMemoryProfile {
  // Multiplies the analytic count of saved activations (and of the
  // backward working set): frameworks keep different extra tensors (fp32
  // norm upcasts, attention masks, fused or unfused kernels).
  double activation_scale = 1;
  // The loss a recipe of this framework gets when it does not say.
  LossImplementation default_loss = LossImplementation::kStandardFp32Upcast;
  // Multiplies the NF4 working memory (nf4_working_bytes_per_param): how
  // a framework's 4-bit linear layers hold dequantized weights differs
  // (bitsandbytes' Linear4bit through PEFT, Lightning Fabric's
  // BitsandbytesPrecision).
  double nf4_working_scale = 1;
  // Whole 16-bit copies of the model each GPU holds while a sharded
  // (FSDP / ZeRO-3) job is set up, on top of its own shard: 1 for a
  // framework that builds the full model on every GPU and then shards it,
  // 0 for one that builds on the meta device or shards while loading.
  double unsharded_setup_copies = 0;
};

inline constexpr int kTrainingFrameworkCount = 8;  // enum values 0..7

// Calibration constants. Each has a physical meaning; where it comes from
// (analytic prior, and the published rows it is fitted to) is said next to
// its value in memory_model.cc and in docs/CORE.md. They are per framework
// or per loss implementation, never per recipe or per measurement.
struct MemoryModelConstants {
  // Saved activation elements per token per layer, as multiples of the
  // hidden size and MLP width (16-bit elements without checkpointing).
  double activation_hidden_multiple = 0;
  double activation_mlp_multiple_gated = 0;
  double activation_mlp_multiple_plain = 0;
  // Bytes per token per vocabulary entry for logits + loss, by loss
  // implementation.
  double logits_bytes_standard = 0;  // bf16 logits upcast to fp32
  double logits_bytes_chunked = 0;   // chunked cross-entropy
  double logits_bytes_fused = 0;     // fused linear + cross-entropy
  // Working memory of an NF4 base beyond its packed storage, per quantized
  // parameter (dequantized bf16 copies, quantization buffers).
  double nf4_working_bytes_per_param = 0;
  // The optimizer step's temporaries, in units of one optimizer state
  // (PyTorch's multi-tensor AdamW allocates intermediate lists).
  double optimizer_step_temporaries = 0;
  // PADDED_PER_BATCH data with a known mean: the longest batch of a run is
  // this many times the mean padded length (capped at sequence_length).
  double padded_peak_length_factor = 0;
  // Reserved minus allocated, as a fraction of the short-lived memory of the
  // peak phase (the caching allocator rounds and fragments it).
  double reserved_slack_fraction = 0;
  double cuda_context_gb = 0;
  double nccl_buffers_gb = 0;
  // Indexed by TrainingFramework; kUnspecified uses kOther's profile.
  std::array<FrameworkMemoryProfile, kTrainingFrameworkCount> frameworks;

  const FrameworkMemoryProfile& Profile(TrainingFramework framework) const;
};

// The analytic constants before any measurement (the priors of the fit).
const MemoryModelConstants& AnalyticMemoryModelConstants();

// The constants the model ships with: the analytic ones fitted to the
// published measurements (see memory_model.cc).
const MemoryModelConstants& ShippedMemoryModelConstants();
// The constants the model uses: the shipped ones, unless a process set
// others at start (SetDefaultMemoryModelConstants; placementd
// --model_constants_file, core/models/model_constants_file.h).
const MemoryModelConstants& DefaultMemoryModelConstants();
// Call once at start, before any thread reads DefaultMemoryModelConstants.
void SetDefaultMemoryModelConstants(const MemoryModelConstants& constants);

// The loss a recipe computes: its own, or its framework's default.
LossImplementation EffectiveLoss(const Recipe& recipe,
                                 const MemoryModelConstants& constants);

// The padded length of the longest micro-batch of a run: sequence_length,
// except on PADDED_PER_BATCH data with a known mean, where it is
// padded_peak_length_factor x mean_tokens_per_sample, capped at
// sequence_length (a maximum on unpacked data is not the length of every
// batch).
double PeakSequenceLength(const Recipe& recipe,
                          const MemoryModelConstants& constants);

// Predicts the peak memory of one GPU for a recipe (normalized and valid,
// see NormalizeRecipe and ValidateRecipe). Model states are divided as the
// layout divides them: ZeRO-2 shards gradients and optimizer states, ZeRO-3
// and FSDP shard the weights too (plus one gathered block), tensor parallel
// divides weights and activations, pipeline parallel divides the layers.
// Activations and logits are sized at PeakSequenceLength x
// micro_batch_size tokens.
// Returns INVALID_ARGUMENT when the recipe is invalid, NOT_FOUND for an
// unknown model.
absl::StatusOr<MemoryBreakdown> PredictPeakMemory(const Recipe& recipe);

// Same, on an already resolved architecture and explicit constants (used by
// the calibration and the planner's cache). Never fails: garbage in,
// garbage out; call ValidateRecipe first.
MemoryBreakdown PredictPeakMemory(const Recipe& recipe,
                                  const ModelArchitecture& arch,
                                  const MemoryModelConstants& constants);

// "peak at backward: weights 16.1 GB + ... ; allocated 21.0 GB, reserved
// 22.3 GB, on the device 23.0 GB" for reasons.
std::string DescribeBreakdown(const MemoryBreakdown& breakdown);

const char* MemoryPhaseName(MemoryPhase phase);

}  // namespace placement::core

#endif  // PLACEMENT_CORE_MODELS_MEMORY_MODEL_H_
