#include "core/plan/bake_off.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace placement::core {
namespace {

using ::testing::HasSubstr;

// A ranked candidate on `sku` running `key`.
Candidate Make(const std::string& pool, const std::string& sku,
               EvidenceBasis basis, Fit fit = Fit::kFits,
               const std::string& key = "key-1") {
  Candidate c;
  c.pool_name = pool;
  c.sku_id = sku;
  c.gpu_count = 1;
  c.fit = fit;
  c.fits = true;
  c.basis = basis;
  c.recipe_key = key;
  c.recipe.model = "Llama-3.1-8B";
  return c;
}

PlanRequest Request() {
  PlanRequest request;
  request.total_steps = 1000;
  return request;
}

// The guide: no bake-off when the leading candidates are measured.
TEST(ProposeBakeOffTest, NoneWhenTheLeadingCandidatesAreMeasured) {
  std::vector<Candidate> candidates = {
      Make("a", "L40S-PCIE-48GB", EvidenceBasis::kMeasured),
      Make("b", "A100-SXM4-80GB", EvidenceBasis::kMeasured),
      Make("c", "H100-SXM5-80GB", EvidenceBasis::kMeasured),
      // Past the leading candidates: not worth a run.
      Make("d", "L4-PCIE-24GB", EvidenceBasis::kEstimated)};
  EXPECT_FALSE(ProposeBakeOff(Request(), &candidates).has_value());
  for (const Candidate& c : candidates) EXPECT_FALSE(c.measure_first);
}

TEST(ProposeBakeOffTest, UnmeasuredLeadersRunTheSameRecipeOnEachSku) {
  std::vector<Candidate> candidates = {
      Make("a", "L40S-PCIE-48GB", EvidenceBasis::kEstimated),
      Make("a-twin", "L40S-PCIE-48GB", EvidenceBasis::kEstimated),
      Make("b", "A100-SXM4-80GB", EvidenceBasis::kMeasured),
      Make("c", "H100-SXM5-80GB", EvidenceBasis::kTransferred)};
  auto bake_off = ProposeBakeOff(Request(), &candidates);
  ASSERT_TRUE(bake_off.has_value());
  EXPECT_EQ(bake_off->recipe_key, "key-1");
  // One run per (SKU, recipe key): the twin pool adds none; the fourth
  // candidate is past the leading three.
  ASSERT_EQ(bake_off->runs.size(), 1u);
  EXPECT_EQ(bake_off->runs[0].pool_name, "a");
  EXPECT_TRUE(candidates[0].measure_first);
  EXPECT_TRUE(candidates[1].measure_first);
  EXPECT_FALSE(candidates[2].measure_first);
  EXPECT_FALSE(candidates[3].measure_first);
  EXPECT_THAT(bake_off->reason, HasSubstr("no measured run"));
}

TEST(ProposeBakeOffTest, BorderlineFitIsMeasuredFirstEvenWhenMeasured) {
  std::vector<Candidate> candidates = {
      Make("a", "L40S-PCIE-48GB", EvidenceBasis::kMeasured),
      Make("b", "A100-SXM4-80GB", EvidenceBasis::kMeasured),
      Make("c", "H100-SXM5-80GB", EvidenceBasis::kMeasured),
      Make("d", "L4-PCIE-24GB", EvidenceBasis::kMeasured, Fit::kBorderline,
           "key-2")};
  auto bake_off = ProposeBakeOff(Request(), &candidates);
  ASSERT_TRUE(bake_off.has_value());
  ASSERT_EQ(bake_off->runs.size(), 1u);
  EXPECT_TRUE(bake_off->runs[0].borderline);
  EXPECT_EQ(bake_off->runs[0].recipe_key, "key-2");
  EXPECT_EQ(bake_off->recipe_key, "key-2");
  EXPECT_TRUE(candidates[3].measure_first);
  EXPECT_THAT(bake_off->reason, HasSubstr("BORDERLINE"));
}

}  // namespace
}  // namespace placement::core
