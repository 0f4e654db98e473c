#include "core/models/step_time_model.h"

#include <algorithm>
#include <cmath>

#include "absl/base/attributes.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "core/models/installed_constants.h"
#include "core/models/step_time_model_phases.h"

namespace placement::core {
namespace {

// NCCL bus bandwidth reached over NVLink as a share of the datasheet's
// bidirectional NVLink figure: A100 SXM all-reduce busbw ~230 GB/s of 600,
// H100 SXM ~360-450 of 900 (nccl-tests results published by NVIDIA/cloud
// vendors).
constexpr double kNvlinkEfficiency = 0.4;
// Per-direction PCIe x16 bandwidth: 16 GB/s for gen3, doubling per
// generation; NCCL over the host bridge (no P2P on many PCIe servers, e.g.
// L40S) reaches about half of it.
constexpr double kPcieEfficiency = 0.5;
// Between nodes, per GPU, by kind. InfiniBand: one 200 Gb/s HDR NIC per GPU
// (DGX A100 / HGX reference designs) = 25 GB/s, of which NCCL reaches ~80%.
// RoCE: the same NICs over Ethernet, ~70% (congestion control, no
// adaptive routing). Ethernet without RDMA: NCCL's socket transport over a
// 100 Gb/s NIC shared by the node's 8 GPUs, ~50%: 0.78 GB/s per GPU; it is
// also what a pool that never declared its fabric is assumed to have.
constexpr double kInfinibandGbSPerGpu = 20;
constexpr double kRoceGbSPerGpu = 17.5;
constexpr double kEthernetGbSPerGpu = 0.78;
// The FLOP-to-byte ratio at which the ridge factor is 1 (an A10 or an
// A100-40GB: 125 / 0.6 and 312 / 1.555 TFLOPs per TB/s).
constexpr double kReferenceFlopsPerByte = 200;
// Achievable share of HBM/GDDR bandwidth for the streaming optimizer update.
constexpr double kMemoryBandwidthEfficiency = 0.7;

double MatmulParams(const ModelArchitecture& a) {
  // Transformer blocks plus the output head; the input embedding is a
  // lookup, not a matmul.
  return static_cast<double>(a.num_layers) * a.LayerParams() +
         static_cast<double>(a.vocab_size) * a.hidden_size;
}

}  // namespace

double StepTimeModelConstants::SkuFactor(const GpuSku& sku) const {
  auto it = sku_family_factor.find(sku.family);
  const double family = it == sku_family_factor.end() ? 1 : it->second;
  const double ratio = std::max(1.0, sku.bf16_dense_tflops) /
                       std::max(0.001, sku.memory_bandwidth_gb_s / 1000);
  return family * std::pow(ratio / kReferenceFlopsPerByte, -ridge_exponent);
}

double StepTimeModelConstants::MethodFactor(FineTuneMethod method) const {
  switch (method) {
    case FineTuneMethod::kFull:
      return full_factor;
    case FineTuneMethod::kLora:
    case FineTuneMethod::kQlora:
      return adapter_factor;
    case FineTuneMethod::kHeadOnly:
      return head_only_factor;
    case FineTuneMethod::kUnspecified:
      break;
  }
  return 1;
}

const StepTimeModelConstants& AnalyticStepTimeModelConstants() {
  static const StepTimeModelConstants kConstants = [] {
    StepTimeModelConstants c;
    // Large matmuls with the fixed per-layer overhead counted apart (below):
    // Megatron-LM with selective recompute reaches MFU 52-56% on A100 for
    // 175B-1T GPT models (Korthikanti et al. 2022, "Reducing Activation
    // Recomputation in Large Transformer Models", table of MFU); torchtitan
    // Llama-3.1-8B on H100 33-39% (a card with a higher FLOP-to-byte ratio,
    // see the ridge factor). Neither publication is among the rows the
    // constants are fitted to. Every SKU and method factor starts at 1.
    c.base_mfu = kAssumedMfu;
    // The ridge exponent's prior is nearly flat (0.1: efficiency barely
    // depends on the FLOP-to-byte ratio); the data decide.
    c.ridge_exponent = 0.1;
    // bitsandbytes' dequantize_4bit reads 0.5 byte and writes 2 bytes of
    // bf16 per weight: 2.5 bytes of memory traffic per weight per pass.
    c.nf4_dequant_bytes_per_param = 2.5;
    // Data-parallel collectives overlap with backward (DDP buckets, FSDP
    // prefetch); half of them exposed is the prior. Tensor-parallel
    // all-reduces sit between dependent matmuls and are fully exposed.
    c.data_parallel_exposed_fraction = 0.5;
    // A PyTorch eager decoder block launches ~25 kernels forward and ~50
    // backward (norms, projections, rotary, attention, activation,
    // residuals, LoRA branches); at ~10 us of launch and dispatch each when
    // the kernels are too small to hide it: ~0.75 ms per layer per
    // micro-batch.
    c.layer_overhead_s = 0.75e-3;
    // FP8 linears: Transformer Engine and torchao scale and cast every
    // operand; NVIDIA's and torchtitan's FP8 runs train 1.3-1.5x faster
    // than bf16 ones, not the datasheet's 2x: 0.65 of the bf16 efficiency
    // at twice the rate.
    c.fp8_factor = 0.65;
    // HF eager attention per score element and layer: the bf16 scores
    // written (2 B), the mask added (4), the fp32 softmax read and written
    // (6), cast back (6), read by the values' product (2): 20 bytes
    // forward, about twice that backward.
    c.eager_attention_bytes_per_score = 60;
    // An adapter branch launches ~5 kernels forward and ~10 backward (the
    // layer overhead's ~10 us each): 0.15 ms per adapted module per layer.
    c.adapter_module_overhead_s = 0.15e-3;
    return c;
  }();
  return kConstants;
}

const StepTimeModelConstants& ShippedStepTimeModelConstants() {
  static const StepTimeModelConstants kConstants = [] {
    StepTimeModelConstants c = AnalyticStepTimeModelConstants();
    // Fitted (core/fitting/model_fit.h) to the 55 published throughput rows
    // of the calibration files (PEFT MetaMathQA on L40S, LLaMA-Factory's
    // comparison on A100, llm-foundry on A100 and H100, fms-fsdp on A100
    // and H100, NeMo's FP8 summary on H100, torchtitan on H100 and H200);
    // the cross-validation test re-fits them and fails if they drift. SKU
    // families without rows keep factor 1 (their ridge factor still follows
    // their datasheet); the NF4 dequantization traffic and the eager
    // attention traffic are informed by LLaMA-Factory's rows only and stay
    // near their priors.
    c.ridge_exponent = 0.1195;                  // (55 rows) prior 0.1
    c.full_factor = 1.114;                      // (40) prior 1
    c.adapter_factor = 0.9352;                  // (15) prior 1
    c.nf4_dequant_bytes_per_param = 2.504;      // (2) prior 2.5
    c.layer_overhead_s = 0.7820e-3;             // (55) prior 0.75 ms
    c.data_parallel_exposed_fraction = 0.2880;  // (40) prior 0.5
    c.fp8_factor = 0.7836;                      // (15) prior 0.65
    c.eager_attention_bytes_per_score = 63.57;  // (2) prior 60
    c.adapter_module_overhead_s = 0.1546e-3;    // (15) prior 0.15 ms
    c.sku_family_factor = {
        {"A100", 1.101},   // (19)
        {"H100", 1.042},   // (26)
        {"H200", 1.031},   // (2)
        {"L40S", 0.8804},  // (8)
    };
    return c;
  }();
  return kConstants;
}

namespace {
ABSL_CONST_INIT InstalledConstants<StepTimeModelConstants>
    installed_step_time_constants;
}  // namespace

const StepTimeModelConstants& DefaultStepTimeModelConstants() {
  const StepTimeModelConstants* installed = installed_step_time_constants.Get();
  return installed != nullptr ? *installed : ShippedStepTimeModelConstants();
}

void SetDefaultStepTimeModelConstants(const StepTimeModelConstants& constants) {
  installed_step_time_constants.Install(constants);
}

double ComputedTokensPerMicroBatch(const Recipe& r) {
  const double length = r.packing == SequencePacking::kPaddedPerBatch &&
                                r.mean_tokens_per_sample > 0
                            ? r.mean_tokens_per_sample
                            : r.sequence_length;
  return length * r.micro_batch_size;
}

double PeakDenseTflops(const Recipe& r, const GpuSku& sku) {
  if (r.precision == Precision::kFp8 && sku.HasFp8()) {
    return sku.fp8_dense_tflops;
  }
  // FP32 training runs TF32 tensor cores: half the bf16 dense rate on
  // Ampere and Hopper datasheets. An fp32 base with fp32_master_weights
  // computes in 16 bits (see NormalizeRecipe).
  if (r.precision == Precision::kFp32 && !r.fp32_master_weights) {
    return sku.bf16_dense_tflops / 2;
  }
  return sku.bf16_dense_tflops;
}

bool CollectivesUseNvlink(const GpuSku& sku, const Pool& pool, int group_size) {
  if (pool.fabric != Fabric::kNvlink || !sku.HasNvlink()) return false;
  if (pool.gpus_per_node > 0 && group_size > pool.gpus_per_node) return false;
  if (sku.IsSxm()) return true;
  return group_size <= 2;  // bridged pairs only
}

InterNodeBandwidth InterNodeBandwidthOf(const Pool& pool) {
  if (pool.inter_node_gb_s_per_gpu > 0) {
    return {pool.inter_node_gb_s_per_gpu, "declared by the pool"};
  }
  switch (pool.inter_node_fabric) {
    case InterNodeFabric::kInfiniband:
      return {kInfinibandGbSPerGpu,
              "InfiniBand default: 200 Gb/s HDR per GPU at 80% NCCL "
              "efficiency"};
    case InterNodeFabric::kRoce:
      return {kRoceGbSPerGpu,
              "RoCE default: 200 Gb/s per GPU at 70% NCCL efficiency"};
    case InterNodeFabric::kEthernet:
      return {kEthernetGbSPerGpu,
              "Ethernet default: NCCL sockets, 100 Gb/s per node of 8 GPUs "
              "at 50%"};
    case InterNodeFabric::kNone:
      return {0, "no inter-node fabric"};
    case InterNodeFabric::kUnspecified:
      break;
  }
  return {kEthernetGbSPerGpu,
          "never declared: assumed Ethernet, NCCL sockets, 100 Gb/s per node "
          "of 8 GPUs at 50%"};
}

double CollectiveBandwidthGbS(const GpuSku& sku, const Pool& pool,
                              int group_size) {
  if (group_size <= 1) return 0;
  if (pool.gpus_per_node > 0 && group_size > pool.gpus_per_node) {
    return InterNodeBandwidthOf(pool).gb_s_per_gpu;
  }
  if (CollectivesUseNvlink(sku, pool, group_size)) {
    return sku.max_nvlink_gb_s * kNvlinkEfficiency;
  }
  const int gen = std::max(3, sku.pcie_gen);
  return 16.0 * std::pow(2.0, gen - 3) * kPcieEfficiency;
}

namespace {
// Scores and their product with the values, forward, per token: 4 s d_q
// per layer, half of it for a causal kernel.
double AttentionForwardFlopsPerToken(const Recipe& r,
                                     const ModelArchitecture& a) {
  const double full = 4.0 * a.num_layers * r.sequence_length * a.QueryDim();
  return MaterializesAttentionScores(r) ? full : full / 2;
}
}  // namespace

double AttentionFlopsPerToken(const Recipe& r, const ModelArchitecture& a) {
  const double forward = AttentionForwardFlopsPerToken(r, a);
  switch (r.method) {
    case FineTuneMethod::kFull:
    case FineTuneMethod::kLora:
    case FineTuneMethod::kQlora:
      return 3 * forward + (RecomputesActivations(r) ? forward : 0);
    case FineTuneMethod::kHeadOnly:
      return forward;
    case FineTuneMethod::kUnspecified:
      break;
  }
  return 0;
}

double TrainingFlopsPerToken(const Recipe& r, const ModelArchitecture& a) {
  const double matmul = MatmulParams(a);
  const double head = static_cast<double>(a.vocab_size) * a.hidden_size;
  const double attention_fwd = AttentionForwardFlopsPerToken(r, a);
  double flops = 0;
  switch (r.method) {
    case FineTuneMethod::kFull:
      flops = 6 * matmul + 3 * attention_fwd;
      break;
    case FineTuneMethod::kLora:
    case FineTuneMethod::kQlora:
      flops = 4 * matmul + 3 * attention_fwd;
      if (const int64_t update = LohaUpdateElementsPerLayer(r, a); update) {
        // LoHa applies its full update matrix as a matmul of its own:
        // forward, input gradient and the update's gradient per token (its
        // low-rank factors cost once per step).
        flops += 6.0 * static_cast<double>(update) * a.num_layers;
      } else {
        flops += 6 * static_cast<double>(TrainableParams(r, a));
      }
      break;
    case FineTuneMethod::kHeadOnly:
      return 2 * matmul + 4 * head + attention_fwd;
    case FineTuneMethod::kUnspecified:
      return 0;
  }
  if (RecomputesActivations(r)) flops += 2 * matmul + attention_fwd;
  return flops;
}

StepTimeEstimate EstimateStepTime(const Recipe& r, const ModelArchitecture& a,
                                  const GpuSku& sku, const Pool& pool) {
  return EstimateStepTime(r, a, sku, pool, DefaultStepTimeModelConstants());
}

namespace step_time_model_internal {

StepShape ShapeOf(const Recipe& r) {
  StepShape s;
  s.tp = std::max(1, r.tensor_parallel_degree);
  s.pp = std::max(1, r.pipeline_parallel_degree);
  s.dp = std::max(1, r.data_parallel_degree);
  s.ga = std::max(1, r.gradient_accumulation_steps);
  s.micro_tokens = ComputedTokensPerMicroBatch(r);
  return s;
}

// --- Compute of one micro-batch on one GPU. ---

double MatmulEfficiency(const Recipe& r, const GpuSku& sku,
                        const StepTimeModelConstants& c) {
  return std::min(0.95,
                  c.base_mfu * c.SkuFactor(sku) * c.MethodFactor(r.method));
}

namespace {
// Passes over the weights per micro-batch: forward and backward, plus the
// recomputed forward with activation checkpointing.
int WeightPasses(const Recipe& r) { return RecomputesActivations(r) ? 3 : 2; }

// The bytes per second a streaming kernel reaches on the card.
double StreamingBandwidth(const GpuSku& sku) {
  return std::max(1.0, sku.memory_bandwidth_gb_s) * 1e9 *
         kMemoryBandwidthEfficiency;
}
}  // namespace

double WeightBytesPerGpu(const Recipe& r, const ModelArchitecture& a,
                         const StepShape& s) {
  return static_cast<double>(a.Params()) *
         (r.precision == Precision::kNf4    ? 0.55
          : r.precision == Precision::kFp32 ? 4
          : r.precision == Precision::kFp8 || r.precision == Precision::kInt8
              ? 1
              : 2) /
         (s.tp * s.pp);
}

double MatmulSeconds(const Recipe& r, const GpuSku& sku,
                     const StepTimeModelConstants& c, const StepShape& s,
                     double flops_per_token, double attention_flops_per_token,
                     double efficiency) {
  const bool fp8 = r.precision == Precision::kFp8 && sku.HasFp8();
  const double linear_tflops = std::max(1.0, PeakDenseTflops(r, sku)) *
                               efficiency * (fp8 ? c.fp8_factor : 1);
  const double attention_tflops =
      std::max(1.0, fp8 ? sku.bf16_dense_tflops : PeakDenseTflops(r, sku)) *
      efficiency;
  const double tokens = s.micro_tokens / (s.tp * s.pp);
  return tokens * ((flops_per_token - attention_flops_per_token) /
                       (linear_tflops * 1e12) +
                   attention_flops_per_token / (attention_tflops * 1e12));
}

// Small micro-batches are bound by streaming the weights: forward,
// backward and (with checkpointing) recompute each read them once.
double WeightStreamingSeconds(const Recipe& r, const ModelArchitecture& a,
                              const GpuSku& sku, const StepShape& s) {
  return WeightBytesPerGpu(r, a, s) * WeightPasses(r) / StreamingBandwidth(sku);
}

// Every NF4 weight is dequantized on every pass (forward, backward and
// recompute), whatever the batch: a per-micro-batch cost.
double DequantizationSeconds(const Recipe& r, const ModelArchitecture& a,
                             const GpuSku& sku, const StepTimeModelConstants& c,
                             const StepShape& s) {
  if (r.precision != Precision::kNf4) return 0;
  const double quantized =
      static_cast<double>(a.Params() - a.EmbeddingParams()) / (s.tp * s.pp);
  return quantized * c.nf4_dequant_bytes_per_param * WeightPasses(r) /
         StreamingBandwidth(sku);
}

double LayerOverheadSeconds(const Recipe& r, const ModelArchitecture& a,
                            const StepTimeModelConstants& c,
                            const StepShape& s) {
  const double adapted_modules =
      r.method == FineTuneMethod::kLora || r.method == FineTuneMethod::kQlora
          ? static_cast<double>(r.target_modules.size())
          : 0;
  return (c.layer_overhead_s + adapted_modules * c.adapter_module_overhead_s) *
         (static_cast<double>(a.num_layers) / s.pp) *
         (RecomputesActivations(r) ? 1.5 : 1);
}

double EagerAttentionSeconds(const Recipe& r, const ModelArchitecture& a,
                             const GpuSku& sku, const StepTimeModelConstants& c,
                             const StepShape& s) {
  if (!MaterializesAttentionScores(r)) return 0;
  // Each token's row of scores, per head of this GPU's tensor-parallel
  // share, in every layer of its pipeline stage.
  const double length = s.micro_tokens / std::max(1, r.micro_batch_size);
  const double scores = s.micro_tokens * length *
                        (static_cast<double>(a.num_attention_heads) / s.tp) *
                        (static_cast<double>(a.num_layers) / s.pp);
  return scores * c.eager_attention_bytes_per_score *
         (RecomputesActivations(r) ? 1.5 : 1) / StreamingBandwidth(sku);
}

// (pp - 1) idle slots per ga micro-batches.
double PipelineBubble(const StepShape& s) {
  return s.pp > 1 ? static_cast<double>(s.pp - 1) / s.ga : 0;
}

ComputeTime StepCompute(const Recipe& r, const ModelArchitecture& a,
                        const GpuSku& sku, const StepTimeModelConstants& c,
                        const StepShape& s, double flops_per_token,
                        double efficiency) {
  double micro_s =
      std::max(MatmulSeconds(r, sku, c, s, flops_per_token,
                             AttentionFlopsPerToken(r, a), efficiency),
               WeightStreamingSeconds(r, a, sku, s));
  const double dequantization_s = DequantizationSeconds(r, a, sku, c, s);
  micro_s += dequantization_s;
  micro_s += EagerAttentionSeconds(r, a, sku, c, s);
  micro_s += LayerOverheadSeconds(r, a, c, s);
  const double bubble = PipelineBubble(s);
  ComputeTime t;
  t.compute_s = micro_s * s.ga * (1 + bubble);
  t.dequantization_s = dequantization_s * (s.ga * (1 + bubble));
  return t;
}

// --- Optimizer update: memory-bound elementwise passes. ---

double UpdateBytesPerParam(const Recipe& r) {
  // torch.optim.AdamW's multi-tensor (foreach) step makes ~20 passes of
  // parameter-sized tensors per update (weight decay 2, lerp of m 3, v
  // scale 2, addcmul 3, sqrt 2, bias-correction div 2, eps add 2, addcdiv
  // 4), and gradient clipping 3 more (norm 1, scale 2): 23 accesses of
  // the state's width. bitsandbytes' fused 8-bit AdamW reads and writes
  // weight, gradient and two 8-bit states once (~6 accesses plus clipping);
  // SGD with momentum ~10.
  const bool wide = r.precision == Precision::kFp32 || r.fp32_master_weights;
  const double width = wide ? 4 : 2;
  switch (r.optimizer) {
    case Optimizer::kAdamW:
      return 23 * width;
    case Optimizer::kAdamW8bit:
    case Optimizer::kPagedAdamW8bit:
      return 6 * width + 2 * 2 + 3 * width;
    case Optimizer::kSgd:
      return 10 * width;
    case Optimizer::kUnspecified:
      break;
  }
  return 0;
}

double OptimizerUpdateSeconds(const Recipe& r, const ModelArchitecture& a,
                              const GpuSku& sku, const StepShape& s) {
  const double trainable = static_cast<double>(TrainableParams(r, a));
  double shard = s.tp * s.pp;
  if (r.parallelism == Parallelism::kZero2 ||
      r.parallelism == Parallelism::kZero3 ||
      r.parallelism == Parallelism::kFsdp) {
    shard *= s.dp;
  }
  return trainable * UpdateBytesPerParam(r) / shard / StreamingBandwidth(sku);
}

// --- Collectives. ---

CollectiveBytes CollectiveBytesPerStep(const Recipe& r,
                                       const ModelArchitecture& a,
                                       const StepShape& s) {
  const int tp = s.tp, pp = s.pp, dp = s.dp, ga = s.ga;
  CollectiveBytes b;
  if (dp > 1) {
    const double trainable = static_cast<double>(TrainableParams(r, a));
    const double ring = 2.0 * (dp - 1) / dp;
    const double grads = trainable * 2 / (tp * pp);  // bf16 gradients
    switch (r.parallelism) {
      case Parallelism::kZero3:
      case Parallelism::kFsdp: {
        // Per micro-batch: all-gather the weights for forward and again for
        // backward, reduce-scatter the gradients ((D-1)/D each).
        const double stored = WeightBytesPerGpu(r, a, s);
        b.data_parallel = ga * (ring / 2) * (2 * stored + grads);
        break;
      }
      default:
        // Ring all-reduce (ZeRO-2: reduce-scatter + all-gather, same volume)
        // once per optimizer step.
        b.data_parallel = ring * grads;
        break;
    }
  }
  if (tp > 1) {
    // Megatron: 2 all-reduces of the activations forward, 2 backward, per
    // layer, per micro-batch.
    b.tensor_parallel = ga * (static_cast<double>(a.num_layers) / pp) * 4 *
                        (2.0 * (tp - 1) / tp) * s.micro_tokens * a.hidden_size *
                        2;
  }
  if (pp > 1) {
    // 1F1B: each stage boundary sends the activations of every micro-batch
    // forward and their gradients backward (bf16).
    b.pipeline = ga * 2.0 * s.micro_tokens * a.hidden_size * 2 / tp;
  }
  return b;
}

CommunicationTime CommunicationTimeOf(const Recipe& r, const GpuSku& sku,
                                      const Pool& pool,
                                      const StepTimeModelConstants& c,
                                      const StepShape& s,
                                      const CollectiveBytes& b) {
  CommunicationTime t;
  const double dp_bytes = b.data_parallel, tp_bytes = b.tensor_parallel,
               pp_bytes = b.pipeline;
  const bool any = dp_bytes > 0 || tp_bytes > 0 || pp_bytes > 0;
  if (!any) return t;  // no collectives
  const int tp = s.tp;
  // Tensor parallel stays inside its NVLink group; data parallel and
  // pipeline stages cross nodes when the job does (each GPU sends its
  // share over its own NIC), else they run over the node's links.
  const bool spans = pool.gpus_per_node > 0 && r.gpu_count > pool.gpus_per_node;
  const double outer_gb_s =
      spans ? InterNodeBandwidthOf(pool).gb_s_per_gpu
            : CollectiveBandwidthGbS(sku, pool, r.gpu_count);
  if (spans) t.inter_node_bandwidth_gb_s = outer_gb_s;
  const double tp_gb_s = tp > 1 ? CollectiveBandwidthGbS(sku, pool, tp) : 0;
  // A floor of 0.1 GB/s keeps a misdeclared pool from dividing by zero.
  const double outer = std::max(0.1, outer_gb_s) * 1e9;
  const double inner = std::max(0.1, tp_gb_s) * 1e9;
  t.collective_bandwidth_gb_s = tp > 1 && (dp_bytes + pp_bytes) > 0
                                    ? std::min(outer_gb_s, tp_gb_s)
                                : tp > 1 ? tp_gb_s
                                         : outer_gb_s;
  t.communication_s = (dp_bytes + pp_bytes) / outer + tp_bytes / inner;
  t.exposed_s =
      dp_bytes / outer * std::min(1.0, c.data_parallel_exposed_fraction) +
      pp_bytes / outer + tp_bytes / inner;
  return t;
}

}  // namespace step_time_model_internal

StepTimeEstimate EstimateStepTime(const Recipe& r, const ModelArchitecture& a,
                                  const GpuSku& sku, const Pool& pool,
                                  const StepTimeModelConstants& c) {
  namespace phases = step_time_model_internal;
  StepTimeEstimate e;
  const phases::StepShape shape = phases::ShapeOf(r);
  e.flops_per_token = TrainingFlopsPerToken(r, a);
  e.tokens_per_step = shape.micro_tokens * shape.ga * shape.dp;
  e.efficiency = phases::MatmulEfficiency(r, sku, c);
  const phases::ComputeTime compute =
      phases::StepCompute(r, a, sku, c, shape, e.flops_per_token, e.efficiency);
  e.compute_s = compute.compute_s;
  e.dequantization_s = compute.dequantization_s;
  e.optimizer_update_s = phases::OptimizerUpdateSeconds(r, a, sku, shape);
  const phases::CommunicationTime communication = phases::CommunicationTimeOf(
      r, sku, pool, c, shape, phases::CollectiveBytesPerStep(r, a, shape));
  e.communication_s = communication.communication_s;
  e.exposed_communication_s = communication.exposed_s;
  e.collective_bandwidth_gb_s = communication.collective_bandwidth_gb_s;
  e.inter_node_bandwidth_gb_s = communication.inter_node_bandwidth_gb_s;
  e.step_time_s =
      e.compute_s + e.optimizer_update_s + e.exposed_communication_s;
  e.tokens_per_s_per_gpu =
      e.step_time_s > 0 ? e.tokens_per_step / e.step_time_s / r.gpu_count : 0;
  return e;
}

absl::StatusOr<StepTimeEstimate> EstimateStepTime(const Recipe& recipe,
                                                  const GpuSku& sku,
                                                  const Pool& pool) {
  const FieldViolations violations = ValidateRecipe(recipe);
  // Every violation, not the first: the caller names each bad field.
  if (!violations.empty()) return InvalidArgumentWithViolations(violations);
  absl::StatusOr<ModelArchitecture> arch = ResolveArchitecture(recipe);
  if (!arch.ok()) return arch.status();
  return EstimateStepTime(recipe, *arch, sku, pool);
}

}  // namespace placement::core
