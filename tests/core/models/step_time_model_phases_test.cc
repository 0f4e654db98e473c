#include "core/models/step_time_model_phases.h"

#include "core/models/step_time_model.h"
#include "gtest/gtest.h"
#include "tests/core/test_catalog.h"

namespace placement::core::step_time_model_internal {
namespace {

using testing::Sku;
using testing::TrainingPool;

Recipe Llama8b(FineTuneMethod method, int gpus, Parallelism parallelism) {
  Recipe r;
  r.model = "Llama-3.1-8B";
  r.method = method;
  if (method != FineTuneMethod::kFull) r.lora_rank = 16;
  r.sequence_length = 2048;
  r.micro_batch_size = 4;
  r.optimizer = Optimizer::kAdamW;
  r.attention = AttentionImplementation::kFlash;
  r.gpu_count = gpus;
  r.parallelism = parallelism;
  return NormalizeRecipe(r);
}

ModelArchitecture ArchOf(const Recipe& r) {
  absl::StatusOr<ModelArchitecture> arch = ResolveArchitecture(r);
  EXPECT_TRUE(arch.ok()) << arch.status();
  return *arch;
}

TEST(StepTimeModelPhasesTest, OneGpuHasNoCollectives) {
  const Recipe r = Llama8b(FineTuneMethod::kLora, 1, Parallelism::kSingle);
  const CollectiveBytes bytes =
      CollectiveBytesPerStep(r, ArchOf(r), ShapeOf(r));
  EXPECT_EQ(bytes.data_parallel, 0);
  EXPECT_EQ(bytes.tensor_parallel, 0);
  EXPECT_EQ(bytes.pipeline, 0);
  const CommunicationTime t =
      CommunicationTimeOf(r, Sku("A100-SXM4-80GB"),
                          TrainingPool("p", "A100-SXM4-80GB", Fabric::kNvlink),
                          ShippedStepTimeModelConstants(), ShapeOf(r), bytes);
  EXPECT_EQ(t.communication_s, 0);
  EXPECT_EQ(t.collective_bandwidth_gb_s, 0);
}

TEST(StepTimeModelPhasesTest, DdpAllReducesBf16GradientsOncePerStep) {
  const Recipe r = Llama8b(FineTuneMethod::kFull, 8, Parallelism::kDdp);
  const ModelArchitecture a = ArchOf(r);
  const double trainable = static_cast<double>(TrainableParams(r, a));
  const CollectiveBytes bytes = CollectiveBytesPerStep(r, a, ShapeOf(r));
  // Ring all-reduce: 2 (D-1)/D of the bf16 gradients per GPU.
  EXPECT_DOUBLE_EQ(bytes.data_parallel, 2.0 * 7 / 8 * trainable * 2);
  // Over NVLink at 40% of the datasheet; half of it overlaps with backward
  // at data_parallel_exposed_fraction = 0.5.
  const StepTimeModelConstants& c = AnalyticStepTimeModelConstants();
  const CommunicationTime t =
      CommunicationTimeOf(r, Sku("A100-SXM4-80GB"),
                          TrainingPool("p", "A100-SXM4-80GB", Fabric::kNvlink),
                          c, ShapeOf(r), bytes);
  EXPECT_DOUBLE_EQ(t.collective_bandwidth_gb_s, 600 * 0.4);
  EXPECT_DOUBLE_EQ(t.communication_s, bytes.data_parallel / 240e9);
  EXPECT_DOUBLE_EQ(t.exposed_s, t.communication_s * 0.5);
}

TEST(StepTimeModelPhasesTest, ShardedOptimizerUpdateDividesByDataParallel) {
  const GpuSku& sku = Sku("H100-SXM5-80GB");
  const Recipe ddp = Llama8b(FineTuneMethod::kFull, 8, Parallelism::kDdp);
  const Recipe fsdp = Llama8b(FineTuneMethod::kFull, 8, Parallelism::kFsdp);
  const double replicated =
      OptimizerUpdateSeconds(ddp, ArchOf(ddp), sku, ShapeOf(ddp));
  EXPECT_GT(replicated, 0);
  EXPECT_DOUBLE_EQ(
      OptimizerUpdateSeconds(fsdp, ArchOf(fsdp), sku, ShapeOf(fsdp)),
      replicated / 8);
}

// FP8 speeds up the linear layers only, and by fp8_factor of the
// datasheet's 2x: attention's scores and values stay at the bf16 rate.
TEST(StepTimeModelPhasesTest, Fp8SpeedsUpTheLinearsNotAttention) {
  const GpuSku& h100 = Sku("H100-SXM5-80GB");
  Recipe r = Llama8b(FineTuneMethod::kFull, 1, Parallelism::kSingle);
  const ModelArchitecture a = ArchOf(r);
  const StepTimeModelConstants& c = AnalyticStepTimeModelConstants();
  const double flops = TrainingFlopsPerToken(r, a);
  const double attention = AttentionFlopsPerToken(r, a);
  const double bf16 =
      MatmulSeconds(r, h100, c, ShapeOf(r), flops, attention, 0.5);
  r.precision = Precision::kFp8;
  const double fp8 =
      MatmulSeconds(r, h100, c, ShapeOf(r), flops, attention, 0.5);
  const double tokens = ShapeOf(r).micro_tokens;
  EXPECT_DOUBLE_EQ(
      fp8, tokens * ((flops - attention) / (1979e12 * 0.5 * c.fp8_factor) +
                     attention / (989e12 * 0.5)));
  EXPECT_GT(bf16 / fp8, 1);
  EXPECT_LT(bf16 / fp8, 2 * c.fp8_factor);
}

// EAGER attention computes the whole s x s matrix and moves its scores
// through memory; SDPA and flash keep them on chip.
TEST(StepTimeModelPhasesTest, EagerAttentionCostsScoreTraffic) {
  const GpuSku& a100 = Sku("A100-SXM4-80GB");
  Recipe r = Llama8b(FineTuneMethod::kLora, 1, Parallelism::kSingle);
  const ModelArchitecture a = ArchOf(r);
  const StepTimeModelConstants& c = AnalyticStepTimeModelConstants();
  EXPECT_EQ(EagerAttentionSeconds(r, a, a100, c, ShapeOf(r)), 0);
  const double causal = AttentionFlopsPerToken(r, a);
  r.attention = AttentionImplementation::kEager;
  EXPECT_DOUBLE_EQ(AttentionFlopsPerToken(r, a), 2 * causal);
  // 4 x 2048 tokens, a row of 2048 scores per head (32) per layer (32),
  // 60 bytes each, at 70% of 2,039 GB/s.
  EXPECT_DOUBLE_EQ(EagerAttentionSeconds(r, a, a100, c, ShapeOf(r)),
                   8192.0 * 2048 * 32 * 32 * 60 / (2039e9 * 0.7));
  // Twice the sequence, twice the scores per token.
  r.sequence_length = 4096;
  r.micro_batch_size = 2;
  EXPECT_DOUBLE_EQ(EagerAttentionSeconds(r, a, a100, c, ShapeOf(r)),
                   8192.0 * 4096 * 32 * 32 * 60 / (2039e9 * 0.7));
}

// Each adapted module launches its branch's kernels per layer and
// micro-batch, whatever the batch.
TEST(StepTimeModelPhasesTest, AdapterBranchesAddFixedOverheadPerModule) {
  const StepTimeModelConstants& c = AnalyticStepTimeModelConstants();
  Recipe full = Llama8b(FineTuneMethod::kFull, 1, Parallelism::kSingle);
  Recipe lora = Llama8b(FineTuneMethod::kLora, 1, Parallelism::kSingle);
  const ModelArchitecture a = ArchOf(lora);
  ASSERT_EQ(lora.target_modules.size(), 2u);  // q, v
  EXPECT_DOUBLE_EQ(LayerOverheadSeconds(full, a, c, ShapeOf(full)),
                   c.layer_overhead_s * 32);
  EXPECT_DOUBLE_EQ(LayerOverheadSeconds(lora, a, c, ShapeOf(lora)),
                   (c.layer_overhead_s + 2 * c.adapter_module_overhead_s) * 32);
  lora.target_modules = {"all-linear"};
  lora = NormalizeRecipe(lora);
  EXPECT_DOUBLE_EQ(LayerOverheadSeconds(lora, a, c, ShapeOf(lora)),
                   (c.layer_overhead_s + 7 * c.adapter_module_overhead_s) * 32);
}

TEST(StepTimeModelPhasesTest, DequantizationIsCountedOnlyForNf4) {
  const GpuSku& sku = Sku("A100-SXM4-80GB");
  const StepTimeModelConstants& c = ShippedStepTimeModelConstants();
  Recipe r = Llama8b(FineTuneMethod::kLora, 1, Parallelism::kSingle);
  EXPECT_EQ(DequantizationSeconds(r, ArchOf(r), sku, c, ShapeOf(r)), 0);
  r.method = FineTuneMethod::kQlora;
  r.precision = Precision::kNf4;
  const double per_micro_batch =
      DequantizationSeconds(r, ArchOf(r), sku, c, ShapeOf(r));
  EXPECT_GT(per_micro_batch, 0);
  r.gradient_accumulation_steps = 4;
  const ComputeTime t = StepCompute(r, ArchOf(r), sku, c, ShapeOf(r),
                                    TrainingFlopsPerToken(r, ArchOf(r)),
                                    MatmulEfficiency(r, sku, c));
  EXPECT_DOUBLE_EQ(t.dequantization_s, 4 * per_micro_batch);
  EXPECT_GT(t.compute_s, t.dequantization_s);
}

TEST(StepTimeModelPhasesTest, PipelineBubbleShrinksWithAccumulation) {
  StepShape s;
  EXPECT_EQ(PipelineBubble(s), 0);
  s.pp = 4;
  s.ga = 1;
  EXPECT_EQ(PipelineBubble(s), 3);
  s.ga = 12;
  EXPECT_DOUBLE_EQ(PipelineBubble(s), 0.25);
}

TEST(StepTimeModelPhasesTest, StepIsComputePlusUpdatePlusExposedCommunication) {
  const GpuSku& sku = Sku("H100-SXM5-80GB");
  const Pool pool = TrainingPool("p", "H100-SXM5-80GB", Fabric::kNvlink);
  const StepTimeModelConstants& c = ShippedStepTimeModelConstants();
  for (const Recipe& r :
       {Llama8b(FineTuneMethod::kLora, 1, Parallelism::kSingle),
        Llama8b(FineTuneMethod::kFull, 8, Parallelism::kFsdp)}) {
    const ModelArchitecture a = ArchOf(r);
    const StepShape shape = ShapeOf(r);
    const StepTimeEstimate e = EstimateStepTime(r, a, sku, pool, c);
    const ComputeTime compute =
        StepCompute(r, a, sku, c, shape, e.flops_per_token, e.efficiency);
    const CommunicationTime communication = CommunicationTimeOf(
        r, sku, pool, c, shape, CollectiveBytesPerStep(r, a, shape));
    EXPECT_EQ(e.compute_s, compute.compute_s);
    EXPECT_EQ(e.optimizer_update_s, OptimizerUpdateSeconds(r, a, sku, shape));
    EXPECT_EQ(e.exposed_communication_s, communication.exposed_s);
    EXPECT_EQ(e.step_time_s,
              e.compute_s + e.optimizer_update_s + e.exposed_communication_s);
    EXPECT_DOUBLE_EQ(e.tokens_per_s_per_gpu,
                     e.tokens_per_step / e.step_time_s / r.gpu_count);
  }
}

}  // namespace
}  // namespace placement::core::step_time_model_internal
