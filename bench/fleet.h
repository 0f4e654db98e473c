// The fleet the PlacePlan benchmarks plan for (bench/placeplan.sh,
// bench/growth.sh): its pools and the recipes of the plans they ask for.
#ifndef PLACEMENT_BENCH_FLEET_H_
#define PLACEMENT_BENCH_FLEET_H_

#include <iterator>
#include <string>

#include "absl/strings/str_cat.h"
#include "placement/v1/recipe.pb.h"

namespace placement::bench {

struct PoolSpec {
  const char* sku;
  double rate;  // per GPU-hour
};

// A mix like a real fleet: many L40S and A100s, some H100/H200 (seven SKUs;
// pool i has kPoolSpecs[i % 8]).
inline constexpr PoolSpec kPoolSpecs[] = {
    {"L40S-PCIE-48GB", 1.10}, {"A100-SXM4-80GB", 2.10},
    {"A100-PCIE-40GB", 1.40}, {"A100-SXM4-40GB", 1.70},
    {"A100-PCIE-80GB", 1.90}, {"H100-SXM5-80GB", 3.90},
    {"H200-SXM-141GB", 4.60}, {"L40S-PCIE-48GB", 1.05}};

inline std::string PoolName(int i) { return absl::StrCat("pool-", i); }
inline const PoolSpec& Spec(int i) {
  return kPoolSpecs[i % std::size(kPoolSpecs)];
}

// Recipes a platform would see: four models, three sequence lengths, two
// ranks.
inline constexpr int kRecipes = 24;
inline v1::Recipe RecipeNumber(int i) {
  static const char* const kModels[] = {"Llama-3.1-8B", "Mistral-7B",
                                        "Qwen2.5-7B", "Qwen2.5-14B"};
  v1::Recipe r;
  r.set_model(kModels[i % 4]);
  r.set_method(v1::FINE_TUNE_METHOD_LORA);
  r.set_lora_rank(i / 12 % 2 == 0 ? 16 : 64);
  r.add_target_modules(std::string("all-linear"));
  r.set_sequence_length(1024 << (i / 4 % 3));
  r.set_micro_batch_size(2);
  r.set_activation_checkpointing_mode(v1::ACTIVATION_CHECKPOINTING_ON);
  r.set_attention(v1::ATTENTION_IMPLEMENTATION_FLASH);
  r.set_gpu_count(1);
  return r;
}

}  // namespace placement::bench

#endif  // PLACEMENT_BENCH_FLEET_H_
