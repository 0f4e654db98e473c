#include "core/memory_model.h"

#include <algorithm>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"

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

bool IsQuantizedBase(Precision p) {
  return p == Precision::kFp8 || p == Precision::kInt8 || p == Precision::kNf4;
}

}  // namespace

const MemoryModelConstants& DefaultMemoryModelConstants() {
  static const MemoryModelConstants kConstants = [] {
    MemoryModelConstants c;
    // Saved tensors of one transformer block with SDPA/flash attention, per
    // token, counted from what autograd keeps: two norm inputs and outputs,
    // q, attention output (= o-proj input), the residual stream and the
    // attention statistics (about 7 hidden-sized tensors), k and v (2
    // KV-sized) and the SwiGLU MLP's gate, up, activation and product (4
    // MLP-sized; fc1 output and GELU output, 2, for a GELU MLP). This gives
    // ~40 x s*b*h bytes per layer for Llama-2-7B (LitGPT's rows imply ~44)
    // and ~42 for Llama-3.1-8B (stas00 measured 56 in HF eager, which also
    // keeps fp32 norm upcasts: ml-engineering training/performance/README.md).
    c.activation_hidden_multiple = 7;
    c.activation_mlp_multiple_gated = 4;
    c.activation_mlp_multiple_plain = 2;
    // Logits and cross-entropy working memory: bf16 logits upcast to fp32
    // plus the fp32 softmax gradient. stas00 measures "~6 x b*s*V bytes in
    // practice" for HF; unfused HF losses hold more, chunked losses (LitGPT,
    // torchtune) less.
    c.logits_bytes_per_token_vocab = 6;
    // CUDA context and kernels: 0.47-0.92 GiB on A100 with PyTorch 2.x
    // (stas00, ml-engineering training/performance/README.md).
    c.cuda_context_gb = 0.7;
    // torch.distributed / NCCL buffers after the first collective: about
    // 1.5 GiB (same source).
    c.nccl_buffers_gb = 1.6;
    // Reserved minus allocated: the caching allocator rounds and fragments
    // the short-lived tensors; 5-10% is the usual budget (AnswerDotAI
    // fsdp_qlora reserved vs allocated, PEFT MetaMathQA p99 reserved).
    c.allocator_slack_fraction = 0.05;
    return c;
  }();
  return kConstants;
}

MemoryBreakdown PredictPeakMemory(const Recipe& r, const ModelArchitecture& a,
                                  const MemoryModelConstants& c) {
  MemoryBreakdown m;
  const double n = static_cast<double>(a.Params());
  const double embeddings = static_cast<double>(a.EmbeddingParams());
  const double trainable = static_cast<double>(TrainableParams(r, a));
  const bool fp32 = r.precision == Precision::kFp32;
  const bool full = r.method == FineTuneMethod::kFull;
  const int tp = std::max(1, r.tensor_parallel_degree);
  const int pp = std::max(1, r.pipeline_parallel_degree);
  const int dp = std::max(1, r.data_parallel_degree);
  const double model_split = static_cast<double>(tp) * pp;

  // --- Weights. ---
  double weight_bytes;
  if (full) {
    // FP8 training (Transformer Engine) keeps bf16 weights plus fp8 copies.
    weight_bytes =
        r.precision == Precision::kFp8 ? n * 3 : n * BaseBytesPerParam(r);
  } else {
    const double base = BaseBytesPerParam(r);
    weight_bytes = IsQuantizedBase(r.precision)
                       ? (n - embeddings) * base + embeddings * 2
                       : n * base;
    if (r.method != FineTuneMethod::kHeadOnly) {
      weight_bytes += trainable * (fp32 || r.fp32_master_weights ? 4 : 2);
    }
  }
  double master_bytes = r.fp32_master_weights && full ? trainable * 4 : 0;
  if (r.fp32_master_weights && r.method == FineTuneMethod::kHeadOnly) {
    master_bytes = trainable * 4;
  }

  // --- Gradients and optimizer states of the trainable parameters. ---
  const double state_bytes = fp32 || r.fp32_master_weights ? 4 : 2;
  const double grad_bytes = trainable * state_bytes;
  double optimizer_bytes = 0;
  switch (r.optimizer) {
    case Optimizer::kAdamW:
      optimizer_bytes = trainable * 2 * state_bytes;
      break;
    case Optimizer::kAdamW8bit:
    case Optimizer::kPagedAdamW8bit:
      optimizer_bytes = trainable * 2;  // two 8-bit states
      break;
    case Optimizer::kSgd:
      optimizer_bytes = trainable * state_bytes;  // momentum
      break;
    case Optimizer::kUnspecified:
      break;
  }
  m.optimizer_may_page_to_cpu = r.optimizer == Optimizer::kPagedAdamW8bit;

  // --- Division by the layout. ---
  weight_bytes /= model_split;
  master_bytes /= model_split;
  double grads = grad_bytes / model_split;
  optimizer_bytes /= model_split;
  switch (r.parallelism) {
    case Parallelism::kZero2:
      grads /= dp;
      optimizer_bytes /= dp;
      master_bytes /= dp;
      break;
    case Parallelism::kZero3:
    case Parallelism::kFsdp: {
      // FSDP's MixedPrecision shards only the fp32 parameters and casts to
      // 16 bits on all-gather; DeepSpeed ZeRO-3 shards both copies
      // (its estimator: 18 bytes/param / D).
      if (r.parallelism == Parallelism::kFsdp && master_bytes > 0) {
        weight_bytes = 0;
      }
      grads /= dp;
      optimizer_bytes /= dp;
      master_bytes /= dp;
      weight_bytes /= dp;
      // The unsharded block being computed plus the prefetched next one
      // (FSDP BACKWARD_PRE; DeepSpeed's estimator budgets 4 x largest layer).
      if (dp > 1) {
        weight_bytes += 2 * static_cast<double>(a.LayerParams()) / tp *
                        (full ? 2 : std::max(1.0, BaseBytesPerParam(r)));
      }
      break;
    }
    default:
      break;
  }
  m.weights_gb = (weight_bytes + master_bytes) / kBytesPerGb;
  m.gradients_gb = grads / kBytesPerGb;
  m.optimizer_gb = optimizer_bytes / kBytesPerGb;

  // --- Activations. ---
  const double tokens =
      static_cast<double>(r.sequence_length) * r.micro_batch_size;
  const double element = fp32 ? 4 : 2;
  const double h = a.hidden_size;
  const double per_layer_elements =
      c.activation_hidden_multiple * h + 2.0 * a.KvDim() +
      (a.gated_mlp ? c.activation_mlp_multiple_gated
                   : c.activation_mlp_multiple_plain) *
          a.intermediate_size;
  double per_layer_bytes = per_layer_elements * element;
  if (MaterializesAttentionScores(r)) {
    // Scores, softmax and dropout mask: 5*a*s bytes per token per layer
    // (Korthikanti et al. 2022); flash attention never materializes them.
    per_layer_bytes +=
        5.0 * a.num_attention_heads * r.sequence_length * element / 2;
  }
  const double layers = (a.num_layers + pp - 1) / pp;
  // 1F1B: the first pipeline stage holds up to pp micro-batches in flight.
  const double in_flight =
      pp > 1 ? std::min(pp, std::max(1, r.gradient_accumulation_steps)) : 1;
  double activation_bytes;
  if (r.method == FineTuneMethod::kHeadOnly) {
    // No backward through the frozen backbone: only the final hidden states.
    activation_bytes = tokens * h * element;
  } else if (RecomputesActivations(r)) {
    // Each block keeps its input; one block is recomputed at a time.
    activation_bytes =
        tokens * (layers * h * element * in_flight + per_layer_bytes);
  } else {
    activation_bytes = tokens * per_layer_bytes * layers * in_flight;
  }
  activation_bytes /= tp;
  const double logits_bytes =
      c.logits_bytes_per_token_vocab * tokens * a.vocab_size / tp;
  m.activations_gb = activation_bytes / kBytesPerGb;
  m.logits_gb = logits_bytes / kBytesPerGb;

  // --- Fixed overheads. ---
  m.overhead_gb = c.cuda_context_gb +
                  (r.gpu_count > 1 ? c.nccl_buffers_gb : 0) +
                  c.allocator_slack_fraction * (m.activations_gb + m.logits_gb);
  m.total_gb = m.weights_gb + m.gradients_gb + m.optimizer_gb +
               m.activations_gb + m.logits_gb + m.overhead_gb;
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
      "weights %.1f GB + gradients %.1f GB + optimizer %.1f GB + activations "
      "%.1f GB + logits %.1f GB + overhead %.1f GB = %.1f GB",
      b.weights_gb, b.gradients_gb, b.optimizer_gb, b.activations_gb,
      b.logits_gb, b.overhead_gb, b.total_gb);
}

}  // namespace placement::core
