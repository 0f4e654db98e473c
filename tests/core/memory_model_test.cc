#include "core/memory_model.h"

#include "gtest/gtest.h"

namespace placement::core {
namespace {

Recipe Base(const char* model, FineTuneMethod method) {
  Recipe r;
  r.model = model;
  r.method = method;
  if (method != FineTuneMethod::kFull) r.lora_rank = 16;
  r.sequence_length = 2048;
  r.attention = AttentionImplementation::kFlash;
  r.activation_checkpointing = ActivationCheckpointing::kOn;
  return NormalizeRecipe(r);
}

TEST(MemoryModelTest, TermsAddUpAndInvalidRecipeIsRejected) {
  const auto m = PredictPeakMemory(Base("Llama-3.1-8B", FineTuneMethod::kLora));
  ASSERT_TRUE(m.ok());
  EXPECT_NEAR(m->total_gb,
              m->weights_gb + m->gradients_gb + m->optimizer_gb +
                  m->activations_gb + m->logits_gb + m->overhead_gb,
              1e-9);
  Recipe bad = Base("Llama-3.1-8B", FineTuneMethod::kLora);
  bad.sequence_length = 0;
  EXPECT_EQ(PredictPeakMemory(bad).status().code(),
            absl::StatusCode::kInvalidArgument);
  // Every violation travels in the status, not only the first.
  bad.micro_batch_size = -1;
  EXPECT_EQ(ViolationsFromStatus(PredictPeakMemory(bad).status()).size(),
            ValidateRecipe(bad).size());
  EXPECT_GE(ValidateRecipe(bad).size(), 2u);
}

TEST(MemoryModelTest, FullBf16AdamIsSixteenBytesPerParamWithMasterWeights) {
  Recipe r = Base("Llama-3.1-8B", FineTuneMethod::kFull);
  r.fp32_master_weights = true;
  const MemoryBreakdown m = *PredictPeakMemory(r);
  const double n = FindModel("Llama-3.1-8B")->Params() / 1e9;
  // 2 (bf16) + 4 (master) + 4 (fp32 grads) + 8 (AdamW m, v) = 18 B/param.
  EXPECT_NEAR(m.weights_gb + m.gradients_gb + m.optimizer_gb, 18 * n, 0.01);
  r.fp32_master_weights = false;  // "bf16-true": 8 B/param
  const MemoryBreakdown t = *PredictPeakMemory(r);
  EXPECT_NEAR(t.weights_gb + t.gradients_gb + t.optimizer_gb, 8 * n, 0.01);
}

TEST(MemoryModelTest, Nf4WithDoubleQuantizationIsSmaller) {
  Recipe q = Base("Llama-2-7B", FineTuneMethod::kQlora);
  const double nf4 = PredictPeakMemory(q)->weights_gb;
  q.double_quantization = true;
  const double dq = PredictPeakMemory(q)->weights_gb;
  // QLoRA paper: 0.373 bit/param saved; LitGPT measured 0.30 GB on 7B.
  EXPECT_NEAR(nf4 - dq, 0.373 / 8 * 6.47, 0.02);
  const double bf16 =
      PredictPeakMemory(Base("Llama-2-7B", FineTuneMethod::kLora))->weights_gb;
  EXPECT_LT(nf4, bf16 / 3);
}

TEST(MemoryModelTest, CheckpointingAndFlashAttentionCutActivations) {
  Recipe r = Base("Llama-3.1-8B", FineTuneMethod::kLora);
  const double ckpt = PredictPeakMemory(r)->activations_gb;
  r.activation_checkpointing = ActivationCheckpointing::kOff;
  const double full = PredictPeakMemory(r)->activations_gb;
  EXPECT_GT(full, 5 * ckpt);
  r.attention = AttentionImplementation::kEager;
  EXPECT_GT(PredictPeakMemory(r)->activations_gb, full);
}

TEST(MemoryModelTest, ShardingDividesModelStates) {
  Recipe r = Base("Llama-3.1-70B", FineTuneMethod::kFull);
  r.fp32_master_weights = true;
  r.gpu_count = 8;
  r.parallelism = Parallelism::kDdp;
  r.data_parallel_degree = 8;
  const MemoryBreakdown ddp = *PredictPeakMemory(r);
  r.parallelism = Parallelism::kZero2;
  const MemoryBreakdown zero2 = *PredictPeakMemory(r);
  r.parallelism = Parallelism::kZero3;
  const MemoryBreakdown zero3 = *PredictPeakMemory(r);
  EXPECT_NEAR(zero2.optimizer_gb, ddp.optimizer_gb / 8, 1e-6);
  EXPECT_NEAR(zero2.gradients_gb, ddp.gradients_gb / 8, 1e-6);
  EXPECT_EQ(zero2.weights_gb > zero3.weights_gb, true);
  EXPECT_LT(zero3.total_gb, ddp.total_gb / 4);
  r.parallelism = Parallelism::kTensor;
  r.tensor_parallel_degree = 8;
  r.data_parallel_degree = 1;
  const MemoryBreakdown tp = *PredictPeakMemory(r);
  EXPECT_NEAR(tp.optimizer_gb, ddp.optimizer_gb / 8, 1e-6);
  EXPECT_LT(tp.activations_gb, ddp.activations_gb);
}

TEST(MemoryModelTest, PagedOptimizerIsFlagged) {
  Recipe r = Base("Llama-3.1-8B", FineTuneMethod::kFull);
  r.optimizer = Optimizer::kPagedAdamW8bit;
  EXPECT_TRUE(PredictPeakMemory(r)->optimizer_may_page_to_cpu);
}

}  // namespace
}  // namespace placement::core
