// placement.v1.Recipe <-> core::Recipe: every field survives the round trip,
// the deprecated booleans are read and written as before, and the recipe
// key of a recipe that leaves the memory fields unset is the one stored
// before they existed.
#include "services/api/recipe_convert.h"

#include <functional>
#include <set>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace placement::services {
namespace {

// The recipe core's key tests pin (tests/core/recipe_test.cc), as a client
// sends it.
v1::Recipe PinnedLora() {
  v1::Recipe r;
  r.set_model("llama-3.1-8b");
  r.set_method(v1::FINE_TUNE_METHOD_LORA);
  r.set_lora_rank(16);
  r.add_target_modules("v_proj");
  r.add_target_modules("q_proj");
  r.set_sequence_length(2048);
  return r;
}

// Its key before the memory fields existed (FNV-1a 64 of its key text,
// computed independently).
constexpr char kPinnedKey[] = "rk1-c5feac3758c091b1";

std::string Key(const v1::Recipe& recipe) {
  return core::RecipeKey(RecipeFromProto(recipe));
}

TEST(RecipeConvertTest, TheMemoryFieldsSurviveTheRoundTrip) {
  v1::Recipe in = PinnedLora();
  in.set_loss_implementation(v1::LOSS_IMPLEMENTATION_CHUNKED_CROSS_ENTROPY);
  in.set_sequence_packing(v1::SEQUENCE_PACKING_PADDED_PER_BATCH);
  in.set_mean_tokens_per_sample(350);
  in.set_training_framework(v1::TRAINING_FRAMEWORK_TORCHTUNE);
  in.set_reported_peak(v1::PEAK_MEMORY_KIND_RESERVED);
  const core::Recipe recipe = RecipeFromProto(in);
  EXPECT_EQ(recipe.loss, core::LossImplementation::kChunkedCrossEntropy);
  EXPECT_EQ(recipe.packing, core::SequencePacking::kPaddedPerBatch);
  EXPECT_EQ(recipe.mean_tokens_per_sample, 350);
  EXPECT_EQ(recipe.framework, core::TrainingFramework::kTorchtune);
  EXPECT_EQ(recipe.reported_peak, core::PeakMemoryKind::kReserved);
  const v1::Recipe out = RecipeToProto(recipe);
  EXPECT_EQ(out.loss_implementation(),
            v1::LOSS_IMPLEMENTATION_CHUNKED_CROSS_ENTROPY);
  EXPECT_EQ(out.sequence_packing(), v1::SEQUENCE_PACKING_PADDED_PER_BATCH);
  EXPECT_EQ(out.mean_tokens_per_sample(), 350);
  EXPECT_EQ(out.training_framework(), v1::TRAINING_FRAMEWORK_TORCHTUNE);
  EXPECT_EQ(out.reported_peak(), v1::PEAK_MEMORY_KIND_RESERVED);
  EXPECT_EQ(RecipeFromProto(out), recipe);
}

TEST(RecipeConvertTest, EveryDeclaredValueMapsOneToOne) {
  for (int i = 0; i <= v1::TrainingFramework_MAX; ++i) {
    v1::Recipe in;
    in.set_training_framework(static_cast<v1::TrainingFramework>(i));
    EXPECT_EQ(static_cast<int>(RecipeFromProto(in).framework), i);
    EXPECT_EQ(RecipeToProto(RecipeFromProto(in)).training_framework(), i);
  }
  for (int i = 0; i <= v1::LossImplementation_MAX; ++i) {
    v1::Recipe in;
    in.set_loss_implementation(static_cast<v1::LossImplementation>(i));
    EXPECT_EQ(RecipeToProto(RecipeFromProto(in)).loss_implementation(), i);
  }
  for (int i = 0; i <= v1::AdapterType_MAX; ++i) {
    v1::Recipe in;
    in.set_adapter_type(static_cast<v1::AdapterType>(i));
    EXPECT_EQ(static_cast<int>(RecipeFromProto(in).adapter), i);
    EXPECT_EQ(RecipeToProto(RecipeFromProto(in)).adapter_type(), i);
  }
  for (int i = 0; i <= v1::PeakMemoryKind_MAX; ++i) {
    EXPECT_EQ(PeakMemoryKindToProto(
                  PeakMemoryKindFromProto(static_cast<v1::PeakMemoryKind>(i))),
              i);
  }
}

TEST(RecipeConvertTest, AnUndeclaredNumberIsUnspecified) {
  // (The API refuses it before conversion; conversion never invents one.)
  v1::Recipe in;
  in.set_sequence_packing(static_cast<v1::SequencePacking>(42));
  in.set_loss_implementation(static_cast<v1::LossImplementation>(-3));
  const core::Recipe recipe = RecipeFromProto(in);
  EXPECT_EQ(recipe.packing, core::SequencePacking::kUnspecified);
  EXPECT_EQ(recipe.loss, core::LossImplementation::kUnspecified);
}

TEST(RecipeConvertTest, UnsetMemoryFieldsKeepTheStoredKey) {
  EXPECT_EQ(Key(PinnedLora()), kPinnedKey);
  v1::Recipe explicit_unset = PinnedLora();
  explicit_unset.set_loss_implementation(v1::LOSS_IMPLEMENTATION_UNSPECIFIED);
  explicit_unset.set_sequence_packing(v1::SEQUENCE_PACKING_UNSPECIFIED);
  explicit_unset.set_training_framework(v1::TRAINING_FRAMEWORK_UNSPECIFIED);
  explicit_unset.set_mean_tokens_per_sample(0);
  EXPECT_EQ(Key(explicit_unset), kPinnedKey);
  // Which peak the runs report describes the measurement: never the key.
  for (int i = 0; i <= v1::PeakMemoryKind_MAX; ++i) {
    v1::Recipe r = PinnedLora();
    r.set_reported_peak(static_cast<v1::PeakMemoryKind>(i));
    EXPECT_EQ(Key(r), kPinnedKey) << i;
  }
}

TEST(RecipeConvertTest, EachSetMemoryFieldMakesItsOwnKey) {
  std::set<std::string> keys = {Key(PinnedLora())};
  auto add = [&](const std::function<void(v1::Recipe&)>& set) {
    v1::Recipe r = PinnedLora();
    set(r);
    return keys.insert(Key(r)).second;
  };
  EXPECT_TRUE(add([](v1::Recipe& r) {
    r.set_loss_implementation(v1::LOSS_IMPLEMENTATION_STANDARD_FP32_UPCAST);
  }));
  EXPECT_TRUE(add([](v1::Recipe& r) {
    r.set_loss_implementation(v1::LOSS_IMPLEMENTATION_CHUNKED_CROSS_ENTROPY);
  }));
  EXPECT_TRUE(add([](v1::Recipe& r) {
    r.set_loss_implementation(
        v1::LOSS_IMPLEMENTATION_FUSED_LINEAR_CROSS_ENTROPY);
  }));
  EXPECT_TRUE(add([](v1::Recipe& r) {
    r.set_sequence_packing(v1::SEQUENCE_PACKING_PACKED);
  }));
  EXPECT_TRUE(add([](v1::Recipe& r) {
    r.set_sequence_packing(v1::SEQUENCE_PACKING_PADDED_PER_BATCH);
  }));
  EXPECT_TRUE(add([](v1::Recipe& r) {
    r.set_sequence_packing(v1::SEQUENCE_PACKING_PADDED_PER_BATCH);
    r.set_mean_tokens_per_sample(350);
  }));
  for (int i = 1; i <= v1::TrainingFramework_MAX; ++i) {
    EXPECT_TRUE(add([i](v1::Recipe& r) {
      r.set_training_framework(static_cast<v1::TrainingFramework>(i));
    })) << i;
  }
}

TEST(RecipeConvertTest, TheDeprecatedBooleansAreReadAndWrittenAsBefore) {
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
  v1::Recipe in = PinnedLora();
  in.set_flash_attention(true);
  in.set_activation_checkpointing(true);
  core::Recipe recipe = RecipeFromProto(in);
  EXPECT_EQ(recipe.attention, core::AttentionImplementation::kFlash);
  EXPECT_EQ(recipe.activation_checkpointing,
            core::ActivationCheckpointing::kOn);
  v1::Recipe out = RecipeToProto(recipe);
  EXPECT_TRUE(out.flash_attention());
  EXPECT_TRUE(out.activation_checkpointing());
  EXPECT_EQ(out.attention(), v1::ATTENTION_IMPLEMENTATION_FLASH);
  EXPECT_EQ(out.activation_checkpointing_mode(),
            v1::ACTIVATION_CHECKPOINTING_ON);

  // The enum wins over the boolean; the boolean is written for it.
  in.set_attention(v1::ATTENTION_IMPLEMENTATION_SDPA);
  in.set_activation_checkpointing_mode(v1::ACTIVATION_CHECKPOINTING_OFF);
  recipe = RecipeFromProto(in);
  EXPECT_EQ(recipe.attention, core::AttentionImplementation::kSdpa);
  EXPECT_EQ(recipe.activation_checkpointing,
            core::ActivationCheckpointing::kOff);
  out = RecipeToProto(recipe);
  EXPECT_FALSE(out.flash_attention());
  EXPECT_FALSE(out.activation_checkpointing());

  // false cannot say "off": unset stays unspecified.
  v1::Recipe unset = PinnedLora();
  unset.set_flash_attention(false);
  EXPECT_EQ(RecipeFromProto(unset).attention,
            core::AttentionImplementation::kUnspecified);
#pragma GCC diagnostic pop
}

TEST(RecipeConvertTest, ARunsPeakKindComesFromTheRunElseItsRecipe) {
  v1::BenchmarkRun run;
  *run.mutable_recipe() = PinnedLora();
  EXPECT_EQ(RunPeakMemoryKind(run), core::PeakMemoryKind::kUnspecified);
  run.mutable_recipe()->set_reported_peak(v1::PEAK_MEMORY_KIND_RESERVED);
  EXPECT_EQ(RunPeakMemoryKind(run), core::PeakMemoryKind::kReserved);
  run.set_peak_memory_kind(v1::PEAK_MEMORY_KIND_ALLOCATED);
  EXPECT_EQ(RunPeakMemoryKind(run), core::PeakMemoryKind::kAllocated);
  const core::Recipe recipe = RunRecipeFromProto(run);
  EXPECT_EQ(recipe.reported_peak, core::PeakMemoryKind::kAllocated);
  // And the key is the recipe's, whichever peak the run reports.
  EXPECT_EQ(core::RecipeKey(recipe), kPinnedKey);
}

}  // namespace
}  // namespace placement::services
