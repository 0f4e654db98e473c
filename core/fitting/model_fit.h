#ifndef PLACEMENT_CORE_FITTING_MODEL_FIT_H_
#define PLACEMENT_CORE_FITTING_MODEL_FIT_H_

#include <string>
#include <vector>

#include "core/fitting/calibration.h"
#include "core/models/memory_model.h"
#include "core/models/step_time_model.h"
#include "core/pool.h"
#include "core/recipe.h"
#include "core/sku.h"

namespace placement::core {

// One fitted constant: its prior, its fitted value and how many
// observations move it (0: it stayed at its prior).
struct FittedConstant {
  std::string name;
  double prior = 0;
  double value = 0;
  int observations = 0;
};

// What a run says about memory: a measured peak (the recipe says which
// kind, reported_peak, and which framework produced it), or only that it
// ran, or ran out of memory, on a card of some size.
struct MemoryObservation {
  Recipe recipe;  // normalized
  ModelArchitecture arch;
  double measured_gb = 0;  // > 0: a measured peak
  double ran_on_gb = 0;    // > 0: ran (no peak published) on this card
  double oom_on_gb = 0;    // > 0: ran out of memory on this card
};

struct MemoryFit {
  MemoryModelConstants constants;
  std::vector<FittedConstant> fitted;
};

// Fits the loss constants, the NF4 working memory, the optimizer step's
// temporaries, the padded-batch peak factor, the allocator slack and each
// framework's activation and NF4 working-memory scales to the observations,
// robustly and shrunk toward `prior`. Every other constant (the activation
// counts, the CUDA context, each framework's unsharded setup copies) stays
// at the prior.
MemoryFit FitMemoryModel(const std::vector<MemoryObservation>& observations,
                         const MemoryModelConstants& prior);

// A measured throughput (tokens per second per GPU) or step time of a run.
struct StepTimeObservation {
  Recipe recipe;  // normalized
  ModelArchitecture arch;
  GpuSku sku;
  Pool pool;
  double measured_tokens_per_s_per_gpu = 0;  // > 0 when measured
  double measured_step_time_s = 0;           // > 0 when measured
};

struct StepTimeFit {
  StepTimeModelConstants constants;
  std::vector<FittedConstant> fitted;
};

// Fits the SKU family factors (for every family observed), the full and
// adapter method factors, the NF4 dequantization traffic, the per-layer
// overhead and the exposed share of data-parallel traffic, robustly and
// shrunk toward `prior`; base_mfu stays at the prior (it and the factors
// are only defined up to their product).
StepTimeFit FitStepTimeModel(
    const std::vector<StepTimeObservation>& observations,
    const StepTimeModelConstants& prior);

// log(predicted / measured) of one observation under `constants`; for a
// run without a measured peak, how far the predicted device peak is on the
// wrong side of the card (0 when the verdict is right).
double MemoryResidual(const MemoryObservation& observation,
                      const MemoryModelConstants& constants);
double StepTimeResidual(const StepTimeObservation& observation,
                        const StepTimeModelConstants& constants);

}  // namespace placement::core

#endif  // PLACEMENT_CORE_FITTING_MODEL_FIT_H_
