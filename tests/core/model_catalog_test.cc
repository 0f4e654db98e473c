#include "core/model_catalog.h"

#include "gtest/gtest.h"

namespace placement::core {
namespace {

// Parameter counts of finetune-memory-formulas.md section 9.
TEST(ModelCatalogTest, ParameterCountsMatchPublishedConfigs) {
  struct Case {
    const char* name;
    double billions;
  };
  for (const Case& c :
       {Case{"Llama-2-7B", 6.738}, Case{"Llama-2-13B", 13.016},
        Case{"Llama-2-70B", 68.98}, Case{"Llama-3.1-8B", 8.030},
        Case{"Llama-3.1-70B", 70.55}, Case{"Mistral-7B", 7.242},
        Case{"Qwen2.5-7B", 7.616}, Case{"Qwen2.5-14B", 14.77},
        Case{"Qwen2.5-32B", 32.76}, Case{"Qwen2.5-72B", 72.71}}) {
    auto arch = FindModel(c.name);
    ASSERT_TRUE(arch.ok()) << c.name;
    EXPECT_NEAR(arch->Params() / 1e9, c.billions, 0.01) << c.name;
  }
  // Exact against PEFT's printed full-FT trainable count.
  EXPECT_EQ(FindModel("Llama-3.2-3B")->Params(), 3'212'749'824);
}

TEST(ModelCatalogTest, LookupIgnoresCaseAndSeparators) {
  EXPECT_EQ(FindModel("llama_3.1_8b")->name, "Llama-3.1-8B");
  EXPECT_EQ(FindModel("QWEN2.5-72B")->name, "Qwen2.5-72B");
  EXPECT_EQ(FindModel("Llama-4-8B").status().code(),
            absl::StatusCode::kNotFound);
}

// An unknown name gets a "did you mean" as SKUs do: partial names list what
// they could be, misspellings the near names, nonsense nothing.
TEST(ModelCatalogTest, UnknownNamesGetTheCatalogNamesTheyMayMean) {
  EXPECT_EQ(ModelCandidates("llama 3.1 8b"),
            std::vector<std::string>{"Llama-3.1-8B"});
  EXPECT_EQ(ModelCandidates("Lama-3.1-8B"),
            std::vector<std::string>{"Llama-3.1-8B"});
  const std::vector<std::string> qwen = ModelCandidates("qwen 72b");
  EXPECT_EQ(qwen, std::vector<std::string>{"Qwen2.5-72B"});
  EXPECT_TRUE(ModelCandidates("gpt-j-6b-xyz").empty());
  EXPECT_TRUE(ModelCandidates("").empty());
}

TEST(ModelCatalogTest, CustomDimensionsAreChecked) {
  ModelArchitecture a = *FindModel("Mistral-7B");
  EXPECT_TRUE(ArchitectureViolations(a).empty());
  a.num_kv_heads = 5;  // does not divide 32 heads
  a.hidden_size = 0;
  EXPECT_EQ(ArchitectureViolations(a).size(), 2u);  // hidden_size, num_kv_heads
}

}  // namespace
}  // namespace placement::core
