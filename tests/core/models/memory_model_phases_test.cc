#include "core/models/memory_model_phases.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "core/models/memory_model.h"
#include "gtest/gtest.h"

namespace placement::core::memory_model_internal {
namespace {

Recipe Llama8b(FineTuneMethod method, int gpus, Parallelism parallelism) {
  Recipe r;
  r.model = "Llama-3.1-8B";
  r.method = method;
  if (method != FineTuneMethod::kFull) r.lora_rank = 16;
  r.sequence_length = 2048;
  r.micro_batch_size = 2;
  r.precision = Precision::kBf16;
  r.fp32_master_weights = method == FineTuneMethod::kFull;
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

ModelStateBytes PerGpuStates(const Recipe& r) {
  const ModelArchitecture a = ArchOf(r);
  const RecipeShape shape = ShapeOf(r, a);
  return ShardByLayout(r, a, shape, WholeModelStates(r, shape));
}

TEST(MemoryModelPhasesTest, AdamWStatesAreEightBytesPerTrainableParam) {
  // Full fine-tuning with fp32 master weights: AdamW keeps two fp32 states.
  const Recipe single = Llama8b(FineTuneMethod::kFull, 1, Parallelism::kSingle);
  const RecipeShape shape = ShapeOf(single, ArchOf(single));
  EXPECT_GT(shape.trainable_params, 7e9);
  EXPECT_EQ(PerGpuStates(single).optimizer, 8 * shape.trainable_params);
  EXPECT_EQ(PerGpuStates(single).one_state, 4 * shape.trainable_params);

  // Replicated data parallelism keeps every state on every GPU ...
  const Recipe ddp = Llama8b(FineTuneMethod::kFull, 4, Parallelism::kDdp);
  EXPECT_EQ(PerGpuStates(ddp).optimizer, 8 * shape.trainable_params);
  // ... ZeRO-2 and FSDP divide them by the data-parallel degree.
  for (Parallelism sharded : {Parallelism::kZero2, Parallelism::kFsdp}) {
    const Recipe r = Llama8b(FineTuneMethod::kFull, 4, sharded);
    ASSERT_EQ(ShapeOf(r, ArchOf(r)).dp, 4);
    EXPECT_DOUBLE_EQ(PerGpuStates(r).optimizer, 8 * shape.trainable_params / 4)
        << ParallelismName(sharded);
    EXPECT_DOUBLE_EQ(PerGpuStates(r).gradients, 4 * shape.trainable_params / 4)
        << ParallelismName(sharded);
  }
}

TEST(MemoryModelPhasesTest, OptimizerStateWidthFollowsTheOptimizer) {
  Recipe r = Llama8b(FineTuneMethod::kFull, 1, Parallelism::kSingle);
  const double trainable = ShapeOf(r, ArchOf(r)).trainable_params;
  r.optimizer = Optimizer::kAdamW8bit;
  EXPECT_EQ(OptimizerStateBytes(r, ShapeOf(r, ArchOf(r))).optimizer,
            2 * trainable);  // two 8-bit states
  r.optimizer = Optimizer::kSgd;
  EXPECT_EQ(OptimizerStateBytes(r, ShapeOf(r, ArchOf(r))).optimizer,
            4 * trainable);  // one fp32 momentum
}

TEST(MemoryModelPhasesTest, LoraGradientsScaleWithTrainableNotTotalParams) {
  Recipe r = Llama8b(FineTuneMethod::kLora, 1, Parallelism::kSingle);
  const RecipeShape shape = ShapeOf(r, ArchOf(r));
  // bf16 adapters: 2 bytes per trainable parameter, a tiny share of the
  // model's.
  EXPECT_EQ(GradientBytes(r, shape), 2 * shape.trainable_params);
  EXPECT_LT(GradientBytes(r, shape), 0.01 * 2 * shape.params);
  // Twice the rank, twice the adapter parameters, twice the gradients; the
  // frozen base weights do not change.
  Recipe wider = r;
  wider.lora_rank = 2 * r.lora_rank;
  const RecipeShape wider_shape = ShapeOf(wider, ArchOf(wider));
  EXPECT_DOUBLE_EQ(GradientBytes(wider, wider_shape),
                   2 * GradientBytes(r, shape));
  EXPECT_EQ(wider_shape.params, shape.params);
}

TEST(MemoryModelPhasesTest, Nf4WorkingMemoryOnlyForNf4Bases) {
  const MemoryModelConstants& c = AnalyticMemoryModelConstants();
  Recipe r = Llama8b(FineTuneMethod::kLora, 1, Parallelism::kSingle);
  EXPECT_EQ(Nf4WorkingBytesPerGpu(r, c, ShapeOf(r, ArchOf(r))), 0);
  r.method = FineTuneMethod::kQlora;
  r.precision = Precision::kNf4;
  const RecipeShape shape = ShapeOf(r, ArchOf(r));
  EXPECT_DOUBLE_EQ(
      Nf4WorkingBytesPerGpu(r, c, shape),
      c.nf4_working_bytes_per_param * (shape.params - shape.embedding_params));
}

TEST(MemoryModelPhasesTest, CheckpointingKeepsOneHiddenStatePerLayer) {
  const MemoryModelConstants& c = AnalyticMemoryModelConstants();
  Recipe r = Llama8b(FineTuneMethod::kLora, 1, Parallelism::kSingle);
  r.activation_checkpointing = ActivationCheckpointing::kOn;
  const ModelArchitecture a = ArchOf(r);
  const RecipeShape shape = ShapeOf(r, a);
  const ActivationBytes blocks = BlockActivations(r, a, c, shape);
  const double tokens = 2048.0 * 2;
  // Each block keeps its bf16 input; one block is recomputed at a time.
  EXPECT_DOUBLE_EQ(blocks.saved, tokens * a.num_layers * a.hidden_size * 2);
  EXPECT_DOUBLE_EQ(blocks.backward_working,
                   tokens * SavedBytesPerTokenPerLayer(r, a, c, shape));
  r.activation_checkpointing = ActivationCheckpointing::kOff;
  EXPECT_DOUBLE_EQ(BlockActivations(r, a, c, shape).saved,
                   a.num_layers * blocks.backward_working);
}

TEST(MemoryModelPhasesTest, PhasesComposeTheReportedPeak) {
  const MemoryModelConstants& c = ShippedMemoryModelConstants();
  for (const Recipe& r :
       {Llama8b(FineTuneMethod::kFull, 1, Parallelism::kSingle),
        Llama8b(FineTuneMethod::kFull, 8, Parallelism::kFsdp),
        Llama8b(FineTuneMethod::kLora, 1, Parallelism::kSingle),
        Llama8b(FineTuneMethod::kLora, 2, Parallelism::kDdp)}) {
    SCOPED_TRACE(absl::StrCat(FineTuneMethodName(r.method), " ",
                              ParallelismName(r.parallelism)));
    const ModelArchitecture a = ArchOf(r);
    const MemoryBreakdown m = PredictPeakMemory(r, a, c);
    // One micro-batch per step: gradients appear only in backward.
    const double persistent = m.weights_gb + m.optimizer_gb;
    EXPECT_EQ(ForwardPhaseGb(r, m),
              persistent + m.activations_gb + m.logits_gb);
    EXPECT_EQ(OptimizerStepPhaseGb(m),
              persistent + m.gradients_gb + m.optimizer_step_working_gb);
    EXPECT_EQ(m.forward_gb, ForwardPhaseGb(r, m));
    EXPECT_EQ(m.backward_gb, BackwardPhaseGb(r, m));
    EXPECT_EQ(m.optimizer_step_gb, OptimizerStepPhaseGb(m));
    // The peak is the largest phase; the card holds it plus the allocator's
    // slack, the CUDA context and (more than one GPU) NCCL's buffers.
    EXPECT_EQ(m.allocated_gb,
              std::max({m.forward_gb, m.backward_gb, m.optimizer_step_gb,
                        m.model_setup_gb}));
    EXPECT_GE(m.reserved_gb, m.allocated_gb);
    EXPECT_EQ(m.device_gb, m.reserved_gb + FixedOverheadGb(r, c));
    EXPECT_EQ(m.reported_gb, m.device_gb);
    EXPECT_EQ(FixedOverheadGb(r, c),
              c.cuda_context_gb + (r.gpu_count > 1 ? c.nccl_buffers_gb : 0));
    // The terms are the named steps' bytes.
    const RecipeShape shape = ShapeOf(r, a);
    const ModelStateBytes g = PerGpuStates(r);
    const ActivationBytes act = ActivationsPerGpu(r, a, c, shape);
    EXPECT_EQ(m.gradients_gb, g.gradients / 1e9);
    EXPECT_EQ(m.optimizer_gb, g.optimizer / 1e9);
    EXPECT_EQ(m.activations_gb, act.saved / 1e9);
    EXPECT_EQ(m.logits_gb, act.logits / 1e9);
    EXPECT_EQ(m.optimizer_step_working_gb,
              OptimizerStepWorkingBytes(c, g) / 1e9);
  }
}

TEST(MemoryModelPhasesTest, FullFineTunePeaksAtTheOptimizerStep) {
  const Recipe r = Llama8b(FineTuneMethod::kFull, 1, Parallelism::kSingle);
  MemoryBreakdown m =
      PredictPeakMemory(r, ArchOf(r), ShippedMemoryModelConstants());
  EXPECT_EQ(m.peak_phase, MemoryPhase::kOptimizerStep);
  // A larger forward phase moves the peak; on a tie the earlier phase wins.
  m.forward_gb = m.optimizer_step_gb + 1;
  SelectPeakPhase(m);
  EXPECT_EQ(m.peak_phase, MemoryPhase::kForward);
  m.forward_gb = m.optimizer_step_gb;
  SelectPeakPhase(m);
  EXPECT_EQ(m.peak_phase, MemoryPhase::kForward);
}

}  // namespace
}  // namespace placement::core::memory_model_internal
