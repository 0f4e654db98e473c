#include "services/api/recipe_convert.h"

namespace placement::services {
namespace {

// The proto and core enums are declared with the same values in the same
// order, so conversion is a cast that maps a number the target does not
// declare to unspecified. Each pair is declared once below: the cast both
// ways, and a check that both end on the same value, the proto enum's last.
template <typename To, typename From>
To EnumCast(From value, int max) {
  const int number = static_cast<int>(value);
  return number >= 0 && number <= max ? static_cast<To>(number) : To{};
}

template <typename Proto>
struct CoreOf;  // ::type, the core twin of a proto enum
template <typename Core>
struct ProtoOf;  // ::type, the proto twin of a core enum

#define PLACEMENT_ENUM_PAIR(Core, Proto, core_last, proto_last)        \
  template <>                                                          \
  struct CoreOf<Proto> {                                               \
    using type = Core;                                                 \
    static constexpr int kMax = Proto##_MAX;                           \
  };                                                                   \
  template <>                                                          \
  struct ProtoOf<Core> {                                               \
    using type = Proto;                                                \
  };                                                                   \
  static_assert(static_cast<int>(Core::core_last) == v1::proto_last && \
                v1::proto_last == Proto##_MAX)

PLACEMENT_ENUM_PAIR(core::FineTuneMethod, v1::FineTuneMethod, kHeadOnly,
                    FINE_TUNE_METHOD_HEAD_ONLY);
PLACEMENT_ENUM_PAIR(core::Precision, v1::Precision, kNf4, PRECISION_NF4);
PLACEMENT_ENUM_PAIR(core::Optimizer, v1::Optimizer, kSgd, OPTIMIZER_SGD);
PLACEMENT_ENUM_PAIR(core::Parallelism, v1::Parallelism, kPipeline,
                    PARALLELISM_PIPELINE);
PLACEMENT_ENUM_PAIR(core::Offload, v1::Offload, kNvme, OFFLOAD_NVME);
PLACEMENT_ENUM_PAIR(core::Interconnect, v1::Interconnect, kHostMemory,
                    INTERCONNECT_HOST_MEMORY);
PLACEMENT_ENUM_PAIR(core::RunOutcome, v1::RunOutcome, kHardwareError,
                    RUN_OUTCOME_HARDWARE_ERROR);
PLACEMENT_ENUM_PAIR(core::AttentionImplementation, v1::AttentionImplementation,
                    kFlash, ATTENTION_IMPLEMENTATION_FLASH);
PLACEMENT_ENUM_PAIR(core::ActivationCheckpointing, v1::ActivationCheckpointing,
                    kOn, ACTIVATION_CHECKPOINTING_ON);
PLACEMENT_ENUM_PAIR(core::LossImplementation, v1::LossImplementation,
                    kFusedLinearCrossEntropy,
                    LOSS_IMPLEMENTATION_FUSED_LINEAR_CROSS_ENTROPY);
PLACEMENT_ENUM_PAIR(core::SequencePacking, v1::SequencePacking, kPaddedPerBatch,
                    SEQUENCE_PACKING_PADDED_PER_BATCH);
PLACEMENT_ENUM_PAIR(core::TrainingFramework, v1::TrainingFramework, kOther,
                    TRAINING_FRAMEWORK_OTHER);
PLACEMENT_ENUM_PAIR(core::PeakMemoryKind, v1::PeakMemoryKind, kDeviceUsed,
                    PEAK_MEMORY_KIND_DEVICE_USED);
PLACEMENT_ENUM_PAIR(core::AdapterType, v1::AdapterType, kLlamaAdapterV2,
                    ADAPTER_TYPE_LLAMA_ADAPTER_V2);
#undef PLACEMENT_ENUM_PAIR

template <typename Proto>
typename CoreOf<Proto>::type ToCore(Proto value) {
  return EnumCast<typename CoreOf<Proto>::type>(value, CoreOf<Proto>::kMax);
}
template <typename Core>
typename ProtoOf<Core>::type ToProto(Core value) {
  using Proto = typename ProtoOf<Core>::type;
  return EnumCast<Proto>(value, CoreOf<Proto>::kMax);
}

// An enum field that replaced a deprecated boolean (attention for
// flash_attention, activation_checkpointing_mode for
// activation_checkpointing). Reading, the boolean speaks only when the enum
// is unset: true is `when_true`; false cannot say "off" (proto3 cannot tell
// it from unset), so it stays unspecified. Writing, the boolean is set as
// an older reader would have seen it: true for `when_true`.
template <typename Core>
struct EnumReplacingBool {
  using Proto = typename ProtoOf<Core>::type;
  Core when_true;

  Core Read(Proto value, bool deprecated_bool) const {
    if (static_cast<int>(value) == 0 && deprecated_bool) return when_true;
    return ToCore(value);
  }
  Proto Write(Core value, bool* deprecated_bool) const {
    *deprecated_bool = value == when_true;
    return ToProto(value);
  }
};

constexpr EnumReplacingBool<core::AttentionImplementation> kAttention{
    core::AttentionImplementation::kFlash};
constexpr EnumReplacingBool<core::ActivationCheckpointing> kCheckpointing{
    core::ActivationCheckpointing::kOn};

}  // namespace

core::Precision PrecisionFromProto(v1::Precision precision) {
  return ToCore(precision);
}
v1::Precision PrecisionToProto(core::Precision precision) {
  return ToProto(precision);
}
core::FineTuneMethod MethodFromProto(v1::FineTuneMethod method) {
  return ToCore(method);
}
v1::FineTuneMethod MethodToProto(core::FineTuneMethod method) {
  return ToProto(method);
}
core::Offload OffloadFromProto(v1::Offload offload) { return ToCore(offload); }
v1::Offload OffloadToProto(core::Offload offload) { return ToProto(offload); }
core::Interconnect InterconnectFromProto(v1::Interconnect interconnect) {
  return ToCore(interconnect);
}
v1::Interconnect InterconnectToProto(core::Interconnect interconnect) {
  return ToProto(interconnect);
}
core::RunOutcome OutcomeFromProto(v1::RunOutcome outcome) {
  return ToCore(outcome);
}
v1::RunOutcome OutcomeToProto(core::RunOutcome outcome) {
  return ToProto(outcome);
}
core::PeakMemoryKind PeakMemoryKindFromProto(v1::PeakMemoryKind kind) {
  return ToCore(kind);
}
v1::PeakMemoryKind PeakMemoryKindToProto(core::PeakMemoryKind kind) {
  return ToProto(kind);
}

core::Recipe RecipeFromProto(const v1::Recipe& in) {
  core::Recipe recipe;
  recipe.model = in.model();
  if (in.has_custom_architecture()) {
    const v1::ModelArchitecture& a = in.custom_architecture();
    core::ModelArchitecture& arch = recipe.custom_architecture;
    arch.name = a.name();
    arch.hidden_size = a.hidden_size();
    arch.num_layers = a.num_layers();
    arch.num_attention_heads = a.num_attention_heads();
    arch.num_kv_heads = a.num_kv_heads();
    arch.head_dim = a.head_dim();
    arch.intermediate_size = a.intermediate_size();
    arch.vocab_size = a.vocab_size();
    arch.tied_embeddings = a.tied_embeddings();
    arch.gated_mlp = a.gated_mlp();
  }
  recipe.method = MethodFromProto(in.method());
  recipe.lora_rank = in.lora_rank();
  recipe.target_modules.assign(in.target_modules().begin(),
                               in.target_modules().end());
  recipe.sequence_length = in.sequence_length();
  recipe.micro_batch_size = in.micro_batch_size();
  recipe.gradient_accumulation_steps = in.gradient_accumulation_steps();
  recipe.precision = PrecisionFromProto(in.precision());
  recipe.fp32_master_weights = in.fp32_master_weights();
  recipe.double_quantization = in.double_quantization();
  recipe.optimizer = ToCore(in.optimizer());
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
  recipe.attention = kAttention.Read(in.attention(), in.flash_attention());
  recipe.activation_checkpointing = kCheckpointing.Read(
      in.activation_checkpointing_mode(), in.activation_checkpointing());
#pragma GCC diagnostic pop
  recipe.loss = ToCore(in.loss_implementation());
  recipe.packing = ToCore(in.sequence_packing());
  recipe.mean_tokens_per_sample = in.mean_tokens_per_sample();
  recipe.framework = ToCore(in.training_framework());
  recipe.reported_peak = PeakMemoryKindFromProto(in.reported_peak());
  recipe.adapter = ToCore(in.adapter_type());
  recipe.gpu_count = in.gpu_count();
  recipe.parallelism = ToCore(in.parallelism());
  recipe.tensor_parallel_degree = in.tensor_parallel_degree();
  recipe.pipeline_parallel_degree = in.pipeline_parallel_degree();
  recipe.data_parallel_degree = in.data_parallel_degree();
  return recipe;
}

v1::Recipe RecipeToProto(const core::Recipe& recipe) {
  v1::Recipe out;
  out.set_model(recipe.model);
  if (recipe.model == core::kCustomModel) {
    const core::ModelArchitecture& arch = recipe.custom_architecture;
    v1::ModelArchitecture* a = out.mutable_custom_architecture();
    a->set_name(arch.name);
    a->set_hidden_size(arch.hidden_size);
    a->set_num_layers(arch.num_layers);
    a->set_num_attention_heads(arch.num_attention_heads);
    a->set_num_kv_heads(arch.num_kv_heads);
    a->set_head_dim(arch.head_dim);
    a->set_intermediate_size(arch.intermediate_size);
    a->set_vocab_size(arch.vocab_size);
    a->set_tied_embeddings(arch.tied_embeddings);
    a->set_gated_mlp(arch.gated_mlp);
  }
  out.set_method(MethodToProto(recipe.method));
  out.set_lora_rank(recipe.lora_rank);
  for (const std::string& module : recipe.target_modules) {
    out.add_target_modules(module);
  }
  out.set_sequence_length(recipe.sequence_length);
  out.set_micro_batch_size(recipe.micro_batch_size);
  out.set_gradient_accumulation_steps(recipe.gradient_accumulation_steps);
  out.set_precision(PrecisionToProto(recipe.precision));
  out.set_fp32_master_weights(recipe.fp32_master_weights);
  out.set_double_quantization(recipe.double_quantization);
  out.set_optimizer(ToProto(recipe.optimizer));
  // Older readers see the deprecated booleans as they would have been set.
  bool flash_attention = false;
  bool checkpointing = false;
  out.set_attention(kAttention.Write(recipe.attention, &flash_attention));
  out.set_activation_checkpointing_mode(
      kCheckpointing.Write(recipe.activation_checkpointing, &checkpointing));
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
  out.set_flash_attention(flash_attention);
  out.set_activation_checkpointing(checkpointing);
#pragma GCC diagnostic pop
  out.set_loss_implementation(ToProto(recipe.loss));
  out.set_sequence_packing(ToProto(recipe.packing));
  out.set_mean_tokens_per_sample(recipe.mean_tokens_per_sample);
  out.set_training_framework(ToProto(recipe.framework));
  out.set_reported_peak(PeakMemoryKindToProto(recipe.reported_peak));
  out.set_adapter_type(ToProto(recipe.adapter));
  out.set_gpu_count(recipe.gpu_count);
  out.set_parallelism(ToProto(recipe.parallelism));
  out.set_tensor_parallel_degree(recipe.tensor_parallel_degree);
  out.set_pipeline_parallel_degree(recipe.pipeline_parallel_degree);
  out.set_data_parallel_degree(recipe.data_parallel_degree);
  return out;
}

core::PeakMemoryKind RunPeakMemoryKind(const v1::BenchmarkRun& run) {
  const core::PeakMemoryKind kind =
      PeakMemoryKindFromProto(run.peak_memory_kind());
  return kind != core::PeakMemoryKind::kUnspecified
             ? kind
             : PeakMemoryKindFromProto(run.recipe().reported_peak());
}

core::Recipe RunRecipeFromProto(const v1::BenchmarkRun& run) {
  core::Recipe recipe = RecipeFromProto(run.recipe());
  recipe.reported_peak = RunPeakMemoryKind(run);
  return recipe;
}

}  // namespace placement::services
