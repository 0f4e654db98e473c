#include "core/models/memory_model.h"

#include <algorithm>

#include "absl/base/attributes.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "core/models/installed_constants.h"
#include "core/models/memory_model_phases.h"

namespace placement::core {
namespace {

constexpr double kBytesPerGb = 1e9;

// NF4 storage per parameter (QLoRA, Dettmers et al. 2023, section 3): 4-bit
// codes plus one fp32 absmax per 64-weight block (0.5 bit/param); double
// quantization stores the absmax in 8 bits per block of 256 with an fp32
// second-level constant (8/64 + 32/(64*256) = 0.127 bit/param). Checked
// against LitGPT's nf4 vs nf4-dq rows (0.30 GB measured vs 0.31 GB predicted
// for Llama-2-7B).
constexpr double kNf4BytesPerParam = 0.5 + 0.5 / 8;
constexpr double kNf4DoubleQuantBytesPerParam =
    0.5 + (8.0 / 64 + 32.0 / (64 * 256)) / 8;

// Bytes per stored base parameter. Quantized and fp8 formats leave the
// embeddings, head and norms in bf16 (handled by the caller).
double BaseBytesPerParam(const Recipe& r) {
  switch (r.precision) {
    case Precision::kFp32:
      return 4;
    case Precision::kBf16:
    case Precision::kFp16:
      return 2;
    case Precision::kFp8:
    case Precision::kInt8:
      return 1;
    case Precision::kNf4:
      return r.double_quantization ? kNf4DoubleQuantBytesPerParam
                                   : kNf4BytesPerParam;
    case Precision::kUnspecified:
      break;
  }
  return 2;
}

// Whether the MLP's output projection (down / fc2) trains: only then does
// autograd keep its input (the MLP product) for the weight gradient; a
// frozen linear needs just its weight to pass the gradient on.
// PyTorch's mm saves each operand only for the other's gradient
// (autograd codegen's should_compute_output guards, pytorch issue 97575);
// bitsandbytes' MatMul4Bit (NF4) saves its input whenever it needs any
// gradient (autograd/_functions.py: ctx.tensors = (A, B)), frozen or not.
bool KeepsFrozenLinearInputs(const Recipe& r) {
  return r.method == FineTuneMethod::kFull || r.precision == Precision::kNf4;
}

bool TrainsMlpOutput(const Recipe& r) {
  if (KeepsFrozenLinearInputs(r)) return true;
  for (const std::string& module : r.target_modules) {
    if (module == "down" || module == "all-linear" || module == "all_linear" ||
        module == "all") {
      return true;
    }
  }
  return false;
}

// Whether the MLP's input projections (gate / up / fc1) train: only then
// does autograd keep their input (the second norm's output); the norm's own
// backward needs its input, not its output.
bool TrainsMlpInput(const Recipe& r) {
  if (KeepsFrozenLinearInputs(r)) return true;
  for (const std::string& module : r.target_modules) {
    if (module == "gate" || module == "up" || module == "all-linear" ||
        module == "all_linear" || module == "all") {
      return true;
    }
  }
  return false;
}

// What an adapter keeps for backward beyond LoRA's, per token of one
// layer, in elements of the activation width:
//  - DORA (PEFT dora.py): the result is (m/|W| - 1) * base(x) + m/|W| *
//    lora(x) * scale with the norm detached, so both products save their
//    tensor operand: the base and the LoRA outputs of each target module;
//  - LLAMA_ADAPTER_V2 (LitGPT adapter_v2.py): every linear returns
//    scale * (linear(x) + bias), which saves the pre-scale output for the
//    scale's gradient: one output of every linear layer.
double AdapterKeptElementsPerToken(const Recipe& r,
                                   const ModelArchitecture& a) {
  if (r.method != FineTuneMethod::kLora && r.method != FineTuneMethod::kQlora) {
    return 0;
  }
  double elements = 0;
  if (r.adapter == AdapterType::kDora) {
    for (const std::string& m : r.target_modules) {
      elements += 2.0 * static_cast<double>(ProjectionOf(m, a).out);
    }
  } else if (r.adapter == AdapterType::kLlamaAdapterV2) {
    for (const std::string& m : CanonicalTargetModules()) {
      elements += static_cast<double>(ProjectionOf(m, a).out);
    }
  }
  return elements;
}

bool IsQuantizedBase(Precision p) {
  return p == Precision::kFp8 || p == Precision::kInt8 || p == Precision::kNf4;
}

}  // namespace

const FrameworkMemoryProfile& MemoryModelConstants::Profile(
    TrainingFramework framework) const {
  const int index = static_cast<int>(framework);
  if (framework == TrainingFramework::kUnspecified || index < 0 ||
      index >= kTrainingFrameworkCount) {
    return frameworks[static_cast<int>(TrainingFramework::kOther)];
  }
  return frameworks[index];
}

namespace {

// What one transformer block saves for backward, per token.
void SetActivationPriors(MemoryModelConstants& c) {
  // Saved tensors of one transformer block with SDPA/flash attention, per
  // token, counted from what autograd keeps: two norm inputs and outputs,
  // q, attention output (= o-proj input), the residual stream and the
  // attention statistics (about 7 hidden-sized tensors), k and v (2
  // KV-sized) and the SwiGLU MLP's gate, up, activation and product (4
  // MLP-sized; fc1 output and GELU output, 2, for a GELU MLP). This gives
  // ~40 x s*b*h bytes per layer for Llama-2-7B and ~42 for Llama-3.1-8B
  // (stas00 measured 56 in HF eager, which also keeps fp32 norm upcasts:
  // ml-engineering training/performance/README.md). Not fitted: the
  // per-framework activation_scale carries what the count misses.
  c.activation_hidden_multiple = 7;
  c.activation_mlp_multiple_gated = 4;
  c.activation_mlp_multiple_plain = 2;
}

// What the logits and the loss hold, by loss implementation.
void SetLossPriors(MemoryModelConstants& c) {
  // Standard loss (transformers' loss_utils.ForCausalLMLoss): the bf16
  // logits (2 bytes, kept in the model output) are upcast to fp32 (4),
  // log_softmax saves its fp32 output (4), and its backward holds the
  // fp32 gradients of both (4 + 4) while every activation is still alive:
  // 14 bytes per token per vocabulary entry. Older versions add a
  // .contiguous() fp32 copy of the shifted logits (18). stas00's "~6 in
  // practice" (ml-engineering) counts the forward only.
  c.logits_bytes_standard = 14;
  // Chunked cross-entropy (torchtune's CEWithChunkedOutputLoss, LitGPT's
  // chunked_cross_entropy): the bf16 logits and each chunk's saved
  // log-softmax (fp32 in torchtune, bf16 in LitGPT) stay for backward,
  // the gradients exist one chunk at a time: ~6 bytes. torchtune's README
  // measures 51.0 -> 42.9 GiB switching to it on Llama-3.2-3B at 2 x 4096
  // tokens: 8.3 bytes per token per entry saved against the standard 14.
  c.logits_bytes_chunked = 6;
  // Fused linear + cross-entropy (Liger, torchtune's
  // LinearCrossEntropyLoss): logits exist one chunk at a time.
  c.logits_bytes_fused = 0.25;
}

// Working memory beyond the model states: NF4 dequantization, the
// optimizer step, the longest padded batch and the allocator.
void SetWorkingMemoryPriors(MemoryModelConstants& c) {
  // bitsandbytes dequantizes one weight at a time to bf16 for its matmul
  // (MatMul4Bit keeps the 4-bit weight for backward): for a 32-layer model
  // about one block's bf16 copy, 2/32 ~ 0.06 byte per quantized weight.
  // LitGPT's LoRA vs QLoRA rows suggest more (0.25-0.3): fitted.
  c.nf4_working_bytes_per_param = 0.0625;
  // torch.optim.AdamW (foreach): _foreach_sqrt(exp_avg_sq) and the
  // denominator are state-sized lists (torch/optim/adam.py).
  c.optimizer_step_temporaries = 1;
  // Dynamic padding: a run's longest batch is far above the mean padded
  // length (sample lengths are long-tailed; the longest of thousands of
  // batches is roughly the p99.9 of a log-normal with a coefficient of
  // variation of 0.5-0.7, about 3x the mean).
  c.padded_peak_length_factor = 3;
  // Reserved minus allocated: 5-10% is the usual budget (AnswerDotAI
  // fsdp_qlora reserved vs allocated); of the short-lived memory, more.
  c.reserved_slack_fraction = 0.10;
}

// What the card holds whatever the job: CUDA context and NCCL buffers.
void SetFixedOverheadPriors(MemoryModelConstants& c) {
  // CUDA context and kernels: 0.47-0.92 GiB on A100 with PyTorch 2.x
  // (stas00, ml-engineering training/performance/README.md).
  c.cuda_context_gb = 0.7;
  // torch.distributed / NCCL buffers after the first collective: about
  // 1.5 GiB (same source).
  c.nccl_buffers_gb = 1.6;
}

// The frameworks' default losses and how they set up a sharded job.
void SetFrameworkPriors(MemoryModelConstants& c) {
  // Default losses: HF Transformers' models upcast logits to fp32 before
  // the loss (modeling_llama.py), as do NeMo/Megatron (fp32 vocab-parallel
  // cross-entropy), Axolotl and DeepSpeed training loops (HF models);
  // LitGPT's finetune scripts use chunked_cross_entropy (litgpt/utils.py);
  // torchtune's recipes CEWithChunkedOutputLoss (its configs).
  for (FrameworkMemoryProfile& p : c.frameworks) {
    p.activation_scale = 1;
    p.default_loss = LossImplementation::kStandardFp32Upcast;
  }
  c.frameworks[static_cast<int>(TrainingFramework::kLitgpt)].default_loss =
      LossImplementation::kChunkedCrossEntropy;
  c.frameworks[static_cast<int>(TrainingFramework::kTorchtune)].default_loss =
      LossImplementation::kChunkedCrossEntropy;
  // Setting up a sharded job. LitGPT's finetune scripts (lora.py,
  // adapter.py, full.py with --devices > 1) build the model with
  // fabric.init_module(empty_init=...) on each GPU, wrap it in
  // FSDPStrategy(auto_wrap_policy={Block}, ...) and then load the full
  // checkpoint with fabric.load_raw: each rank holds the whole bf16
  // model next to its shard once. HF Accelerate (cpu_ram_efficient_loading,
  // meta-device init), DeepSpeed (zero.Init) and torchtune (meta device +
  // sharded load) never do.
  c.frameworks[static_cast<int>(TrainingFramework::kLitgpt)]
      .unsharded_setup_copies = 1;
}

}  // namespace

const MemoryModelConstants& AnalyticMemoryModelConstants() {
  static const MemoryModelConstants kConstants = [] {
    MemoryModelConstants c;
    SetActivationPriors(c);
    SetLossPriors(c);
    SetWorkingMemoryPriors(c);
    SetFixedOverheadPriors(c);
    SetFrameworkPriors(c);
    return c;
  }();
  return kConstants;
}

const MemoryModelConstants& ShippedMemoryModelConstants() {
  static const MemoryModelConstants kConstants = [] {
    MemoryModelConstants c = AnalyticMemoryModelConstants();
    // Fitted (core/fitting/model_fit.h: robust least squares in log space,
    // shrunk toward the analytic values above) to every usable row of the
    // calibration files (tests/core/testdata: 57 measured peaks and 30
    // published ran/OOM verdicts); the cross-validation test re-fits them
    // and fails if they drift. In parentheses: the rows whose prediction
    // each one moves. Profiles without such rows (torchtune, NeMo, Axolotl,
    // DeepSpeed) keep the analytic 1.
    c.logits_bytes_standard = 14.17;          // (22: unsloth, LLaMA-Factory,
                                              // PEFT) prior 14
    c.logits_bytes_chunked = 6.352;           // (26: LitGPT, llm-foundry)
    c.nf4_working_bytes_per_param = 0.07647;  // (22) prior 0.0625
    c.optimizer_step_temporaries = 0.9017;    // (1) prior 1
    c.padded_peak_length_factor = 3.125;      // (8, PEFT MetaMathQA) prior 3
    c.reserved_slack_fraction = 0.1304;       // (25) prior 0.10
    FrameworkMemoryProfile& hf =
        c.frameworks[static_cast<int>(TrainingFramework::kHfTransformersPeft)];
    hf.activation_scale = 1.026;   // (8: PEFT MetaMathQA, LLaMA-Factory)
    hf.nf4_working_scale = 1.067;  // (8)
    FrameworkMemoryProfile& litgpt =
        c.frameworks[static_cast<int>(TrainingFramework::kLitgpt)];
    litgpt.activation_scale = 1.195;   // (29: LitGPT resource tables,
                                       // config_hub)
    litgpt.nf4_working_scale = 1.159;  // (13)
    c.frameworks[static_cast<int>(TrainingFramework::kOther)]
        .nf4_working_scale = 0.9891;  // (1: LLaMA-Factory's Unsloth row)
    return c;
  }();
  return kConstants;
}

namespace {
ABSL_CONST_INIT InstalledConstants<MemoryModelConstants>
    installed_memory_constants;
}  // namespace

const MemoryModelConstants& DefaultMemoryModelConstants() {
  const MemoryModelConstants* installed = installed_memory_constants.Get();
  return installed != nullptr ? *installed : ShippedMemoryModelConstants();
}

void SetDefaultMemoryModelConstants(const MemoryModelConstants& constants) {
  installed_memory_constants.Install(constants);
}

LossImplementation EffectiveLoss(const Recipe& r,
                                 const MemoryModelConstants& c) {
  if (r.loss != LossImplementation::kUnspecified) return r.loss;
  return c.Profile(r.framework).default_loss;
}

double PeakSequenceLength(const Recipe& r, const MemoryModelConstants& c) {
  if (r.packing == SequencePacking::kPaddedPerBatch &&
      r.mean_tokens_per_sample > 0) {
    return std::min<double>(r.sequence_length, c.padded_peak_length_factor *
                                                   r.mean_tokens_per_sample);
  }
  return r.sequence_length;
}

namespace memory_model_internal {

RecipeShape ShapeOf(const Recipe& r, const ModelArchitecture& a) {
  RecipeShape s;
  s.params = static_cast<double>(a.Params());
  s.embedding_params = static_cast<double>(a.EmbeddingParams());
  s.trainable_params = static_cast<double>(TrainableParams(r, a));
  s.fp32 = r.precision == Precision::kFp32;
  // Lightning's "bf16-mixed" (autocast over the fp32 model), or FSDP's
  // MixedPrecision over a model loaded in fp32: weights, adapters,
  // gradients and states are fp32; the matmuls and what they save for
  // backward are 16-bit.
  s.fp32_base_16bit_compute = s.fp32 && r.fp32_master_weights;
  s.full = r.method == FineTuneMethod::kFull;
  s.tp = std::max(1, r.tensor_parallel_degree);
  s.pp = std::max(1, r.pipeline_parallel_degree);
  s.dp = std::max(1, r.data_parallel_degree);
  s.model_split = static_cast<double>(s.tp) * s.pp;
  s.data_sharded = (r.parallelism == Parallelism::kZero3 ||
                    r.parallelism == Parallelism::kFsdp) &&
                   s.dp > 1;
  return s;
}

// --- Weights. ---

double StoredWeightBytes(const Recipe& r, const RecipeShape& s) {
  const double n = s.params;
  if (s.full) {
    // FP8 training (Transformer Engine) keeps bf16 weights plus fp8 copies.
    return r.precision == Precision::kFp8 ? n * 3 : n * BaseBytesPerParam(r);
  }
  const double base = BaseBytesPerParam(r);
  double weight_bytes =
      IsQuantizedBase(r.precision)
          ? (n - s.embedding_params) * base + s.embedding_params * 2
          : n * base;
  if (r.method != FineTuneMethod::kHeadOnly) {
    weight_bytes +=
        s.trainable_params * (s.fp32 || r.fp32_master_weights ? 4 : 2);
  }
  return weight_bytes;
}

double MasterWeightBytes(const Recipe& r, const RecipeShape& s) {
  if (r.fp32_master_weights &&
      (s.full || r.method == FineTuneMethod::kHeadOnly)) {
    return s.trainable_params * 4;
  }
  return 0;
}

double Nf4WorkingBytesPerGpu(const Recipe& r, const MemoryModelConstants& c,
                             const RecipeShape& s) {
  if (r.precision != Precision::kNf4) return 0;
  double dequantized_bytes = c.nf4_working_bytes_per_param *
                             c.Profile(r.framework).nf4_working_scale *
                             (s.params - s.embedding_params) / s.model_split;
  if (r.parallelism == Parallelism::kZero3 ||
      r.parallelism == Parallelism::kFsdp) {
    dequantized_bytes /= s.dp;
  }
  return dequantized_bytes;
}

// --- Gradients and optimizer states of the trainable parameters. ---

namespace {
double StateBytesPerParam(const Recipe& r, const RecipeShape& s) {
  return s.fp32 || r.fp32_master_weights ? 4 : 2;
}
}  // namespace

double GradientBytes(const Recipe& r, const RecipeShape& s) {
  return s.trainable_params * StateBytesPerParam(r, s);
}

ModelStateBytes OptimizerStateBytes(const Recipe& r, const RecipeShape& s) {
  const double trainable = s.trainable_params;
  const double state_bytes = StateBytesPerParam(r, s);
  ModelStateBytes states;
  switch (r.optimizer) {
    case Optimizer::kAdamW:
      states.optimizer = trainable * 2 * state_bytes;
      states.one_state = trainable * state_bytes;
      break;
    case Optimizer::kAdamW8bit:
    case Optimizer::kPagedAdamW8bit:
      states.optimizer = trainable * 2;  // two 8-bit states
      states.one_state = trainable;
      break;
    case Optimizer::kSgd:
      states.optimizer = trainable * state_bytes;  // momentum
      states.one_state = trainable * state_bytes;
      break;
    case Optimizer::kUnspecified:
      break;
  }
  return states;
}

ModelStateBytes WholeModelStates(const Recipe& r, const RecipeShape& s) {
  ModelStateBytes whole = OptimizerStateBytes(r, s);
  whole.weights = StoredWeightBytes(r, s);
  whole.master = MasterWeightBytes(r, s);
  whole.gradients = GradientBytes(r, s);
  return whole;
}

// --- Division by the layout. ---

ModelStateBytes ShardByLayout(const Recipe& r, const ModelArchitecture& a,
                              const RecipeShape& s, ModelStateBytes whole) {
  ModelStateBytes g;  // this GPU's
  g.weights = whole.weights / s.model_split;
  g.master = whole.master / s.model_split;
  // The whole model in its stored 16-bit (or quantized) form, on this
  // GPU's tensor/pipeline share, before any data-parallel sharding.
  g.unsharded_model = g.weights;
  g.gradients = whole.gradients / s.model_split;
  g.optimizer = whole.optimizer / s.model_split;
  g.one_state = whole.one_state / s.model_split;
  const int dp = s.dp;
  switch (r.parallelism) {
    case Parallelism::kZero2:
      g.gradients /= dp;
      g.optimizer /= dp;
      g.one_state /= dp;
      g.master /= dp;
      break;
    case Parallelism::kZero3:
    case Parallelism::kFsdp: {
      // FSDP's MixedPrecision shards only the fp32 parameters and casts to
      // 16 bits on all-gather; DeepSpeed ZeRO-3 shards both copies
      // (its estimator: 18 bytes/param / D).
      if (r.parallelism == Parallelism::kFsdp && g.master > 0) {
        g.weights = 0;
      }
      g.gradients /= dp;
      g.optimizer /= dp;
      g.one_state /= dp;
      g.master /= dp;
      g.weights /= dp;
      // The unsharded block being computed plus the prefetched next one
      // (FSDP BACKWARD_PRE; DeepSpeed's estimator budgets 4 x largest layer).
      // FSDP's MixedPrecision gathers them in its 16-bit param_dtype.
      if (dp > 1) {
        g.weights += 2 * static_cast<double>(a.LayerParams()) / s.tp *
                     (s.full || s.fp32_base_16bit_compute
                          ? 2
                          : std::max(1.0, BaseBytesPerParam(r)));
      }
      break;
    }
    default:
      break;
  }
  return g;
}

// --- Activations. ---

namespace {
// Bytes of one saved activation element: 16-bit, or 32 when fp32 computes.
double ActivationElementBytes(const RecipeShape& s) {
  return s.fp32 && !s.fp32_base_16bit_compute ? 4 : 2;
}

// The layers of the first pipeline stage, and the micro-batches 1F1B holds
// in flight there (up to pp).
double SavedLayers(const ModelArchitecture& a, const RecipeShape& s) {
  return (a.num_layers + s.pp - 1) / s.pp;  // whole layers per stage
}

double InFlightMicroBatches(const Recipe& r, const RecipeShape& s) {
  return s.pp > 1 ? std::min(s.pp, std::max(1, r.gradient_accumulation_steps))
                  : 1;
}

double PeakTokens(const Recipe& r, const MemoryModelConstants& c) {
  return PeakSequenceLength(r, c) * r.micro_batch_size;
}
}  // namespace

double SavedBytesPerTokenPerLayer(const Recipe& r, const ModelArchitecture& a,
                                  const MemoryModelConstants& c,
                                  const RecipeShape& s) {
  const double peak_length = PeakSequenceLength(r, c);
  const double element = ActivationElementBytes(s);
  const double h = a.hidden_size;
  // The MLP multiple counts the output projection's input; with that
  // projection frozen (adapters elsewhere) it is not kept.
  const double mlp_multiple = (a.gated_mlp ? c.activation_mlp_multiple_gated
                                           : c.activation_mlp_multiple_plain) -
                              (TrainsMlpOutput(r) ? 0 : 1);
  const double hidden_multiple =
      c.activation_hidden_multiple - (TrainsMlpInput(r) ? 0 : 1);
  const double per_layer_elements = hidden_multiple * h + 2.0 * a.KvDim() +
                                    mlp_multiple * a.intermediate_size +
                                    AdapterKeptElementsPerToken(r, a);
  double per_layer_bytes = per_layer_elements * element;
  if (MaterializesAttentionScores(r)) {
    // Scores, softmax and dropout mask: 5*a*s bytes per token per layer
    // (Korthikanti et al. 2022); flash attention never materializes them.
    per_layer_bytes += 5.0 * a.num_attention_heads * peak_length * element / 2;
  }
  return per_layer_bytes * c.Profile(r.framework).activation_scale;
}

ActivationBytes BlockActivations(const Recipe& r, const ModelArchitecture& a,
                                 const MemoryModelConstants& c,
                                 const RecipeShape& s) {
  const double tokens = PeakTokens(r, c);
  const double element = ActivationElementBytes(s);
  const double per_layer_bytes = SavedBytesPerTokenPerLayer(r, a, c, s);
  const double layers = SavedLayers(a, s);
  const double in_flight = InFlightMicroBatches(r, s);
  ActivationBytes b;
  b.backward_working = tokens * per_layer_bytes;  // one block in backward
  if (r.method == FineTuneMethod::kHeadOnly) {
    // No backward through the frozen backbone: only the final hidden states.
    b.saved = tokens * a.hidden_size * element;
    b.backward_working = 0;
  } else if (RecomputesActivations(r)) {
    // Each block keeps its input; one block is recomputed at a time.
    b.saved = tokens * layers * a.hidden_size * element * in_flight;
  } else {
    b.saved = tokens * per_layer_bytes * layers * in_flight;
  }
  return b;
}

ActivationBytes LohaUpdateBytes(const Recipe& r, const ModelArchitecture& a,
                                const RecipeShape& s) {
  // PEFT's LoHa update of each target module, (w1a w1b) * (w2a w2b), is a
  // full in x out matrix whose Hadamard product saves both factors for its
  // gradient: twice the update per layer, whatever the batch. A recomputed
  // block rebuilds them while it is recomputed.
  const double loha_layer_bytes =
      2.0 * static_cast<double>(LohaUpdateElementsPerLayer(r, a)) *
      ActivationElementBytes(s);
  ActivationBytes b;
  if (RecomputesActivations(r)) {
    b.backward_working = loha_layer_bytes;
  } else {
    b.saved = loha_layer_bytes * SavedLayers(a, s) * InFlightMicroBatches(r, s);
  }
  return b;
}

ActivationBytes AutocastWeightCastBytes(const Recipe& r,
                                        const ModelArchitecture& a,
                                        const RecipeShape& s) {
  // Autocast over fp32 weights hands every matmul a 16-bit cast of its
  // weight, and the matmul saves that cast for its input's gradient
  // (frozen or not: the mm backward needs the other operand), so until
  // backward reaches a block its weights exist a second time in 16 bits:
  // 2 B per matmul weight (the input embedding is a lookup, not cast;
  // a tied head is). Freed with the block's activations; a recomputed
  // block holds its casts only while it is recomputed. Under FSDP the
  // casts are the gathered blocks, counted with the weights.
  ActivationBytes b;
  if (!s.fp32_base_16bit_compute || s.data_sharded ||
      r.method == FineTuneMethod::kHeadOnly) {
    return b;
  }
  const double h = a.hidden_size;
  const double head = static_cast<double>(a.vocab_size) * h;
  const double cast_params =
      s.params - (a.tied_embeddings ? 0 : head);  // every matmul weight
  if (RecomputesActivations(r)) {
    b.backward_working = 2 * static_cast<double>(a.LayerParams());
  } else {
    b.saved = 2 * cast_params / s.pp;
  }
  return b;
}

double LogitsBytesPerGpu(const Recipe& r, const ModelArchitecture& a,
                         const MemoryModelConstants& c, const RecipeShape& s) {
  double logits_per_token_vocab = c.logits_bytes_standard;
  switch (EffectiveLoss(r, c)) {
    case LossImplementation::kChunkedCrossEntropy:
      logits_per_token_vocab = c.logits_bytes_chunked;
      break;
    case LossImplementation::kFusedLinearCrossEntropy:
      logits_per_token_vocab = c.logits_bytes_fused;
      break;
    default:
      break;
  }
  // Only the last pipeline stage computes the loss; it holds one
  // micro-batch's logits.
  return logits_per_token_vocab * PeakTokens(r, c) * a.vocab_size / s.tp;
}

ActivationBytes ActivationsPerGpu(const Recipe& r, const ModelArchitecture& a,
                                  const MemoryModelConstants& c,
                                  const RecipeShape& s) {
  // Each term is 0 where it does not apply, so the sums add what applies in
  // the same order as before any split.
  const ActivationBytes blocks = BlockActivations(r, a, c, s);
  const ActivationBytes loha = LohaUpdateBytes(r, a, s);
  const ActivationBytes casts = AutocastWeightCastBytes(r, a, s);
  ActivationBytes g;
  g.saved = (blocks.saved + loha.saved + casts.saved) / s.tp;
  g.backward_working = (blocks.backward_working + loha.backward_working +
                        casts.backward_working) /
                       s.tp;
  g.logits = LogitsBytesPerGpu(r, a, c, s);
  return g;
}

double OptimizerStepWorkingBytes(const MemoryModelConstants& c,
                                 const ModelStateBytes& per_gpu) {
  return c.optimizer_step_temporaries * per_gpu.one_state;
}

MemoryBreakdown TermsOf(const ModelStateBytes& g, double nf4_working_bytes,
                        const ActivationBytes& activations,
                        double optimizer_step_working_bytes) {
  MemoryBreakdown m;
  m.weights_gb = (g.weights + g.master + nf4_working_bytes) / kBytesPerGb;
  m.gradients_gb = g.gradients / kBytesPerGb;
  m.optimizer_gb = g.optimizer / kBytesPerGb;
  m.activations_gb = activations.saved / kBytesPerGb;
  m.logits_gb = activations.logits / kBytesPerGb;
  m.backward_working_gb = activations.backward_working / kBytesPerGb;
  m.optimizer_step_working_gb = optimizer_step_working_bytes / kBytesPerGb;
  return m;
}

// --- The phases of a step. ---

namespace {
// What lives through every phase: weights and optimizer states.
double PersistentGb(const MemoryBreakdown& m) {
  return m.weights_gb + m.optimizer_gb;
}

double ReportedGb(const Recipe& r, const MemoryBreakdown& m) {
  switch (r.reported_peak) {
    case PeakMemoryKind::kAllocated:
      return m.allocated_gb;
    case PeakMemoryKind::kReserved:
      return m.reserved_gb;
    default:
      return m.device_gb;
  }
}
}  // namespace

// Gradients are set to None after every optimizer step (PyTorch >= 2.0
// zero_grad default), so with one micro-batch per step they do not exist
// during forward; with accumulation they persist across micro-batches.
double ForwardPhaseGb(const Recipe& r, const MemoryBreakdown& m) {
  const bool accumulates = r.gradient_accumulation_steps > 1;
  return PersistentGb(m) + (accumulates ? m.gradients_gb : 0) +
         m.activations_gb + m.logits_gb;
}

// Backward walks from the last block to the first: block i's activations
// are freed as its gradients appear, so the sum of the two peaks at one
// end (all activations, or all gradients).
double BackwardPhaseGb(const Recipe& r, const MemoryBreakdown& m) {
  const bool accumulates = r.gradient_accumulation_steps > 1;
  return PersistentGb(m) +
         (accumulates ? m.gradients_gb + m.activations_gb
                      : std::max(m.activations_gb, m.gradients_gb)) +
         m.backward_working_gb;
}

double OptimizerStepPhaseGb(const MemoryBreakdown& m) {
  return PersistentGb(m) + m.gradients_gb + m.optimizer_step_working_gb;
}

// Setup of a sharded job by a framework that builds it unsharded first:
// its shard (weights_gb) plus the whole model, before any optimizer state
// or activation exists.
double ModelSetupPhaseGb(const Recipe& r, const MemoryModelConstants& c,
                         const RecipeShape& s, const MemoryBreakdown& m,
                         double unsharded_model_bytes) {
  const FrameworkMemoryProfile& profile = c.Profile(r.framework);
  return s.data_sharded && profile.unsharded_setup_copies > 0
             ? m.weights_gb + profile.unsharded_setup_copies *
                                  unsharded_model_bytes / kBytesPerGb
             : 0;
}

void SelectPeakPhase(MemoryBreakdown& m) {
  m.allocated_gb = m.forward_gb;
  m.peak_phase = MemoryPhase::kForward;
  if (m.backward_gb > m.allocated_gb) {
    m.allocated_gb = m.backward_gb;
    m.peak_phase = MemoryPhase::kBackward;
  }
  if (m.optimizer_step_gb > m.allocated_gb) {
    m.allocated_gb = m.optimizer_step_gb;
    m.peak_phase = MemoryPhase::kOptimizerStep;
  }
  if (m.model_setup_gb > m.allocated_gb) {
    m.allocated_gb = m.model_setup_gb;
    m.peak_phase = MemoryPhase::kModelSetup;
  }
}

double ReservedGb(const MemoryModelConstants& c, const MemoryBreakdown& m) {
  const double persistent = PersistentGb(m);
  double reserved = 0;
  for (double phase : {m.forward_gb, m.backward_gb, m.optimizer_step_gb}) {
    reserved = std::max(
        reserved, phase + c.reserved_slack_fraction * (phase - persistent));
  }
  // At setup the unsharded copy is the short-lived memory.
  return std::max(
      reserved,
      m.model_setup_gb + c.reserved_slack_fraction *
                             std::max(0.0, m.model_setup_gb - m.weights_gb));
}

double FixedOverheadGb(const Recipe& r, const MemoryModelConstants& c) {
  return c.cuda_context_gb + (r.gpu_count > 1 ? c.nccl_buffers_gb : 0);
}

void ComposePhases(const Recipe& r, const MemoryModelConstants& c,
                   const RecipeShape& s, double unsharded_model_bytes,
                   MemoryBreakdown& m) {
  m.forward_gb = ForwardPhaseGb(r, m);
  m.backward_gb = BackwardPhaseGb(r, m);
  m.optimizer_step_gb = OptimizerStepPhaseGb(m);
  m.model_setup_gb = ModelSetupPhaseGb(r, c, s, m, unsharded_model_bytes);
  SelectPeakPhase(m);
  m.reserved_gb = ReservedGb(c, m);
  m.device_gb = m.reserved_gb + FixedOverheadGb(r, c);
  m.overhead_gb = m.device_gb - m.allocated_gb;
  m.reported_gb = ReportedGb(r, m);
  m.total_gb = m.device_gb;
}

}  // namespace memory_model_internal

MemoryBreakdown PredictPeakMemory(const Recipe& r, const ModelArchitecture& a,
                                  const MemoryModelConstants& c) {
  namespace phases = memory_model_internal;
  const phases::RecipeShape shape = phases::ShapeOf(r, a);
  const phases::ModelStateBytes per_gpu =
      phases::ShardByLayout(r, a, shape, phases::WholeModelStates(r, shape));
  MemoryBreakdown m =
      phases::TermsOf(per_gpu, phases::Nf4WorkingBytesPerGpu(r, c, shape),
                      phases::ActivationsPerGpu(r, a, c, shape),
                      phases::OptimizerStepWorkingBytes(c, per_gpu));
  m.optimizer_may_page_to_cpu = r.optimizer == Optimizer::kPagedAdamW8bit;
  phases::ComposePhases(r, c, shape, per_gpu.unsharded_model, m);
  return m;
}

absl::StatusOr<MemoryBreakdown> PredictPeakMemory(const Recipe& recipe) {
  const FieldViolations violations = ValidateRecipe(recipe);
  // Every violation, not the first: the caller names each bad field.
  if (!violations.empty()) return InvalidArgumentWithViolations(violations);
  absl::StatusOr<ModelArchitecture> arch = ResolveArchitecture(recipe);
  if (!arch.ok()) return arch.status();
  return PredictPeakMemory(recipe, *arch, DefaultMemoryModelConstants());
}

std::string DescribeBreakdown(const MemoryBreakdown& b) {
  return absl::StrFormat(
      "peak at %s: weights %.1f GB, gradients %.1f GB, optimizer %.1f GB, "
      "activations %.1f GB, logits %.1f GB, backward working %.1f GB, "
      "optimizer step working %.1f GB; allocated %.1f GB (forward %.1f, "
      "backward %.1f, optimizer step %.1f%s), reserved %.1f GB, on the "
      "device %.1f GB",
      MemoryPhaseName(b.peak_phase), b.weights_gb, b.gradients_gb,
      b.optimizer_gb, b.activations_gb, b.logits_gb, b.backward_working_gb,
      b.optimizer_step_working_gb, b.allocated_gb, b.forward_gb, b.backward_gb,
      b.optimizer_step_gb,
      b.model_setup_gb > 0
          ? absl::StrFormat(", model setup %.1f", b.model_setup_gb)
          : std::string(),
      b.reserved_gb, b.device_gb);
}

const char* MemoryPhaseName(MemoryPhase phase) {
  switch (phase) {
    case MemoryPhase::kForward:
      return "FORWARD";
    case MemoryPhase::kBackward:
      return "BACKWARD";
    case MemoryPhase::kOptimizerStep:
      return "OPTIMIZER_STEP";
    case MemoryPhase::kModelSetup:
      return "MODEL_SETUP";
    case MemoryPhase::kUnspecified:
      break;
  }
  return "UNSPECIFIED";
}

}  // namespace placement::core
