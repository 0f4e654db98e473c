#include "core/recipe.h"

#include <algorithm>
#include <cstdio>
#include <limits>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/adapter_modules.h"
#include "core/enum_names.h"
#include "core/fnv1a.h"

namespace placement::core {
namespace {

// The recipe-key text of the attention implementation. The former boolean
// could not say "false" on the wire (proto3), so a stored "flash=0" is a
// recipe that left attention to its framework: SDPA, which therefore keeps
// that text and every stored key stays valid. FLASH keeps the former
// "true"; EAGER, which could not be said before, is new.
const char* AttentionKeyText(AttentionImplementation attention) {
  switch (attention) {
    case AttentionImplementation::kFlash:
      return "1";
    case AttentionImplementation::kEager:
      return "eager";
    case AttentionImplementation::kSdpa:
    case AttentionImplementation::kUnspecified:
      break;
  }
  return "0";
}

// LitGPT's adapter defaults (litgpt/adapter.py Config): prompts of 10
// vectors from layer 2 on, one gate per attention head of those layers.
constexpr int64_t kLlamaAdapterPromptLength = 10;
constexpr int kLlamaAdapterStartLayer = 2;

int64_t AdapterParams(const Recipe& recipe, const ModelArchitecture& a) {
  const int64_t r = recipe.lora_rank;
  int64_t per_layer = 0;
  for (const std::string& m : recipe.target_modules) {
    // Normalized recipes hold canonical names already (the planner calls
    // this for every configuration it weighs).
    const bool canonical = m == "q" || m == "k" || m == "v" || m == "o" ||
                           m == "gate" || m == "up" || m == "down";
    const std::string& c = canonical ? m : CanonicalModule(m);
    const Projection p = ProjectionOf(c, a);
    switch (recipe.adapter) {
      case AdapterType::kDora:  // + the magnitude of each output feature
        per_layer += r * (p.in + p.out) + p.out;
        break;
      case AdapterType::kLoha:  // two pairs of rank r
        per_layer += 2 * r * (p.in + p.out);
        break;
      case AdapterType::kVera:  // d (r) and b (out) scaling vectors
        per_layer += p.out == 0 ? 0 : r + p.out;
        break;
      case AdapterType::kIa3:  // PEFT rescales the input of feed-forward
        per_layer += c == "down" ? p.in : p.out;
        break;
      case AdapterType::kLlamaAdapter:
      case AdapterType::kLlamaAdapterV2:
        break;  // no target modules
      case AdapterType::kUnspecified:
      case AdapterType::kLora:
        per_layer += r * (p.in + p.out);
        break;
    }
  }
  int64_t total = per_layer * a.num_layers;
  if (recipe.adapter == AdapterType::kLlamaAdapter ||
      recipe.adapter == AdapterType::kLlamaAdapterV2) {
    const int64_t adapted_layers =
        std::max(0, a.num_layers - kLlamaAdapterStartLayer);
    total += adapted_layers * (kLlamaAdapterPromptLength * a.hidden_size +
                               a.num_attention_heads);
  }
  if (recipe.adapter == AdapterType::kLlamaAdapterV2) {
    // A bias and a scale per output feature of every linear layer and of
    // the output head; the two norms of each layer and the final one.
    int64_t outputs_per_layer = 0;
    for (const std::string& m : CanonicalTargetModules()) {
      outputs_per_layer += ProjectionOf(m, a).out;
    }
    total += 2 * (outputs_per_layer * a.num_layers + int64_t{a.vocab_size});
    total += (2 * int64_t{a.num_layers} + 1) * a.hidden_size;
  }
  return total;
}

int DivideOr(int total, int divisor, int fallback) {
  if (divisor <= 0 || total % divisor != 0) return fallback;
  return total / divisor;
}

}  // namespace

const std::vector<std::string>& CanonicalTargetModules() {
  static const auto* const kModules =
      new std::vector<std::string>{"q", "k", "v", "o", "gate", "up", "down"};
  return *kModules;
}

Projection ProjectionOf(absl::string_view module, const ModelArchitecture& a) {
  const int64_t h = a.hidden_size, f = a.intermediate_size;
  if (module == "q") return {h, a.QueryDim()};
  if (module == "k" || module == "v") return {h, a.KvDim()};
  if (module == "o") return {a.QueryDim(), h};
  if (module == "gate") return a.gated_mlp ? Projection{h, f} : Projection{};
  if (module == "up") return {h, f};
  if (module == "down") return {f, h};
  return {};
}

void NormalizeLayout(Recipe* recipe) {
  Recipe& r = *recipe;
  if (r.parallelism == Parallelism::kUnspecified) {
    r.parallelism = r.gpu_count == 1 ? Parallelism::kSingle : Parallelism::kDdp;
  }
  int tp = r.tensor_parallel_degree, pp = r.pipeline_parallel_degree,
      dp = r.data_parallel_degree;
  switch (r.parallelism) {
    case Parallelism::kSingle:
      tp = tp == 0 ? 1 : tp;
      pp = pp == 0 ? 1 : pp;
      dp = dp == 0 ? 1 : dp;
      break;
    case Parallelism::kTensor:
      if (pp == 0) pp = 1;
      if (dp == 0) dp = 1;
      if (tp == 0) tp = DivideOr(r.gpu_count, pp * dp, 0);
      break;
    case Parallelism::kPipeline:
      if (tp == 0) tp = 1;
      if (dp == 0) dp = 1;
      if (pp == 0) pp = DivideOr(r.gpu_count, tp * dp, 0);
      break;
    default:  // data-parallel flavours
      if (tp == 0) tp = 1;
      if (pp == 0) pp = 1;
      if (dp == 0) dp = DivideOr(r.gpu_count, tp * pp, 0);
      break;
  }
  r.tensor_parallel_degree = tp;
  r.pipeline_parallel_degree = pp;
  r.data_parallel_degree = dp;
}

namespace {

// An adapter's target modules: canonical names ("all-linear" expanded;
// unknown names kept so that validation can name them), PEFT's defaults when
// none are given, in canonical order without duplicates.
std::vector<std::string> NormalizeTargetModules(const Recipe& r) {
  std::vector<std::string> modules;
  for (const std::string& name : r.target_modules) {
    if (IsAllLinear(name)) {
      for (const auto& m : CanonicalTargetModules()) modules.push_back(m);
    } else if (std::string c = CanonicalModule(name); !c.empty()) {
      modules.push_back(c);
    } else {
      modules.push_back(name);  // kept so that validation can name it
    }
  }
  if (modules.empty() && AdapterHasTargets(r.adapter)) {
    // PEFT's Llama defaults.
    modules = r.adapter == AdapterType::kIa3
                  ? std::vector<std::string>{"k", "v", "down"}
                  : std::vector<std::string>{"q", "v"};
  }
  const auto& order = CanonicalTargetModules();
  auto rank_of = [&](const std::string& m) {
    auto it = std::find(order.begin(), order.end(), m);
    return it == order.end() ? order.size() : it - order.begin();
  };
  std::stable_sort(modules.begin(), modules.end(),
                   [&](const std::string& a, const std::string& b) {
                     const auto ra = rank_of(a), rb = rank_of(b);
                     return ra != rb ? ra < rb : a < b;
                   });
  modules.erase(std::unique(modules.begin(), modules.end()), modules.end());
  return modules;
}

}  // namespace

Recipe NormalizeRecipe(Recipe r) {
  if (absl::EqualsIgnoreCase(r.model, kCustomModel)) {
    r.model = kCustomModel;
  } else {
    if (auto arch = FindModel(r.model); arch.ok()) r.model = arch->name;
    r.custom_architecture = ModelArchitecture{};
  }
  if (r.micro_batch_size == 0) r.micro_batch_size = 1;
  if (r.gradient_accumulation_steps == 0) r.gradient_accumulation_steps = 1;
  if (r.gpu_count == 0) r.gpu_count = 1;
  if (r.optimizer == Optimizer::kUnspecified) r.optimizer = Optimizer::kAdamW;
  // What current frameworks do: SDPA (HF transformers since 4.36, PyTorch
  // 2.x), which no catalog SKU lacks; no recomputation.
  if (r.attention == AttentionImplementation::kUnspecified) {
    r.attention = AttentionImplementation::kSdpa;
  }
  if (r.activation_checkpointing == ActivationCheckpointing::kUnspecified) {
    r.activation_checkpointing = ActivationCheckpointing::kOff;
  }
  if (r.precision == Precision::kUnspecified) {
    r.precision =
        r.method == FineTuneMethod::kQlora ? Precision::kNf4 : Precision::kBf16;
  }
  if (r.precision != Precision::kNf4) r.double_quantization = false;
  // FP32 + fp32_master_weights means, for an adapter recipe, an fp32 base
  // computed in 16 bits (autocast, FSDP MixedPrecision over an fp32 model);
  // a full fine-tune's 16-bit compute over fp32 weights is BF16 + master.
  if (r.precision == Precision::kFp32 && !IsAdapter(r.method)) {
    r.fp32_master_weights = false;
  }

  // The adapter type is kept as given for other methods, so that
  // validation refuses it rather than planning a different recipe.
  if (IsAdapter(r.method) && r.adapter == AdapterType::kUnspecified) {
    r.adapter = AdapterType::kLora;
  }
  if (IsAdapter(r.method)) {
    r.target_modules = NormalizeTargetModules(r);
  } else {
    r.lora_rank = 0;
    r.target_modules.clear();
  }

  NormalizeLayout(&r);
  return r;
}

absl::StatusOr<ModelArchitecture> ResolveArchitecture(const Recipe& recipe) {
  if (absl::EqualsIgnoreCase(recipe.model, kCustomModel)) {
    ModelArchitecture arch = recipe.custom_architecture;
    if (arch.name.empty()) arch.name = kCustomModel;
    return arch;
  }
  return FindModel(recipe.model);
}

std::string RecipeKeyText(const Recipe& input) {
  const Recipe r = NormalizeRecipe(input);
  std::string text = absl::StrCat("v1;model=", r.model);
  if (r.model == kCustomModel) {
    const ModelArchitecture& a = r.custom_architecture;
    absl::StrAppend(&text, ";arch=", a.hidden_size, "/", a.num_layers, "/",
                    a.num_attention_heads, "/", a.num_kv_heads, "/", a.head_dim,
                    "/", a.intermediate_size, "/", a.vocab_size, "/",
                    a.tied_embeddings, a.gated_mlp, a.qkv_bias, "/",
                    a.Params());
  }
  absl::StrAppend(&text, ";method=", FineTuneMethodName(r.method));
  if (IsAdapter(r.method)) {
    absl::StrAppend(&text, ";rank=", r.lora_rank,
                    ";targets=", absl::StrJoin(r.target_modules, ","));
  }
  absl::StrAppend(&text, ";seq=", r.sequence_length, ";mb=", r.micro_batch_size,
                  ";ga=", r.gradient_accumulation_steps,
                  ";precision=", PrecisionName(r.precision),
                  ";master32=", r.fp32_master_weights ? 1 : 0,
                  ";dq=", r.double_quantization ? 1 : 0,
                  ";opt=", OptimizerName(r.optimizer),
                  ";ckpt=", RecomputesActivations(r) ? "1" : "0",
                  ";flash=", AttentionKeyText(r.attention),
                  ";par=", ParallelismName(r.parallelism),
                  ";gpus=", r.gpu_count, ";tp=", r.tensor_parallel_degree,
                  ";pp=", r.pipeline_parallel_degree,
                  ";dp=", r.data_parallel_degree);
  // Fields added later are written only when set, so that the keys of
  // recipes that leave them unspecified (and of stored evidence) stay
  // unchanged. reported_peak is not part of the key (see recipe.h).
  if (r.loss != LossImplementation::kUnspecified) {
    absl::StrAppend(&text, ";loss=", LossImplementationName(r.loss));
  }
  if (r.packing != SequencePacking::kUnspecified) {
    absl::StrAppend(&text, ";packing=", SequencePackingName(r.packing));
    if (r.mean_tokens_per_sample > 0) {
      absl::StrAppend(&text, ";mean_tokens=", r.mean_tokens_per_sample);
    }
  }
  if (r.framework != TrainingFramework::kUnspecified) {
    absl::StrAppend(&text, ";framework=", TrainingFrameworkName(r.framework));
  }
  // LORA (what every key before the field meant) is not written.
  if (IsAdapter(r.method) && r.adapter != AdapterType::kLora) {
    absl::StrAppend(&text, ";adapter=", AdapterTypeName(r.adapter));
  }
  return text;
}

std::string RecipeKey(const Recipe& recipe) {
  const uint64_t hash = Fnv1a64(RecipeKeyText(recipe));
  char hex[17];
  std::snprintf(hex, sizeof(hex), "%016llx",
                static_cast<unsigned long long>(hash));
  return absl::StrCat("rk1-", hex);
}

int64_t TrainableParams(const Recipe& recipe, const ModelArchitecture& a) {
  switch (recipe.method) {
    case FineTuneMethod::kFull:
      return a.Params();
    case FineTuneMethod::kHeadOnly:
      return int64_t{a.vocab_size} * a.hidden_size;
    case FineTuneMethod::kLora:
    case FineTuneMethod::kQlora:
      return AdapterParams(recipe, a);
    case FineTuneMethod::kUnspecified:
      break;
  }
  return 0;
}

int64_t LohaUpdateElementsPerLayer(const Recipe& recipe,
                                   const ModelArchitecture& a) {
  if (!IsAdapter(recipe.method) || recipe.adapter != AdapterType::kLoha) {
    return 0;
  }
  int64_t elements = 0;
  for (const std::string& m : recipe.target_modules) {
    const Projection p = ProjectionOf(m, a);
    elements += p.in * p.out;
  }
  return elements;
}

std::string DescribeSettings(const Recipe& input) {
  const Recipe r = NormalizeRecipe(input);
  std::string text =
      absl::StrCat("model=", r.model, " method=", FineTuneMethodName(r.method));
  if (IsAdapter(r.method)) {
    if (r.adapter != AdapterType::kLora) {
      absl::StrAppend(&text, " adapter_type=", AdapterTypeName(r.adapter));
    }
    if (AdapterHasRank(r.adapter)) {
      absl::StrAppend(&text, " lora_rank=", r.lora_rank);
    }
    if (AdapterHasTargets(r.adapter)) {
      absl::StrAppend(&text,
                      " target_modules=", absl::StrJoin(r.target_modules, ","));
    }
  }
  absl::StrAppend(
      &text, " sequence_length=", r.sequence_length,
      " micro_batch_size=", r.micro_batch_size,
      " gradient_accumulation_steps=", r.gradient_accumulation_steps,
      " precision=", PrecisionName(r.precision),
      r.fp32_master_weights ? "+fp32_master" : "",
      r.double_quantization ? "+double_quant" : "",
      " optimizer=", OptimizerName(r.optimizer),
      " activation_checkpointing=", RecomputesActivations(r) ? "on" : "off",
      " attention=", AttentionImplementationName(r.attention),
      " parallelism=", ParallelismName(r.parallelism),
      " gpu_count=", r.gpu_count, " (tp=", r.tensor_parallel_degree,
      " pp=", r.pipeline_parallel_degree, " dp=", r.data_parallel_degree, ")");
  if (r.loss != LossImplementation::kUnspecified) {
    absl::StrAppend(&text, " loss=", LossImplementationName(r.loss));
  }
  if (r.packing != SequencePacking::kUnspecified) {
    absl::StrAppend(&text, " packing=", SequencePackingName(r.packing));
    if (r.mean_tokens_per_sample > 0) {
      absl::StrAppend(&text,
                      " mean_tokens_per_sample=", r.mean_tokens_per_sample);
    }
  }
  if (r.framework != TrainingFramework::kUnspecified) {
    absl::StrAppend(&text, " framework=", TrainingFrameworkName(r.framework));
  }
  return text;
}

bool ShardsModel(const Recipe& r) {
  return r.tensor_parallel_degree > 1 || r.pipeline_parallel_degree > 1 ||
         ((r.parallelism == Parallelism::kZero3 ||
           r.parallelism == Parallelism::kFsdp) &&
          r.gpu_count > 1);
}

bool RecomputesActivations(const Recipe& r) {
  return r.activation_checkpointing == ActivationCheckpointing::kOn;
}

bool MaterializesAttentionScores(const Recipe& r) {
  return r.attention == AttentionImplementation::kEager;
}

const char* AttentionImplementationName(AttentionImplementation attention) {
  switch (attention) {
    case AttentionImplementation::kEager:
      return "EAGER";
    case AttentionImplementation::kSdpa:
      return "SDPA";
    case AttentionImplementation::kFlash:
      return "FLASH";
    case AttentionImplementation::kUnspecified:
      break;
  }
  return "UNSPECIFIED";
}

const char* ActivationCheckpointingName(ActivationCheckpointing checkpointing) {
  switch (checkpointing) {
    case ActivationCheckpointing::kOff:
      return "OFF";
    case ActivationCheckpointing::kOn:
      return "ON";
    case ActivationCheckpointing::kUnspecified:
      break;
  }
  return "UNSPECIFIED";
}

const char* FineTuneMethodName(FineTuneMethod method) {
  switch (method) {
    case FineTuneMethod::kFull:
      return "FULL";
    case FineTuneMethod::kLora:
      return "LORA";
    case FineTuneMethod::kQlora:
      return "QLORA";
    case FineTuneMethod::kHeadOnly:
      return "HEAD_ONLY";
    case FineTuneMethod::kUnspecified:
      break;
  }
  return "UNSPECIFIED";
}

const char* PrecisionName(Precision precision) {
  switch (precision) {
    case Precision::kFp32:
      return "FP32";
    case Precision::kBf16:
      return "BF16";
    case Precision::kFp16:
      return "FP16";
    case Precision::kFp8:
      return "FP8";
    case Precision::kInt8:
      return "INT8";
    case Precision::kNf4:
      return "NF4";
    case Precision::kUnspecified:
      break;
  }
  return "UNSPECIFIED";
}

const char* OptimizerName(Optimizer optimizer) {
  switch (optimizer) {
    case Optimizer::kAdamW:
      return "ADAMW";
    case Optimizer::kAdamW8bit:
      return "ADAMW_8BIT";
    case Optimizer::kPagedAdamW8bit:
      return "PAGED_ADAMW_8BIT";
    case Optimizer::kSgd:
      return "SGD";
    case Optimizer::kUnspecified:
      break;
  }
  return "UNSPECIFIED";
}

const char* ParallelismName(Parallelism parallelism) {
  switch (parallelism) {
    case Parallelism::kSingle:
      return "SINGLE";
    case Parallelism::kDdp:
      return "DDP";
    case Parallelism::kZero2:
      return "ZERO2";
    case Parallelism::kZero3:
      return "ZERO3";
    case Parallelism::kFsdp:
      return "FSDP";
    case Parallelism::kTensor:
      return "TENSOR";
    case Parallelism::kPipeline:
      return "PIPELINE";
    case Parallelism::kUnspecified:
      break;
  }
  return "UNSPECIFIED";
}

const char* LossImplementationName(LossImplementation loss) {
  switch (loss) {
    case LossImplementation::kStandardFp32Upcast:
      return "STANDARD_FP32_UPCAST";
    case LossImplementation::kChunkedCrossEntropy:
      return "CHUNKED_CROSS_ENTROPY";
    case LossImplementation::kFusedLinearCrossEntropy:
      return "FUSED_LINEAR_CROSS_ENTROPY";
    case LossImplementation::kUnspecified:
      break;
  }
  return "UNSPECIFIED";
}

const char* SequencePackingName(SequencePacking packing) {
  switch (packing) {
    case SequencePacking::kPacked:
      return "PACKED";
    case SequencePacking::kPaddedPerBatch:
      return "PADDED_PER_BATCH";
    case SequencePacking::kUnspecified:
      break;
  }
  return "UNSPECIFIED";
}

const char* TrainingFrameworkName(TrainingFramework framework) {
  switch (framework) {
    case TrainingFramework::kHfTransformersPeft:
      return "HF_TRANSFORMERS_PEFT";
    case TrainingFramework::kTorchtune:
      return "TORCHTUNE";
    case TrainingFramework::kNemo:
      return "NEMO";
    case TrainingFramework::kLitgpt:
      return "LITGPT";
    case TrainingFramework::kAxolotl:
      return "AXOLOTL";
    case TrainingFramework::kDeepspeed:
      return "DEEPSPEED";
    case TrainingFramework::kOther:
      return "OTHER";
    case TrainingFramework::kUnspecified:
      break;
  }
  return "UNSPECIFIED";
}

const char* PeakMemoryKindName(PeakMemoryKind kind) {
  switch (kind) {
    case PeakMemoryKind::kAllocated:
      return "ALLOCATED";
    case PeakMemoryKind::kReserved:
      return "RESERVED";
    case PeakMemoryKind::kDeviceUsed:
      return "DEVICE_USED";
    case PeakMemoryKind::kUnspecified:
      break;
  }
  return "UNSPECIFIED";
}

const char* AdapterTypeName(AdapterType adapter) {
  switch (adapter) {
    case AdapterType::kLora:
      return "LORA";
    case AdapterType::kDora:
      return "DORA";
    case AdapterType::kLoha:
      return "LOHA";
    case AdapterType::kVera:
      return "VERA";
    case AdapterType::kIa3:
      return "IA3";
    case AdapterType::kLlamaAdapter:
      return "LLAMA_ADAPTER";
    case AdapterType::kLlamaAdapterV2:
      return "LLAMA_ADAPTER_V2";
    case AdapterType::kUnspecified:
      break;
  }
  return "UNSPECIFIED";
}

std::optional<FineTuneMethod> ParseFineTuneMethod(absl::string_view name) {
  return ParseEnumName<FineTuneMethod, FineTuneMethod::kHeadOnly>(
      name, FineTuneMethodName);
}

std::optional<Precision> ParsePrecision(absl::string_view name) {
  return ParseEnumName<Precision, Precision::kNf4>(name, PrecisionName);
}

std::optional<Optimizer> ParseOptimizer(absl::string_view name) {
  return ParseEnumName<Optimizer, Optimizer::kSgd>(name, OptimizerName);
}

std::optional<Parallelism> ParseParallelism(absl::string_view name) {
  return ParseEnumName<Parallelism, Parallelism::kPipeline>(name,
                                                            ParallelismName);
}

std::optional<AttentionImplementation> ParseAttentionImplementation(
    absl::string_view name) {
  return ParseEnumName<AttentionImplementation,
                       AttentionImplementation::kFlash>(
      name, AttentionImplementationName);
}

std::optional<ActivationCheckpointing> ParseActivationCheckpointing(
    absl::string_view name) {
  return ParseEnumName<ActivationCheckpointing, ActivationCheckpointing::kOn>(
      name, ActivationCheckpointingName);
}

std::optional<LossImplementation> ParseLossImplementation(
    absl::string_view name) {
  return ParseEnumName<LossImplementation,
                       LossImplementation::kFusedLinearCrossEntropy>(
      name, LossImplementationName);
}

std::optional<SequencePacking> ParseSequencePacking(absl::string_view name) {
  return ParseEnumName<SequencePacking, SequencePacking::kPaddedPerBatch>(
      name, SequencePackingName);
}

std::optional<TrainingFramework> ParseTrainingFramework(
    absl::string_view name) {
  return ParseEnumName<TrainingFramework, TrainingFramework::kOther>(
      name, TrainingFrameworkName);
}

std::optional<PeakMemoryKind> ParsePeakMemoryKind(absl::string_view name) {
  return ParseEnumName<PeakMemoryKind, PeakMemoryKind::kDeviceUsed>(
      name, PeakMemoryKindName);
}

std::optional<AdapterType> ParseAdapterType(absl::string_view name) {
  return ParseEnumName<AdapterType, AdapterType::kLlamaAdapterV2>(
      name, AdapterTypeName);
}

}  // namespace placement::core
