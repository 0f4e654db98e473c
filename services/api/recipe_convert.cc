#include "services/api/recipe_convert.h"

namespace placement::services {
namespace {

// The proto and core enums are declared with the same values in the same
// order (checked by the static_asserts below), so conversion is a cast that
// maps anything unknown to unspecified.
template <typename To, typename From>
To EnumCast(From value, int max) {
  const int number = static_cast<int>(value);
  return number >= 0 && number <= max ? static_cast<To>(number) : To{};
}

static_assert(static_cast<int>(core::FineTuneMethod::kHeadOnly) ==
              v1::FINE_TUNE_METHOD_HEAD_ONLY);
static_assert(static_cast<int>(core::Precision::kNf4) == v1::PRECISION_NF4);
static_assert(static_cast<int>(core::Optimizer::kSgd) == v1::OPTIMIZER_SGD);
static_assert(static_cast<int>(core::Parallelism::kPipeline) ==
              v1::PARALLELISM_PIPELINE);
static_assert(static_cast<int>(core::Offload::kNvme) == v1::OFFLOAD_NVME);
static_assert(static_cast<int>(core::Interconnect::kHostMemory) ==
              v1::INTERCONNECT_HOST_MEMORY);
static_assert(static_cast<int>(core::RunOutcome::kHardwareError) ==
              v1::RUN_OUTCOME_HARDWARE_ERROR);

}  // namespace

core::Precision PrecisionFromProto(v1::Precision precision) {
  return EnumCast<core::Precision>(precision, v1::Precision_MAX);
}
v1::Precision PrecisionToProto(core::Precision precision) {
  return EnumCast<v1::Precision>(precision, v1::Precision_MAX);
}
core::FineTuneMethod MethodFromProto(v1::FineTuneMethod method) {
  return EnumCast<core::FineTuneMethod>(method, v1::FineTuneMethod_MAX);
}
v1::FineTuneMethod MethodToProto(core::FineTuneMethod method) {
  return EnumCast<v1::FineTuneMethod>(method, v1::FineTuneMethod_MAX);
}
core::Offload OffloadFromProto(v1::Offload offload) {
  return EnumCast<core::Offload>(offload, v1::Offload_MAX);
}
v1::Offload OffloadToProto(core::Offload offload) {
  return EnumCast<v1::Offload>(offload, v1::Offload_MAX);
}
core::Interconnect InterconnectFromProto(v1::Interconnect interconnect) {
  return EnumCast<core::Interconnect>(interconnect, v1::Interconnect_MAX);
}
v1::Interconnect InterconnectToProto(core::Interconnect interconnect) {
  return EnumCast<v1::Interconnect>(interconnect, v1::Interconnect_MAX);
}
core::RunOutcome OutcomeFromProto(v1::RunOutcome outcome) {
  return EnumCast<core::RunOutcome>(outcome, v1::RunOutcome_MAX);
}
v1::RunOutcome OutcomeToProto(core::RunOutcome outcome) {
  return EnumCast<v1::RunOutcome>(outcome, v1::RunOutcome_MAX);
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
  recipe.optimizer =
      EnumCast<core::Optimizer>(in.optimizer(), v1::Optimizer_MAX);
  recipe.activation_checkpointing = in.activation_checkpointing();
  recipe.flash_attention = in.flash_attention();
  recipe.gpu_count = in.gpu_count();
  recipe.parallelism =
      EnumCast<core::Parallelism>(in.parallelism(), v1::Parallelism_MAX);
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
  out.set_optimizer(
      EnumCast<v1::Optimizer>(recipe.optimizer, v1::Optimizer_MAX));
  out.set_activation_checkpointing(recipe.activation_checkpointing);
  out.set_flash_attention(recipe.flash_attention);
  out.set_gpu_count(recipe.gpu_count);
  out.set_parallelism(
      EnumCast<v1::Parallelism>(recipe.parallelism, v1::Parallelism_MAX));
  out.set_tensor_parallel_degree(recipe.tensor_parallel_degree);
  out.set_pipeline_parallel_degree(recipe.pipeline_parallel_degree);
  out.set_data_parallel_degree(recipe.data_parallel_degree);
  return out;
}

}  // namespace placement::services
