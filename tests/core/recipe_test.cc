#include "core/recipe.h"

#include <set>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace placement::core {
namespace {

using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::Field;
using ::testing::IsEmpty;

Recipe Lora() {
  Recipe r;
  r.model = "llama-3.1-8b";
  r.method = FineTuneMethod::kLora;
  r.lora_rank = 16;
  r.target_modules = {"v_proj", "q_proj", "q"};
  r.sequence_length = 2048;
  return r;
}

TEST(NormalizeRecipeTest, FillsDefaultsAndCanonicalizes) {
  const Recipe r = NormalizeRecipe(Lora());
  EXPECT_EQ(r.model, "Llama-3.1-8B");
  EXPECT_THAT(r.target_modules, ElementsAre("q", "v"));
  EXPECT_EQ(r.micro_batch_size, 1);
  EXPECT_EQ(r.gradient_accumulation_steps, 1);
  EXPECT_EQ(r.precision, Precision::kBf16);
  EXPECT_EQ(r.optimizer, Optimizer::kAdamW);
  EXPECT_EQ(r.parallelism, Parallelism::kSingle);
  EXPECT_EQ(r.data_parallel_degree, 1);
  EXPECT_THAT(ValidateRecipe(r), IsEmpty());
}

TEST(NormalizeRecipeTest, AllLinearExpandsAndFullClearsAdapterFields) {
  Recipe r = Lora();
  r.target_modules = {"all-linear", "down_proj"};
  EXPECT_THAT(NormalizeRecipe(r).target_modules,
              ElementsAre("q", "k", "v", "o", "gate", "up", "down"));
  r.method = FineTuneMethod::kFull;
  const Recipe full = NormalizeRecipe(r);
  EXPECT_EQ(full.lora_rank, 0);
  EXPECT_THAT(full.target_modules, IsEmpty());
  r.method = FineTuneMethod::kQlora;
  EXPECT_EQ(NormalizeRecipe(r).precision, Precision::kNf4);
}

// FP32 + fp32_master_weights is an adapter recipe on an fp32 base computed
// in 16 bits; a full fine-tune says that as BF16 + master, so on FP32 the
// flag means nothing and is cleared (one recipe key for one training).
TEST(NormalizeRecipeTest, Fp32MasterWeightsKeptOnlyForAdapters) {
  Recipe r = Lora();
  r.precision = Precision::kFp32;
  r.fp32_master_weights = true;
  EXPECT_TRUE(NormalizeRecipe(r).fp32_master_weights);
  Recipe plain = r;
  plain.fp32_master_weights = false;
  EXPECT_NE(RecipeKey(r), RecipeKey(plain));
  r.method = FineTuneMethod::kFull;
  EXPECT_FALSE(NormalizeRecipe(r).fp32_master_weights);
}

TEST(NormalizeRecipeTest, DerivesParallelDegrees) {
  Recipe r = Lora();
  r.gpu_count = 8;
  r.parallelism = Parallelism::kTensor;
  r.pipeline_parallel_degree = 2;
  const Recipe n = NormalizeRecipe(r);
  EXPECT_EQ(n.tensor_parallel_degree, 4);
  EXPECT_EQ(n.data_parallel_degree, 1);
  r.parallelism = Parallelism::kFsdp;
  r.pipeline_parallel_degree = 0;
  EXPECT_EQ(NormalizeRecipe(r).data_parallel_degree, 8);
}

TEST(ValidateRecipeTest, ReportsFieldPaths) {
  Recipe r = Lora();
  r.lora_rank = 0;
  r.sequence_length = (1 << 20) + 1;
  r.micro_batch_size = 5000;
  r.target_modules = {"attention"};
  const FieldViolations v = ValidateRecipe(NormalizeRecipe(r));
  EXPECT_THAT(v, Contains(Field(&FieldViolation::field, "recipe.lora_rank")));
  EXPECT_THAT(
      v, Contains(Field(&FieldViolation::field, "recipe.sequence_length")));
  EXPECT_THAT(
      v, Contains(Field(&FieldViolation::field, "recipe.micro_batch_size")));
  EXPECT_THAT(v,
              Contains(Field(&FieldViolation::field, "recipe.target_modules")));
}

TEST(ValidateRecipeTest, QloraNeedsNf4AndDegreesMustMultiply) {
  Recipe r = Lora();
  r.method = FineTuneMethod::kQlora;
  r.precision = Precision::kBf16;
  EXPECT_THAT(ValidateRecipe(NormalizeRecipe(r)),
              ElementsAre(Field(&FieldViolation::field, "recipe.precision")));
  r = Lora();
  r.gpu_count = 8;
  r.parallelism = Parallelism::kTensor;
  r.tensor_parallel_degree = 3;
  EXPECT_THAT(
      ValidateRecipe(NormalizeRecipe(r)),
      Contains(Field(&FieldViolation::field, "recipe.data_parallel_degree")));
  r = Lora();
  r.gpu_count = 2;
  r.parallelism = Parallelism::kSingle;
  EXPECT_THAT(ValidateRecipe(NormalizeRecipe(r)),
              Contains(Field(&FieldViolation::field, "recipe.parallelism")));
  r = Lora();
  r.model = "gpt-5";
  EXPECT_THAT(ValidateRecipe(NormalizeRecipe(r)),
              ElementsAre(Field(&FieldViolation::field, "recipe.model")));
}

TEST(RecipeKeyTest, EqualSettingsGiveEqualKeys) {
  Recipe a = Lora();
  Recipe b = Lora();
  b.model = "LLAMA-3.1-8B";
  b.target_modules = {"q", "v"};
  b.micro_batch_size = 1;  // the default, spelled out
  EXPECT_EQ(RecipeKey(a), RecipeKey(b));
  EXPECT_EQ(RecipeKeyText(a), RecipeKeyText(b));
  // Irrelevant fields for full fine-tuning do not split the key.
  Recipe full_a = a, full_b = a;
  full_a.method = full_b.method = FineTuneMethod::kFull;
  full_b.lora_rank = 64;
  EXPECT_EQ(RecipeKey(full_a), RecipeKey(full_b));
}

TEST(RecipeKeyTest, EverySettingThatMattersChangesTheKey) {
  const std::string base = RecipeKey(Lora());
  auto changed = [&](auto mutate) {
    Recipe r = Lora();
    mutate(r);
    return RecipeKey(r) != base;
  };
  EXPECT_TRUE(changed([](Recipe& r) { r.lora_rank = 32; }));
  EXPECT_TRUE(changed([](Recipe& r) { r.sequence_length = 4096; }));
  EXPECT_TRUE(changed([](Recipe& r) { r.micro_batch_size = 2; }));
  EXPECT_TRUE(changed([](Recipe& r) { r.gradient_accumulation_steps = 8; }));
  EXPECT_TRUE(changed([](Recipe& r) { r.precision = Precision::kFp16; }));
  EXPECT_TRUE(changed([](Recipe& r) { r.optimizer = Optimizer::kSgd; }));
  EXPECT_TRUE(changed([](Recipe& r) {
    r.activation_checkpointing = ActivationCheckpointing::kOn;
  }));
  EXPECT_TRUE(changed(
      [](Recipe& r) { r.attention = AttentionImplementation::kFlash; }));
  EXPECT_TRUE(changed([](Recipe& r) { r.target_modules = {"all-linear"}; }));
}

TEST(RecipeKeyTest, StableAcrossBuildsAndPlatforms) {
  // Pinned: FNV-1a of the canonical text never changes without a version
  // bump of the text ("v1;"). Unspecified attention is SDPA, with the text
  // the former boolean's unset (false) had, so its stored key is unchanged.
  EXPECT_EQ(RecipeKeyText(Lora()),
            "v1;model=Llama-3.1-8B;method=LORA;rank=16;targets=q,v;seq=2048;"
            "mb=1;ga=1;precision=BF16;master32=0;dq=0;opt=ADAMW;ckpt=0;"
            "flash=0;par=SINGLE;gpus=1;tp=1;pp=1;dp=1");
  // Computed independently (Python FNV-1a 64 over the text above).
  EXPECT_EQ(RecipeKey(Lora()), "rk1-c5feac3758c091b1");
  Recipe eager = Lora();
  eager.attention = AttentionImplementation::kEager;
  EXPECT_THAT(RecipeKeyText(eager),
              ::testing::HasSubstr(";ckpt=0;flash=eager;par=SINGLE;"));
  EXPECT_EQ(RecipeKey(eager), "rk1-cc18e52d546e82ad");
}

TEST(RecipeKeyTest, ExplicitAttentionAndCheckpointingKeepTheFormerKeys) {
  // Keys of the former booleans (FNV-1a 64 of the v1 texts, computed
  // independently): an explicit choice must still find its stored evidence.
  auto key = [](ActivationCheckpointing ckpt, AttentionImplementation attn) {
    Recipe r = Lora();
    r.activation_checkpointing = ckpt;
    r.attention = attn;
    return RecipeKey(r);
  };
  constexpr auto kOff = ActivationCheckpointing::kOff;
  constexpr auto kOn = ActivationCheckpointing::kOn;
  constexpr auto kEager = AttentionImplementation::kEager;
  constexpr auto kFlash = AttentionImplementation::kFlash;
  constexpr auto kSdpa = AttentionImplementation::kSdpa;
  // The former false (unset) is SDPA's key; true is FLASH's.
  EXPECT_EQ(key(kOff, kSdpa), "rk1-c5feac3758c091b1");
  EXPECT_EQ(key(kOn, kSdpa), "rk1-bc734cfb99e9c7d0");
  EXPECT_EQ(key(kOn, kFlash), "rk1-27e3bea375ce27bd");
  EXPECT_EQ(key(kOff, kFlash), "rk1-6c725096ff9b9da4");
  // EAGER could not be said before: a key of its own.
  EXPECT_EQ(key(kOff, kEager), "rk1-cc18e52d546e82ad");
  EXPECT_EQ(key(kOn, kEager), "rk1-6800e79e754c7be4");
}

TEST(RecipeKeyTest, MemoryFieldsChangeTheKeyOnlyWhenSet) {
  // Unspecified loss, packing and framework (and any reported peak) keep
  // the pinned key of a recipe that predates them (the key pinned above).
  // FNV-1a 64 of the texts, computed independently.
  Recipe r = Lora();
  r.reported_peak = PeakMemoryKind::kReserved;
  EXPECT_EQ(RecipeKey(r), "rk1-c5feac3758c091b1");
  r.loss = LossImplementation::kChunkedCrossEntropy;
  r.packing = SequencePacking::kPaddedPerBatch;
  r.mean_tokens_per_sample = 350;
  r.framework = TrainingFramework::kTorchtune;
  EXPECT_EQ(RecipeKeyText(r),
            "v1;model=Llama-3.1-8B;method=LORA;rank=16;targets=q,v;seq=2048;"
            "mb=1;ga=1;precision=BF16;master32=0;dq=0;opt=ADAMW;ckpt=0;"
            "flash=0;par=SINGLE;gpus=1;tp=1;pp=1;dp=1;"
            "loss=CHUNKED_CROSS_ENTROPY;packing=PADDED_PER_BATCH;"
            "mean_tokens=350;framework=TORCHTUNE");
  EXPECT_EQ(RecipeKey(r), "rk1-4e9a7df90b82fc59");
  Recipe packed = Lora();
  packed.packing = SequencePacking::kPacked;
  EXPECT_EQ(RecipeKey(packed), "rk1-624dd9f88d2a0c8c");
  EXPECT_THAT(DescribeSettings(r),
              ::testing::HasSubstr(" framework=TORCHTUNE"));
}

TEST(ValidateRecipeTest, MeanTokensNeedPaddedDataWithinTheMaximum) {
  Recipe r = NormalizeRecipe(Lora());
  r.mean_tokens_per_sample = 100;
  EXPECT_THAT(
      ValidateRecipe(r),
      Contains(Field(&FieldViolation::field, "recipe.mean_tokens_per_sample")));
  r.packing = SequencePacking::kPaddedPerBatch;
  EXPECT_THAT(ValidateRecipe(r), IsEmpty());
  r.mean_tokens_per_sample = 4096;  // above sequence_length 2048
  EXPECT_THAT(
      ValidateRecipe(r),
      Contains(Field(&FieldViolation::field, "recipe.mean_tokens_per_sample")));
  r.mean_tokens_per_sample = 100;
  r.framework = static_cast<TrainingFramework>(42);
  r.loss = static_cast<LossImplementation>(-1);
  EXPECT_THAT(ValidateRecipe(r), Contains(Field(&FieldViolation::field,
                                                "recipe.training_framework")));
  EXPECT_THAT(ValidateRecipe(r), Contains(Field(&FieldViolation::field,
                                                "recipe.loss_implementation")));
}

TEST(ValidateRecipeTest, AMeanLengthOnPackedDataIsRefusedNotDropped) {
  // Normalizing keeps it, so that the contradiction reaches validation
  // instead of silently planning packed batches.
  Recipe r = Lora();
  r.packing = SequencePacking::kPacked;
  r.mean_tokens_per_sample = 350;
  r = NormalizeRecipe(r);
  EXPECT_EQ(r.mean_tokens_per_sample, 350);
  EXPECT_THAT(
      ValidateRecipe(r),
      Contains(Field(&FieldViolation::field, "recipe.mean_tokens_per_sample")));
}

TEST(TrainableParamsTest, MatchesPublishedLoraCounts) {
  Recipe r = NormalizeRecipe(Lora());
  r.model = "Llama-2-7B";
  r.lora_rank = 8;
  EXPECT_EQ(TrainableParams(r, *FindModel("Llama-2-7B")), 4'194'304);
  r.lora_rank = 32;
  EXPECT_EQ(TrainableParams(r, *FindModel("Llama-3.2-3B")), 9'175'040);
}

TEST(TrainableParamsTest, MatchesPublishedAdapterCounts) {
  // The trainable counts the runs printed: PEFT's MetaMathQA method
  // comparison on Llama-3.2-3B (method_comparison/MetaMathQA results) and
  // LitGPT's resource tables on Llama-2-7B (tutorials/resource-tables.md),
  // as ../shared/data/published_finetune_measurements.csv quotes them.
  const ModelArchitecture llama32 = *FindModel("Llama-3.2-3B");
  const ModelArchitecture llama2 = *FindModel("Llama-2-7B");
  auto count = [](AdapterType adapter, int rank,
                  std::vector<std::string> targets,
                  const ModelArchitecture& arch) {
    Recipe r;
    r.model = arch.name;
    r.method = FineTuneMethod::kLora;
    r.adapter = adapter;
    r.lora_rank = rank;
    r.target_modules = std::move(targets);
    r.sequence_length = 512;
    return TrainableParams(NormalizeRecipe(r), arch);
  };
  EXPECT_EQ(count(AdapterType::kLora, 32, {}, llama32), 9'175'040);
  EXPECT_EQ(count(AdapterType::kDora, 32, {}, llama32), 9'289'728);
  EXPECT_EQ(count(AdapterType::kLoha, 32, {}, llama32), 18'350'080);
  EXPECT_EQ(count(AdapterType::kVera, 256, {}, llama32), 129'024);
  // IA3's PEFT default targets for Llama: k, v and (feed-forward) down.
  EXPECT_EQ(count(AdapterType::kIa3, 0, {}, llama32), 286'720);
  EXPECT_EQ(count(AdapterType::kLlamaAdapter, 0, {}, llama2), 1'229'760);
  EXPECT_EQ(count(AdapterType::kLlamaAdapterV2, 0, {}, llama2), 4'279'744);
}

TEST(RecipeKeyTest, AdapterTypeIsItsOwnRecipeAndLoraKeepsTheFormerKey) {
  // Every key stored before the field was a LoRA's: unspecified and LORA
  // keep it (the key pinned above). FNV-1a 64 computed independently.
  Recipe r = Lora();
  r.adapter = AdapterType::kLora;
  EXPECT_EQ(RecipeKey(r), "rk1-c5feac3758c091b1");
  r.adapter = AdapterType::kDora;
  EXPECT_THAT(RecipeKeyText(r), ::testing::EndsWith(";dp=1;adapter=DORA"));
  EXPECT_EQ(RecipeKey(r), "rk1-1471c97d75749660");
  EXPECT_THAT(DescribeSettings(r), ::testing::HasSubstr(" adapter_type=DORA"));
  std::set<std::string> keys;
  for (int a = 1; a <= static_cast<int>(AdapterType::kLlamaAdapterV2); ++a) {
    Recipe typed = Lora();
    typed.adapter = static_cast<AdapterType>(a);
    keys.insert(RecipeKey(typed));
  }
  EXPECT_EQ(keys.size(), 7u);
}

TEST(ValidateRecipeTest, AdapterTypesSayWhatTheyTakeAndRefuseTheRest) {
  auto fields = [](Recipe r) {
    std::vector<std::string> out;
    for (const FieldViolation& v : ValidateRecipe(NormalizeRecipe(r))) {
      out.push_back(v.field);
    }
    return out;
  };
  Recipe ia3 = Lora();
  ia3.adapter = AdapterType::kIa3;
  ia3.target_modules.clear();
  EXPECT_THAT(fields(ia3), ElementsAre("recipe.lora_rank"));  // no rank
  ia3.lora_rank = 0;
  EXPECT_THAT(fields(ia3), IsEmpty());
  EXPECT_THAT(NormalizeRecipe(ia3).target_modules,
              ElementsAre("k", "v", "down"));

  Recipe prompts = Lora();
  prompts.adapter = AdapterType::kLlamaAdapter;
  prompts.lora_rank = 0;
  EXPECT_THAT(fields(prompts), ElementsAre("recipe.target_modules"));
  prompts.target_modules.clear();
  EXPECT_THAT(fields(prompts), IsEmpty());
  EXPECT_THAT(NormalizeRecipe(prompts).target_modules, IsEmpty());

  Recipe full = Lora();
  full.method = FineTuneMethod::kFull;
  full.adapter = AdapterType::kDora;  // kept by normalizing, refused
  EXPECT_THAT(fields(full), ElementsAre("recipe.adapter_type"));
  Recipe unknown = Lora();
  unknown.adapter = static_cast<AdapterType>(42);
  EXPECT_THAT(fields(unknown), ElementsAre("recipe.adapter_type"));
}

}  // namespace
}  // namespace placement::core
