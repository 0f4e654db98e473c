// The indexed InMemoryEvidence against the definition its lookups replace: a
// scan over every entry.
#include <random>
#include <string>
#include <vector>

#include "core/evidence/evidence.h"
#include "gtest/gtest.h"

namespace placement::core {
namespace {

const char* const kSkus[] = {"A100-SXM4-80GB", "H100-SXM5-80GB",
                             "L40S-PCIE-48GB"};
const char* const kModels[] = {"Llama-3.1-8B", "Qwen2.5-7B"};
const FineTuneMethod kMethods[] = {FineTuneMethod::kLora,
                                   FineTuneMethod::kQlora};

Recipe RecipeNumber(int n) {
  Recipe r;
  r.model = kModels[n % 2];
  r.method = kMethods[(n / 2) % 2];
  r.lora_rank = 8 << ((n / 4) % 3);
  r.sequence_length = 512 << ((n / 12) % 4);
  r.micro_batch_size = 1 + (n / 48) % 4;
  r.attention = AttentionImplementation::kFlash;
  return NormalizeRecipe(r);
}

EvidenceRollup RollupOf(const Recipe& recipe, const std::string& sku,
                        int runs) {
  EvidenceRollup rollup;
  for (int i = 0; i < runs; ++i) {
    MeasuredRun run;
    run.recipe_key = RecipeKey(recipe);
    run.sku_id = sku;
    run.gpu_count = 1;
    run.started = absl::FromUnixSeconds(1'700'000'000);
    run.ended = run.started + absl::Minutes(10 + i);
    run.steps_attempted = 100;
    run.steps_succeeded = 90 + i % 10;
    run.step_time_p50_s = 0.5 + 0.01 * i;
    run.step_time_p95_s = 0.7 + 0.01 * i;
    run.step_time_mean_s = 0.55;
    run.peak_memory_gb = 20 + i;
    run.outcome = RunOutcome::kSucceeded;
    rollup.Add(run);
  }
  return rollup;
}

std::vector<KeyedEvidence> ScanSimilar(const InMemoryEvidence& evidence,
                                       const std::string& model,
                                       FineTuneMethod method,
                                       const std::string& sku) {
  std::vector<KeyedEvidence> out;
  for (const KeyedEvidence& e : evidence.All()) {
    if (e.recipe.model == model && e.recipe.method == method &&
        e.stats.sku_id == sku) {
      out.push_back(e);
    }
  }
  return out;
}

std::vector<KeyedEvidence> ScanAcrossSkus(const InMemoryEvidence& evidence,
                                          const std::string& key) {
  std::vector<KeyedEvidence> out;
  for (const KeyedEvidence& e : evidence.All()) {
    if (e.stats.recipe_key == key) out.push_back(e);
  }
  return out;
}

void ExpectLookupsMatchScans(const InMemoryEvidence& evidence) {
  for (const char* model : kModels) {
    for (FineTuneMethod method : kMethods) {
      for (const char* sku : kSkus) {
        EXPECT_EQ(evidence.FindSimilar(model, method, sku),
                  ScanSimilar(evidence, model, method, sku))
            << model << " " << sku;
      }
    }
  }
  for (int n = 0; n < 200; ++n) {
    const std::string key = RecipeKey(RecipeNumber(n));
    EXPECT_EQ(evidence.FindAcrossSkus(key), ScanAcrossSkus(evidence, key));
    for (const char* sku : kSkus) {
      std::optional<EvidenceStats> scanned;
      for (const KeyedEvidence& e : ScanAcrossSkus(evidence, key)) {
        if (e.stats.sku_id == sku) scanned = e.stats;
      }
      EXPECT_EQ(evidence.Find(key, sku), scanned);
    }
  }
}

TEST(EvidenceIndexTest, LookupsMatchAScanAfterRandomChanges) {
  std::mt19937 random(7);
  InMemoryEvidence evidence;
  for (int i = 0; i < 1500; ++i) {
    const Recipe recipe = RecipeNumber(static_cast<int>(random() % 200));
    const std::string sku = kSkus[random() % 3];
    switch (random() % 4) {
      case 0:
        evidence.Remove(RecipeKey(recipe), sku);
        break;
      case 1:
        evidence.SetRollup(recipe, RollupOf(recipe, sku, 1 + random() % 5));
        break;
      default:
        evidence.AddRollup(recipe, RollupOf(recipe, sku, 1 + random() % 5));
    }
  }
  EXPECT_GT(evidence.size(), 100u);
  ExpectLookupsMatchScans(evidence);
}

TEST(EvidenceIndexTest, FindAcrossSkusReturnsTheKeyOnEverySkuInSkuOrder) {
  InMemoryEvidence evidence;
  const Recipe recipe = RecipeNumber(3);
  evidence.AddRollup(recipe, RollupOf(recipe, "L40S-PCIE-48GB", 2));
  evidence.AddRollup(recipe, RollupOf(recipe, "A100-SXM4-80GB", 4));
  evidence.AddRollup(RecipeNumber(4),
                     RollupOf(RecipeNumber(4), "H100-SXM5-80GB", 1));
  const std::vector<KeyedEvidence> across =
      evidence.FindAcrossSkus(RecipeKey(recipe));
  ASSERT_EQ(across.size(), 2u);
  EXPECT_EQ(across[0].stats.sku_id, "A100-SXM4-80GB");
  EXPECT_EQ(across[0].stats.runs, 4);
  EXPECT_EQ(across[1].stats.sku_id, "L40S-PCIE-48GB");
  EXPECT_EQ(across[1].recipe, recipe);
  EXPECT_TRUE(evidence.FindAcrossSkus("rk1-0000000000000000").empty());
}

// SameRollups is what tells a full re-read of unchanged rows (a refit that
// would change nothing) from a change: the same rows read into a new map are
// the same; one more run, one fewer entry or another SKU is not.
TEST(EvidenceIndexTest, SameRollupsTellsAReReadFromAChange) {
  auto read = [](int entries) {
    InMemoryEvidence evidence;
    for (int i = 0; i < entries; ++i) {
      const Recipe recipe = RecipeNumber(i);
      evidence.AddRollup(recipe, RollupOf(recipe, kSkus[i % 3], 1 + i % 4));
    }
    return evidence;
  };
  const InMemoryEvidence first = read(60);
  const InMemoryEvidence copy = first;
  EXPECT_TRUE(first.SameRollups(copy));
  EXPECT_TRUE(first.SameRollups(read(60)));
  EXPECT_FALSE(first.SameRollups(read(59)));

  InMemoryEvidence one_more_run = read(60);
  const Recipe recipe = RecipeNumber(7);
  one_more_run.SetRollup(recipe, RollupOf(recipe, kSkus[7 % 3], 9));
  EXPECT_FALSE(first.SameRollups(one_more_run));
  EXPECT_FALSE(one_more_run.SameRollups(first));

  InMemoryEvidence moved = read(59);
  moved.AddRollup(RecipeNumber(59), RollupOf(RecipeNumber(59), kSkus[0], 1));
  EXPECT_FALSE(first.SameRollups(moved));  // 59 % 3 is SKU 2, not 0
}

// SetRollup is "this row, read again": it replaces, where AddRollup merges.
TEST(EvidenceIndexTest, SetRollupReplacesAndAddRollupMerges) {
  InMemoryEvidence evidence;
  const Recipe recipe = RecipeNumber(5);
  const std::string key = RecipeKey(recipe);
  evidence.AddRollup(recipe, RollupOf(recipe, kSkus[0], 3));
  evidence.AddRollup(recipe, RollupOf(recipe, kSkus[0], 2));
  EXPECT_EQ(evidence.Find(key, kSkus[0])->runs, 5);
  EXPECT_EQ(evidence.MergedRollups(key, kSkus[0]), 2);
  evidence.SetRollup(recipe, RollupOf(recipe, kSkus[0], 4));
  EXPECT_EQ(evidence.Find(key, kSkus[0])->runs, 4);
  EXPECT_EQ(evidence.MergedRollups(key, kSkus[0]), 1);
  EXPECT_TRUE(evidence.Remove(key, kSkus[0]));
  EXPECT_FALSE(evidence.Find(key, kSkus[0]).has_value());
  EXPECT_TRUE(
      evidence.FindSimilar(recipe.model, recipe.method, kSkus[0]).empty());
  EXPECT_EQ(evidence.MergedRollups(key, kSkus[0]), 0);
}

// A snapshot copied before a change keeps answering as before it.
TEST(EvidenceIndexTest, CopyIsUnaffectedByChangesToTheOriginal) {
  InMemoryEvidence evidence;
  for (int n = 0; n < 50; ++n) {
    evidence.AddRollup(RecipeNumber(n),
                       RollupOf(RecipeNumber(n), kSkus[n % 3], 1));
  }
  const InMemoryEvidence before = evidence;
  const std::vector<KeyedEvidence> all_before = before.All();
  evidence.SetRollup(RecipeNumber(0), RollupOf(RecipeNumber(0), kSkus[0], 9));
  evidence.Remove(RecipeKey(RecipeNumber(1)), kSkus[1]);
  evidence.AddRollup(RecipeNumber(60), RollupOf(RecipeNumber(60), kSkus[0], 1));
  EXPECT_EQ(before.All(), all_before);
  EXPECT_EQ(before.Find(RecipeKey(RecipeNumber(0)), kSkus[0])->runs, 1);
  EXPECT_EQ(evidence.Find(RecipeKey(RecipeNumber(0)), kSkus[0])->runs, 9);
  EXPECT_TRUE(before.Find(RecipeKey(RecipeNumber(1)), kSkus[1]).has_value());
  ExpectLookupsMatchScans(before);
  ExpectLookupsMatchScans(evidence);
}

}  // namespace
}  // namespace placement::core
