#include <cstdint>
#include <limits>
#include <string>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/adapter_modules.h"
#include "core/model_catalog.h"
#include "core/recipe.h"

// ValidateRecipe and ValidateLayout (declared in core/recipe.h).

namespace placement::core {

namespace {

// Collects violations, each field named under a prefix ("recipe.").
class Violations {
 public:
  explicit Violations(const std::string& field_prefix)
      : field_prefix_(field_prefix) {}

  void Add(absl::string_view field, std::string description) {
    violations_.push_back(
        {absl::StrCat(field_prefix_, field), std::move(description)});
  }
  FieldViolations& violations() { return violations_; }

 private:
  const std::string& field_prefix_;
  FieldViolations violations_;
};

// A catalog model (or a near miss named), or a valid custom architecture.
void ValidateModel(const Recipe& r, Violations* v) {
  if (r.model.empty()) {
    v->Add("model", "must name a catalog model or \"custom\"");
  } else if (absl::EqualsIgnoreCase(r.model, kCustomModel)) {
    for (const auto& [field, description] :
         ArchitectureViolations(r.custom_architecture)) {
      v->Add(absl::StrCat("custom_architecture.", field), description);
    }
  } else if (!FindModel(r.model).ok()) {
    const std::vector<std::string> candidates = ModelCandidates(r.model);
    v->Add(
        "model",
        absl::StrCat("'", r.model, "' is not in the model catalog",
                     candidates.empty()
                         ? ""
                         : absl::StrCat("; did you mean ",
                                        absl::StrJoin(candidates, " or "), "?"),
                     "; or use \"custom\" with explicit dimensions"));
  }
}

// The method, and the adapter type, rank and target modules it allows.
void ValidateAdapter(const Recipe& r, Violations* v) {
  if (r.method == FineTuneMethod::kUnspecified) {
    v->Add("method", "must be FULL, LORA, QLORA or HEAD_ONLY");
  }
  const bool known_adapter = static_cast<int>(r.adapter) >= 0 &&
                             r.adapter <= AdapterType::kLlamaAdapterV2;
  if (!known_adapter) {
    v->Add("adapter_type", "unknown adapter type");
  } else if (r.adapter != AdapterType::kUnspecified && !IsAdapter(r.method)) {
    v->Add("adapter_type", "must be unset unless the method is LoRA or QLoRA");
  }
  if (IsAdapter(r.method) && known_adapter) {
    if (!AdapterHasRank(r.adapter)) {
      if (r.lora_rank != 0) {
        v->Add("lora_rank",
               absl::StrCat("must be unset: ", AdapterTypeName(r.adapter),
                            " has no rank"));
      }
    } else if (r.lora_rank < 1 || r.lora_rank > kMaxLoraRank) {
      v->Add("lora_rank", absl::StrCat("must be between 1 and ", kMaxLoraRank,
                                       " for LoRA and QLoRA"));
    }
    if (!AdapterHasTargets(r.adapter) && !r.target_modules.empty()) {
      v->Add("target_modules",
             absl::StrCat("must be empty: ", AdapterTypeName(r.adapter),
                          " adapts layers, not chosen modules"));
    }
    for (const std::string& module : r.target_modules) {
      if (!IsAllLinear(module) && CanonicalModule(module).empty()) {
        v->Add("target_modules", absl::StrCat("unknown module '", module,
                                              "'; use q, k, v, o, "
                                              "gate, up, down or all-linear"));
      }
    }
  } else if (!IsAdapter(r.method)) {
    if (r.lora_rank != 0) {
      v->Add("lora_rank", "must be unset unless the method is LoRA or QLoRA");
    }
    if (!r.target_modules.empty()) {
      v->Add("target_modules",
             "must be empty unless the method is LoRA or QLoRA");
    }
  }
}

// Sequence length, micro-batch and gradient accumulation within bounds.
void ValidateBatchShape(const Recipe& r, Violations* v) {
  if (r.sequence_length < 1 || r.sequence_length > kMaxSequenceLength) {
    v->Add("sequence_length",
           absl::StrCat("must be between 1 and ", kMaxSequenceLength));
  }
  if (r.micro_batch_size < 1 || r.micro_batch_size > kMaxMicroBatchSize) {
    v->Add("micro_batch_size",
           absl::StrCat("must be between 1 and ", kMaxMicroBatchSize));
  }
  if (r.gradient_accumulation_steps < 1 ||
      r.gradient_accumulation_steps > kMaxGradientAccumulation) {
    v->Add("gradient_accumulation_steps",
           absl::StrCat("must be between 1 and ", kMaxGradientAccumulation));
  }
}

// The precision the method allows, and double quantization only for NF4.
void ValidatePrecision(const Recipe& r, Violations* v) {
  if (r.precision == Precision::kUnspecified) {
    v->Add("precision", "must be set");
  } else if (r.method == FineTuneMethod::kQlora &&
             r.precision != Precision::kNf4) {
    v->Add("precision", "QLoRA means an NF4 base: precision must be NF4");
  } else if (r.precision == Precision::kNf4 &&
             r.method != FineTuneMethod::kQlora) {
    v->Add("precision", "an NF4 base is only trained as QLoRA");
  } else if (r.method == FineTuneMethod::kFull &&
             r.precision == Precision::kInt8) {
    v->Add("precision", "full fine-tuning needs float weights, not INT8");
  }
  if (r.double_quantization && r.precision != Precision::kNf4) {
    v->Add("double_quantization", "only applies to an NF4 base");
  }
}

// The optimizer, the enums of the loss, packing, framework and reported
// peak, and the mean sample length packing allows.
void ValidateTrainingOptions(const Recipe& r, Violations* v) {
  if (r.optimizer == Optimizer::kUnspecified) {
    v->Add("optimizer", "must be set");
  }
  if (static_cast<int>(r.loss) < 0 ||
      r.loss > LossImplementation::kFusedLinearCrossEntropy) {
    v->Add("loss_implementation", "unknown loss implementation");
  }
  if (static_cast<int>(r.packing) < 0 ||
      r.packing > SequencePacking::kPaddedPerBatch) {
    v->Add("sequence_packing", "unknown sequence packing");
  }
  if (static_cast<int>(r.framework) < 0 ||
      r.framework > TrainingFramework::kOther) {
    v->Add("training_framework", "unknown training framework");
  }
  if (static_cast<int>(r.reported_peak) < 0 ||
      r.reported_peak > PeakMemoryKind::kDeviceUsed) {
    v->Add("reported_peak", "unknown peak memory kind");
  }
  if (r.mean_tokens_per_sample != 0) {
    if (r.packing != SequencePacking::kPaddedPerBatch) {
      // Refused rather than cleared: a mean length on data said (or left)
      // packed is a contradiction, and dropping it would silently plan
      // for packed batches.
      v->Add("mean_tokens_per_sample",
             "only applies to sequence_packing PADDED_PER_BATCH");
    } else if (r.mean_tokens_per_sample < 0 ||
               r.mean_tokens_per_sample > r.sequence_length) {
      v->Add("mean_tokens_per_sample", "must be between 1 and sequence_length");
    }
  }
}

}  // namespace

FieldViolations ValidateRecipe(const Recipe& r,
                               const std::string& field_prefix) {
  Violations v(field_prefix);
  ValidateModel(r, &v);
  ValidateAdapter(r, &v);
  ValidateBatchShape(r, &v);
  ValidatePrecision(r, &v);
  ValidateTrainingOptions(r, &v);
  FieldViolations violations = std::move(v.violations());
  int num_layers = std::numeric_limits<int>::max();
  if (auto arch = ResolveArchitecture(r); arch.ok()) {
    num_layers = arch->num_layers;
  }
  for (FieldViolation& layout : ValidateLayout(r, num_layers, field_prefix)) {
    violations.push_back(std::move(layout));
  }
  return violations;
}

FieldViolations ValidateLayout(const Recipe& r, int num_layers,
                               const std::string& field_prefix) {
  FieldViolations violations;
  auto violate = [&](absl::string_view field, std::string description) {
    violations.push_back(
        {absl::StrCat(field_prefix, field), std::move(description)});
  };
  if (r.gpu_count < 1 || r.gpu_count > kMaxGpuCount) {
    violate("gpu_count", absl::StrCat("must be between 1 and ", kMaxGpuCount));
    return violations;
  }
  const int tp = r.tensor_parallel_degree, pp = r.pipeline_parallel_degree,
            dp = r.data_parallel_degree;
  if (tp < 1 || pp < 1 || dp < 1 ||
      int64_t{tp} * pp * dp != int64_t{r.gpu_count}) {
    violate("data_parallel_degree",
            absl::StrCat("tensor (", tp, ") x pipeline (", pp, ") x data (", dp,
                         ") parallel degrees must multiply to gpu_count (",
                         r.gpu_count, ")"));
  }
  switch (r.parallelism) {
    case Parallelism::kUnspecified:
      violate("parallelism", "must be set");
      break;
    case Parallelism::kSingle:
      if (r.gpu_count != 1) {
        violate("parallelism", "SINGLE means exactly one GPU");
      }
      break;
    case Parallelism::kTensor:
      if (tp < 2) violate("tensor_parallel_degree", "TENSOR needs degree >= 2");
      break;
    case Parallelism::kPipeline:
      if (pp < 2) {
        violate("pipeline_parallel_degree", "PIPELINE needs degree >= 2");
      }
      break;
    default:
      if (r.gpu_count < 2) {
        violate("parallelism",
                absl::StrCat(ParallelismName(r.parallelism),
                             " needs at least 2 GPUs; use SINGLE"));
      }
      break;
  }
  if (r.pipeline_parallel_degree > 1 &&
      num_layers < r.pipeline_parallel_degree) {
    violate("pipeline_parallel_degree", "must not exceed the layer count");
  }
  return violations;
}

}  // namespace placement::core
