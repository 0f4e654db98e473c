#ifndef PLACEMENT_CORE_RECIPE_H_
#define PLACEMENT_CORE_RECIPE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "core/field_violation.h"
#include "core/model_catalog.h"

namespace placement::core {

// Every enum keeps kUnspecified = 0 so that it maps 1:1 onto a protobuf enum.

enum class FineTuneMethod {
  kUnspecified = 0,
  kFull = 1,      // every weight trainable
  kLora = 2,      // frozen 16-bit (or 8-bit) base + low-rank adapters
  kQlora = 3,     // frozen NF4 base + low-rank adapters
  kHeadOnly = 4,  // frozen backbone, only the output head trains
};

// Storage precision of the base weights. Compute runs in bf16 for the
// quantized formats (nf4, int8) and in the format itself otherwise.
enum class Precision {
  kUnspecified = 0,
  kFp32 = 1,
  kBf16 = 2,
  kFp16 = 3,
  kFp8 = 4,
  kInt8 = 5,
  kNf4 = 6,
};

enum class Optimizer {
  kUnspecified = 0,
  kAdamW = 1,
  kAdamW8bit = 2,       // bitsandbytes 8-bit states
  kPagedAdamW8bit = 3,  // 8-bit states in CUDA unified memory (may page out)
  kSgd = 4,             // with momentum
};

// How the GPUs of one job divide the work. The data-parallel flavours
// (DDP, ZeRO-2, ZeRO-3, FSDP) say how the replicas share model states; kTensor
// and kPipeline name a model-parallel layout whose replicas (if any) are plain
// data parallel. The degrees spell the layout out:
// tensor * pipeline * data == gpu_count.
enum class Parallelism {
  kUnspecified = 0,
  kSingle = 1,    // one GPU
  kDdp = 2,       // replicated model, gradients all-reduced
  kZero2 = 3,     // optimizer states and gradients sharded
  kZero3 = 4,     // parameters too (DeepSpeed stage 3)
  kFsdp = 5,      // PyTorch FSDP FULL_SHARD (same memory as ZeRO-3)
  kTensor = 6,    // layers split across GPUs (Megatron-style)
  kPipeline = 7,  // layer stages on different GPUs
};

// How attention is computed. Only eager attention materializes the s x s
// score matrix; SDPA (PyTorch's scaled_dot_product_attention, which picks a
// flash or memory-efficient kernel) and flash attention do not.
enum class AttentionImplementation {
  kUnspecified = 0,  // what current frameworks do (see NormalizeRecipe)
  kEager = 1,
  kSdpa = 2,
  kFlash = 3,
};

// Recomputing each block's activations in backward instead of keeping them.
enum class ActivationCheckpointing {
  kUnspecified = 0,  // the planner may choose (see NormalizeRecipe)
  kOff = 1,
  kOn = 2,
};

// How the loss over the vocabulary is computed: it decides the logits'
// working memory, which at 128k-256k vocabularies can exceed every layer's
// activations together.
enum class LossImplementation {
  kUnspecified = 0,          // the framework's default (memory_model.cc)
  kStandardFp32Upcast = 1,   // full logits, upcast to fp32 (HF Transformers)
  kChunkedCrossEntropy = 2,  // fp32 one chunk at a time (LitGPT, torchtune)
  kFusedLinearCrossEntropy = 3,  // head matmul fused with the loss (Liger)
};

// How samples become micro-batches.
enum class SequencePacking {
  kUnspecified = 0,  // as PACKED: every micro-batch is sequence_length long
  kPacked = 1,       // samples concatenated to sequence_length
  // Each batch padded to its longest sample: sequence_length is the longest
  // batch the data can make (the peak happens there) and
  // mean_tokens_per_sample the mean padded length (it sets the step time).
  kPaddedPerBatch = 2,
};

// The training framework, as a profile of memory constants (its default
// loss, the extra tensors it keeps).
enum class TrainingFramework {
  kUnspecified = 0,  // profile of OTHER
  kHfTransformersPeft = 1,
  kTorchtune = 2,
  kNemo = 3,
  kLitgpt = 4,
  kAxolotl = 5,
  kDeepspeed = 6,
  kOther = 7,
};

// Which parameter-efficient adapter a LoRA / QLoRA recipe trains (as
// Hugging Face PEFT and LitGPT implement them). Their trainable counts
// differ (TrainableParams); so do their peaks at equal settings otherwise,
// which is why each is its own recipe key.
enum class AdapterType {
  kUnspecified = 0,     // LORA for an adapter method (NormalizeRecipe)
  kLora = 1,            // B x A of rank r beside each target module
  kDora = 2,            // LoRA + a magnitude vector per module
  kLoha = 3,            // two low-rank pairs, Hadamard product
  kVera = 4,            // shared frozen random matrices, trained vectors
  kIa3 = 5,             // a rescaling vector per module; no rank
  kLlamaAdapter = 6,    // gated prompts in the top layers; no rank, no targets
  kLlamaAdapterV2 = 7,  // + bias and scale on every linear, trained norms
};

// Which peak a run's memory figure is.
enum class PeakMemoryKind {
  kUnspecified = 0,  // read as DEVICE_USED
  kAllocated = 1,    // torch.cuda.max_memory_allocated()
  kReserved = 2,     // torch.cuda.max_memory_reserved() (allocator's cache)
  kDeviceUsed = 3,   // nvidia-smi / NVML: reserved + CUDA context + NCCL
};

// The training graph of one fine-tune: everything that decides its memory
// and its step time. A Recipe says nothing about where it runs.
struct Recipe {
  // A catalog model name (see ModelCatalog) or "custom", in which case
  // custom_architecture holds the dimensions.
  std::string model;
  ModelArchitecture custom_architecture;

  FineTuneMethod method = FineTuneMethod::kUnspecified;
  int lora_rank = 0;  // LoRA/QLoRA only
  // LoRA/QLoRA only: any of "q", "k", "v", "o", "gate", "up", "down"
  // ("q_proj" etc. and "all-linear" are accepted and normalized).
  std::vector<std::string> target_modules;

  int sequence_length = 0;
  int micro_batch_size = 0;
  int gradient_accumulation_steps = 0;

  Precision precision = Precision::kUnspecified;
  // Trainable weights kept as an fp32 master copy next to the 16-bit compute
  // copy (AMP, Megatron's 18 bytes/param), as opposed to "bf16-true".
  bool fp32_master_weights = false;
  bool double_quantization = false;  // NF4 only (QLoRA's nested quantization)

  Optimizer optimizer = Optimizer::kUnspecified;
  ActivationCheckpointing activation_checkpointing =
      ActivationCheckpointing::kUnspecified;
  AttentionImplementation attention = AttentionImplementation::kUnspecified;

  LossImplementation loss = LossImplementation::kUnspecified;
  SequencePacking packing = SequencePacking::kUnspecified;
  // PADDED_PER_BATCH only: mean padded tokens per sample, 1..sequence_length
  // (0 = unknown: the step time assumes sequence_length).
  int mean_tokens_per_sample = 0;
  TrainingFramework framework = TrainingFramework::kUnspecified;
  // Which peak the runs of this recipe report. Not part of the recipe key:
  // it describes the measurement, not the training, so that a plan request
  // and the runs that measure it share one key.
  PeakMemoryKind reported_peak = PeakMemoryKind::kUnspecified;
  // LoRA/QLoRA only (NormalizeRecipe: unspecified is LORA).
  AdapterType adapter = AdapterType::kUnspecified;

  int gpu_count = 0;
  Parallelism parallelism = Parallelism::kUnspecified;
  int tensor_parallel_degree = 0;    // 0 = derived by NormalizeRecipe
  int pipeline_parallel_degree = 0;  // 0 = derived by NormalizeRecipe
  int data_parallel_degree = 0;      // 0 = derived by NormalizeRecipe

  friend bool operator==(const Recipe&, const Recipe&) = default;
};

// Bounds shared by validation and the API documentation.
inline constexpr int kMaxSequenceLength = 1 << 20;  // 1,048,576
inline constexpr int kMaxMicroBatchSize = 4096;
inline constexpr int kMaxLoraRank = 4096;
inline constexpr int kMaxGpuCount = 4096;
inline constexpr int kMaxGradientAccumulation = 65536;
inline constexpr char kCustomModel[] = "custom";

// The canonical LoRA target module names, in canonical order.
const std::vector<std::string>& CanonicalTargetModules();

// Fills defaults and puts the recipe in canonical form, so that two recipes
// with equal settings compare equal and get the same RecipeKey:
//  - catalog model names take the catalog's spelling ("llama-3.1-8b" ->
//    "Llama-3.1-8B"); unknown names are left as given (ValidateRecipe
//    reports them);
//  - micro_batch_size, gradient_accumulation_steps, gpu_count default to 1;
//    attention to SDPA (what current frameworks run; every catalog SKU
//    supports it) and activation checkpointing to OFF (a planner reads the
//    request before normalizing to know that it may turn it on);
//    optimizer to AdamW; precision to NF4 for QLoRA and BF16 otherwise;
//    parallelism to SINGLE for one GPU and DDP for more;
//  - target modules are mapped to canonical names, "all-linear" expanded,
//    sorted in canonical order and deduplicated; LoRA defaults to {q, v};
//  - fields irrelevant to the method are cleared (rank and targets for
//    full/head-only; double quantization unless NF4; custom_architecture
//    unless the model is "custom");
//  - parallel degrees left at 0 are derived from gpu_count.
// Never fails; invalid input stays invalid.
Recipe NormalizeRecipe(Recipe recipe);

// The layout part of NormalizeRecipe: parallelism defaults to SINGLE for
// one GPU and DDP for more, degrees left at 0 are derived from gpu_count.
void NormalizeLayout(Recipe* recipe);

// The layout part of ValidateRecipe (gpu_count, parallelism, degrees, at
// most `num_layers` pipeline stages), for a recipe whose other fields are
// known valid.
FieldViolations ValidateLayout(const Recipe& recipe, int num_layers,
                               const std::string& field_prefix = "recipe.");

// Checks a recipe (normally after NormalizeRecipe). Returns one violation per
// broken rule with paths prefixed by `field_prefix` (e.g. "recipe."):
// unknown model; custom dimensions; sequence length 1..1,048,576; micro-batch
// 1..4096; rank 1..4096 for LoRA/QLoRA adapters with a rank (LORA, DORA,
// LOHA, VERA), unset for the others and for other methods; an adapter
// type only for LoRA/QLoRA; unknown target modules; QLoRA needs an
// NF4 base and NF4 needs QLoRA; full fine-tuning needs a float base (fp32,
// bf16, fp16, fp8); mean_tokens_per_sample only with PADDED_PER_BATCH and
// within 1..sequence_length (kept by NormalizeRecipe, so that a mean length
// on packed data is refused, not dropped); gpu_count 1..4096; degrees
// multiplying to gpu_count and matching the parallelism. Empty when valid.
FieldViolations ValidateRecipe(const Recipe& recipe,
                               const std::string& field_prefix = "recipe.");

// The architecture a (normalized) recipe trains: the catalog entry or the
// custom dimensions. NOT_FOUND for an unknown model name.
absl::StatusOr<ModelArchitecture> ResolveArchitecture(const Recipe& recipe);

// The canonical text of the settings that define "equal settings" for the
// equal-settings bake-off, e.g.
// "v1;model=Llama-3.1-8B;method=LORA;rank=16;targets=q,v;seq=2048;mb=4;ga=8;
//  precision=BF16;master32=0;dq=0;opt=ADAMW;ckpt=1;flash=1;par=SINGLE;gpus=1;
//  tp=1;pp=1;dp=1".
// Checkpointing: ON "ckpt=1", OFF "ckpt=0"; attention: FLASH "flash=1",
// SDPA "flash=0", EAGER "flash=eager". These are the texts of the former
// booleans: proto3 could not send "false", so a stored "flash=0" is a recipe
// that left attention to its framework (SDPA), and every stored key stays
// valid. Unspecified normalizes first: attention to SDPA, checkpointing to
// OFF ("ckpt=0").
// The input is normalized first. Independent of the SKU and the pool.
// Gradient accumulation IS part of it: a step is one optimizer step, and
// the GPU-hours per successful step (the ranking currency) scale with it.
std::string RecipeKeyText(const Recipe& recipe);

// A stable 64-bit FNV-1a hash of RecipeKeyText as "rk1-" + 16 lower-case hex
// digits. Stable across platforms, builds and runs (no std::hash).
std::string RecipeKey(const Recipe& recipe);

// One linear projection of a transformer layer: its input and output
// features.
struct Projection {
  int64_t in = 0;
  int64_t out = 0;
};

// The projection a canonical module name ("q", ..., "down") stands for;
// {0, 0} for "gate" on a non-gated MLP and for any other name.
Projection ProjectionOf(absl::string_view module, const ModelArchitecture& a);

// Trainable parameters of a recipe on its architecture: all for full
// fine-tuning, the output head for head-only; for LoRA/QLoRA by adapter
// type, per adapted projection of every layer: LORA r * (d_in + d_out), DORA
// that + d_out, LOHA twice LORA, VERA r + d_out, IA3 d_out (d_in for down,
// PEFT's feed-forward rescaling); LLAMA_ADAPTER 10 prompt vectors of
// hidden_size and one gate per head in every layer but the first two
// (LitGPT's adapter_prompt_length and adapter_start_layer defaults);
// LLAMA_ADAPTER_V2 that + a bias and a scale per output feature of every
// linear (the output head included) + every norm's weight.
int64_t TrainableParams(const Recipe& recipe, const ModelArchitecture& arch);

// LOHA only (0 otherwise): the elements of the full in x out update matrix
// that PEFT's LoHa builds per target module of a layer,
// (w1a w1b) * (w2a w2b), and applies as a matmul of its own.
int64_t LohaUpdateElementsPerLayer(const Recipe& recipe,
                                   const ModelArchitecture& arch);

// A one-line human description of the settings a bake-off must hold equal.
std::string DescribeSettings(const Recipe& recipe);

// The one textual form of each enum (core/enum_names.h), and its inverse:
// nullopt for a name that is not one of them.
const char* FineTuneMethodName(FineTuneMethod method);
std::optional<FineTuneMethod> ParseFineTuneMethod(absl::string_view name);
const char* PrecisionName(Precision precision);
std::optional<Precision> ParsePrecision(absl::string_view name);
const char* OptimizerName(Optimizer optimizer);
std::optional<Optimizer> ParseOptimizer(absl::string_view name);
const char* ParallelismName(Parallelism parallelism);
std::optional<Parallelism> ParseParallelism(absl::string_view name);
const char* LossImplementationName(LossImplementation loss);
std::optional<LossImplementation> ParseLossImplementation(
    absl::string_view name);
const char* SequencePackingName(SequencePacking packing);
std::optional<SequencePacking> ParseSequencePacking(absl::string_view name);
const char* TrainingFrameworkName(TrainingFramework framework);
std::optional<TrainingFramework> ParseTrainingFramework(absl::string_view name);
const char* PeakMemoryKindName(PeakMemoryKind kind);
std::optional<PeakMemoryKind> ParsePeakMemoryKind(absl::string_view name);
const char* AdapterTypeName(AdapterType adapter);
std::optional<AdapterType> ParseAdapterType(absl::string_view name);
const char* AttentionImplementationName(AttentionImplementation attention);
std::optional<AttentionImplementation> ParseAttentionImplementation(
    absl::string_view name);
const char* ActivationCheckpointingName(ActivationCheckpointing checkpointing);
std::optional<ActivationCheckpointing> ParseActivationCheckpointing(
    absl::string_view name);

// Whether the recipe recomputes activations (ON; OFF and unspecified do not).
bool RecomputesActivations(const Recipe& recipe);
// Whether attention materializes the score matrix (EAGER only; an
// unnormalized unspecified value is SDPA).
bool MaterializesAttentionScores(const Recipe& recipe);

// Whether the layout shards the model or activations across GPUs (tensor,
// pipeline, ZeRO-3, FSDP), i.e. opens collectives inside every step.
bool ShardsModel(const Recipe& recipe);

}  // namespace placement::core

#endif  // PLACEMENT_CORE_RECIPE_H_
