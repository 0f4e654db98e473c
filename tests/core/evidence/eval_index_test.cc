// InMemoryEvidence's evals: adding one to a (recipe key, serving SKU,
// precision) that already has many costs a path of new nodes, not a copy of
// everything that key holds (a load of n evals of one key was quadratic in
// time and in what it allocated); a copy made before is unaffected, and
// lookups return that key's evals only. What an AddEval allocates is
// counted by this binary's operator new: no clock.
#include <atomic>
#include <cstdlib>
#include <new>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/evidence/evidence.h"
#include "gtest/gtest.h"

namespace {
std::atomic<size_t> allocated_bytes{0};
}  // namespace

// GCC pairs `new T` with the library's operator new when it inlines these
// replacements, and so calls their free() mismatched (a false positive:
// this operator new is malloc's).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
void* operator new(std::size_t size) {
  allocated_bytes.fetch_add(size, std::memory_order_relaxed);
  if (void* p = std::malloc(size == 0 ? 1 : size)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
#pragma GCC diagnostic pop

namespace placement::core {
namespace {

EvalEvidence EvalNumber(int n, const std::string& recipe_key = "key-a") {
  EvalEvidence e;
  e.run_id = absl::StrCat("00000000-0000-4000-8000-", 100'000'000'000 + n);
  e.recipe_key = recipe_key;
  e.serving_sku_id = "L40S-PCIE-48GB";
  e.serving_precision = Precision::kBf16;
  e.metric = "exact_match";
  e.score = 0.5 + 0.0001 * n;
  e.recorded = absl::FromUnixSeconds(1'700'000'000 + n);
  return e;
}

TEST(EvalIndexTest, AddingToAKeyWithManyEvalsCopiesAPathNotTheList) {
  constexpr int kHeld = 5000;
  InMemoryEvidence evidence;
  for (int n = 0; n < kHeld; ++n) evidence.AddEval(EvalNumber(n));
  const InMemoryEvidence before = evidence;  // shares everything

  const EvalEvidence added = EvalNumber(kHeld);
  const size_t at_start = allocated_bytes.load();
  evidence.AddEval(added);
  const size_t allocated = allocated_bytes.load() - at_start;
  // About 2 ln(5000) = 17 nodes of a key and an eval each: a few kB. The
  // list of 5,000 evals is over 500 kB.
  EXPECT_LT(allocated, 64u * 1024) << "AddEval copied the key's evals";

  EXPECT_EQ(evidence.eval_count(), static_cast<size_t>(kHeld + 1));
  EXPECT_EQ(before.eval_count(), static_cast<size_t>(kHeld));
  const std::vector<EvalEvidence> now =
      evidence.FindEvals("key-a", "L40S-PCIE-48GB", Precision::kBf16);
  ASSERT_EQ(now.size(), static_cast<size_t>(kHeld + 1));
  EXPECT_EQ(
      before.FindEvals("key-a", "L40S-PCIE-48GB", Precision::kBf16).size(),
      static_cast<size_t>(kHeld));
}

TEST(EvalIndexTest, LookupsReturnTheirKeyOnlyAndAReAddReplaces) {
  InMemoryEvidence evidence;
  evidence.AddEval(EvalNumber(1, "key-a"));
  evidence.AddEval(EvalNumber(2, "key-b"));
  EvalEvidence other_precision = EvalNumber(3, "key-a");
  other_precision.serving_precision = Precision::kFp8;
  evidence.AddEval(other_precision);
  EvalEvidence other_sku = EvalNumber(4, "key-a");
  other_sku.serving_sku_id = "H100-SXM5-80GB";
  evidence.AddEval(other_sku);

  std::vector<EvalEvidence> found =
      evidence.FindEvals("key-a", "L40S-PCIE-48GB", Precision::kBf16);
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].run_id, EvalNumber(1).run_id);
  EXPECT_TRUE(
      evidence.FindEvals("key", "L40S-PCIE-48GB", Precision::kBf16).empty());

  // The same run and metric again (a re-read): replaced, not added.
  EvalEvidence again = EvalNumber(1, "key-a");
  again.score = 0.9;
  evidence.AddEval(again);
  found = evidence.FindEvals("key-a", "L40S-PCIE-48GB", Precision::kBf16);
  ASSERT_EQ(found.size(), 1u);
  EXPECT_DOUBLE_EQ(found[0].score, 0.9);
  EXPECT_EQ(evidence.eval_count(), 4u);

  // Shared by ShareEvalsOf, whatever the receiver held.
  InMemoryEvidence other;
  other.AddEval(EvalNumber(9, "key-z"));
  other.ShareEvalsOf(evidence);
  EXPECT_EQ(other.eval_count(), 4u);
  EXPECT_TRUE(
      other.FindEvals("key-z", "L40S-PCIE-48GB", Precision::kBf16).empty());
}

}  // namespace
}  // namespace placement::core
