#ifndef PLACEMENT_CORE_MODELS_MEMORY_MODEL_PHASES_H_
#define PLACEMENT_CORE_MODELS_MEMORY_MODEL_PHASES_H_

// The steps PredictPeakMemory (memory_model.h) composes, one function per
// term of the breakdown, declared here so that a test can check each term on
// its own. Internal to the memory model: everything else calls
// PredictPeakMemory. Sizes are bytes unless a name ends in _gb.

#include "core/models/memory_model.h"
#include "core/recipe.h"

namespace placement::core::memory_model_internal {

// What every term reads of a recipe and its architecture.
struct RecipeShape {
  double params = 0;  // every parameter of the model
  double embedding_params = 0;
  double trainable_params = 0;
  bool fp32 = false;  // PRECISION_FP32
  // An adapter recipe on an fp32 base computed in 16 bits (PRECISION_FP32 +
  // fp32_master_weights, see NormalizeRecipe).
  bool fp32_base_16bit_compute = false;
  bool full = false;  // METHOD_FULL
  int tp = 1;         // tensor, pipeline and data-parallel degrees (>= 1)
  int pp = 1;
  int dp = 1;
  double model_split = 1;  // tp x pp
  // ZeRO-3 / FSDP over more than one replica: the weights are sharded.
  bool data_sharded = false;
};
RecipeShape ShapeOf(const Recipe& recipe, const ModelArchitecture& arch);

// The model states: of the whole model (WholeModelStates), or of one GPU
// once the layout divided them (ShardByLayout).
struct ModelStateBytes {
  double weights = 0;    // stored weights and adapters; once sharded, plus
                         // the gathered blocks of ZeRO-3 / FSDP
  double master = 0;     // fp32 master copy of the trainable weights
  double gradients = 0;  // of the trainable parameters
  double optimizer = 0;  // every optimizer state
  double one_state = 0;  // one optimizer state (sizes its temporaries)
  // Once sharded: the stored model on this GPU's tensor/pipeline share
  // before any data-parallel sharding (what an unsharded setup holds).
  double unsharded_model = 0;
};

// The stored weights of the whole model plus its adapters.
double StoredWeightBytes(const Recipe& recipe, const RecipeShape& shape);
// The fp32 master copy of the trainable weights (0 without one).
double MasterWeightBytes(const Recipe& recipe, const RecipeShape& shape);
// Gradients of the trainable parameters, in the states' width.
double GradientBytes(const Recipe& recipe, const RecipeShape& shape);
// Every optimizer state (.optimizer) and one of them (.one_state).
ModelStateBytes OptimizerStateBytes(const Recipe& recipe,
                                    const RecipeShape& shape);
// The four above, of the whole model.
ModelStateBytes WholeModelStates(const Recipe& recipe,
                                 const RecipeShape& shape);
// Divides the whole model's states as the layout does: tensor and pipeline
// parallel split everything, ZeRO-2 shards gradients and optimizer states,
// ZeRO-3 and FSDP the weights too (plus the gathered blocks).
ModelStateBytes ShardByLayout(const Recipe& recipe,
                              const ModelArchitecture& arch,
                              const RecipeShape& shape, ModelStateBytes whole);
// NF4 working memory (dequantized copies) on one GPU; 0 unless NF4.
double Nf4WorkingBytesPerGpu(const Recipe& recipe,
                             const MemoryModelConstants& constants,
                             const RecipeShape& shape);

// The short-lived memory of one GPU.
struct ActivationBytes {
  double saved = 0;             // saved for backward at the end of forward
  double backward_working = 0;  // one block recomputed / its gradients
  double logits = 0;            // output logits and loss working memory
};

// Bytes one token saves in one transformer block (without checkpointing),
// scaled by the framework's activation_scale.
double SavedBytesPerTokenPerLayer(const Recipe& recipe,
                                  const ModelArchitecture& arch,
                                  const MemoryModelConstants& constants,
                                  const RecipeShape& shape);
// The blocks' saved activations and backward working set, of every tensor
// parallel rank together.
ActivationBytes BlockActivations(const Recipe& recipe,
                                 const ModelArchitecture& arch,
                                 const MemoryModelConstants& constants,
                                 const RecipeShape& shape);
// LoHa's full update matrices and the 16-bit casts autocast makes of fp32
// weights: each either saved until backward or rebuilt with a recomputed
// block (0 for recipes without them).
ActivationBytes LohaUpdateBytes(const Recipe& recipe,
                                const ModelArchitecture& arch,
                                const RecipeShape& shape);
ActivationBytes AutocastWeightCastBytes(const Recipe& recipe,
                                        const ModelArchitecture& arch,
                                        const RecipeShape& shape);
// Logits and loss of the last pipeline stage's micro-batch, on one GPU.
double LogitsBytesPerGpu(const Recipe& recipe, const ModelArchitecture& arch,
                         const MemoryModelConstants& constants,
                         const RecipeShape& shape);
// Every short-lived term on one GPU.
ActivationBytes ActivationsPerGpu(const Recipe& recipe,
                                  const ModelArchitecture& arch,
                                  const MemoryModelConstants& constants,
                                  const RecipeShape& shape);
// The optimizer's temporaries during its step, on one GPU.
double OptimizerStepWorkingBytes(const MemoryModelConstants& constants,
                                 const ModelStateBytes& per_gpu);

// The terms of the breakdown in GB (the phases not yet composed).
MemoryBreakdown TermsOf(const ModelStateBytes& per_gpu,
                        double nf4_working_bytes,
                        const ActivationBytes& activations,
                        double optimizer_step_working_bytes);

// Allocated memory at each phase of a step, from the breakdown's terms.
double ForwardPhaseGb(const Recipe& recipe, const MemoryBreakdown& terms);
double BackwardPhaseGb(const Recipe& recipe, const MemoryBreakdown& terms);
double OptimizerStepPhaseGb(const MemoryBreakdown& terms);
double ModelSetupPhaseGb(const Recipe& recipe,
                         const MemoryModelConstants& constants,
                         const RecipeShape& shape, const MemoryBreakdown& terms,
                         double unsharded_model_bytes);
// Sets allocated_gb and peak_phase: the largest phase, the earliest on a tie.
void SelectPeakPhase(MemoryBreakdown& breakdown);
// Reserved: each phase's short-lived memory plus the allocator's slack.
double ReservedGb(const MemoryModelConstants& constants,
                  const MemoryBreakdown& phases);
// CUDA context, plus NCCL's buffers when the job has more than one GPU.
double FixedOverheadGb(const Recipe& recipe,
                       const MemoryModelConstants& constants);
// Fills the phases, the peak and the overheads of `terms`.
void ComposePhases(const Recipe& recipe, const MemoryModelConstants& constants,
                   const RecipeShape& shape, double unsharded_model_bytes,
                   MemoryBreakdown& terms);

}  // namespace placement::core::memory_model_internal

#endif  // PLACEMENT_CORE_MODELS_MEMORY_MODEL_PHASES_H_
