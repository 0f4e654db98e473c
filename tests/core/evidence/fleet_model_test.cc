#include "core/evidence/fleet_model.h"

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "core/models/band_calibration.h"
#include "core/plan/planner.h"
#include "gtest/gtest.h"
#include "tests/core/test_catalog.h"

namespace placement::core {
namespace {

using testing::Sku;
using testing::TestCatalog;
using testing::TrainingPool;

constexpr char kL40s[] = "L40S-PCIE-48GB";
constexpr char kA100[] = "A100-SXM4-80GB";

// A cell whose measured step time is `ratio` x a prior of 1 s.
FleetCell StepCell(const std::string& key, const std::string& sku,
                   double ratio) {
  FleetCell c;
  c.recipe_key = key;
  c.sku_id = sku;
  c.prior_step_time_s = 1;
  c.measured_step_time_s = ratio;
  return c;
}

// Nearly no shrinkage: the fit reproduces the data where it is exact.
FleetModelOptions Unshrunk() {
  FleetModelOptions o;
  o.global_penalty = 1e-6;
  o.recipe_penalty = 1e-6;
  o.sku_penalty = 1e-6;
  o.iterations = 400;
  return o;
}

// Recipes A and B run twice as slowly (vs their prior) on Y as on X;
// C was measured on X only, at 1.5x its prior.
std::vector<FleetCell> TwoSkuCells() {
  return {StepCell("A", "X", 1.0), StepCell("A", "Y", 2.0),
          StepCell("B", "X", 1.2), StepCell("B", "Y", 2.4),
          StepCell("C", "X", 1.5)};
}

TEST(FleetModelTest, OneRecipeOnOneSkuInformsTheOtherThroughTheSkuRatio) {
  const FleetModel model = FleetModel::Fit(TwoSkuCells(), Unshrunk());
  ASSERT_EQ(model.step_time_cells(), 5);
  auto on_x = model.StepTime("C", "X");
  auto on_y = model.StepTime("C", "Y");
  ASSERT_TRUE(on_x.has_value());
  ASSERT_TRUE(on_y.has_value());
  // By hand: C on X is 1.5 (its own cell); Y/X is 2 for both A and B, so
  // C on Y is 1.5 x 2 = 3.
  EXPECT_NEAR(on_x->factor, 1.5, 0.01);
  EXPECT_NEAR(on_y->factor, 3.0, 0.03);
  EXPECT_TRUE(on_y->recipe_measured);
  EXPECT_TRUE(on_y->sku_measured);
  ASSERT_EQ(on_y->recipe_skus.size(), 1u);
  EXPECT_EQ(on_y->recipe_skus[0], "X");
  // The measured cells are fitted back.
  EXPECT_NEAR(model.StepTime("A", "Y")->factor, 2.0, 0.02);
  EXPECT_NEAR(model.StepTime("B", "X")->factor, 1.2, 0.012);
}

TEST(FleetModelTest, ShrinkageKeepsFewCellsBetweenThePriorAndTheData) {
  const FleetModel model = FleetModel::Fit(TwoSkuCells());
  const double c_on_y = model.StepTime("C", "Y")->factor;
  // Between the prior (1) and the unshrunk answer (3).
  EXPECT_GT(c_on_y, 1.5);
  EXPECT_LT(c_on_y, 3.0);
  // One cell of one recipe on one SKU: pulled toward the prior.
  const FleetModel one = FleetModel::Fit({StepCell("A", "X", 2.0)});
  const double a_on_x = one.StepTime("A", "X")->factor;
  EXPECT_GT(a_on_x, 1.0);
  EXPECT_LT(a_on_x, 2.0);
}

TEST(FleetModelTest, ARecipeNeverMeasuredGetsTheSkuRatioAndAWiderBand) {
  const FleetModel model = FleetModel::Fit(TwoSkuCells(), Unshrunk());
  auto unseen_y = model.StepTime("D", "Y");
  auto seen_y = model.StepTime("C", "Y");
  ASSERT_TRUE(unseen_y.has_value());
  EXPECT_FALSE(unseen_y->recipe_measured);
  // Y is slower than X for every recipe: an unmeasured recipe on Y is
  // estimated slower than the same on X.
  EXPECT_GT(unseen_y->factor, model.StepTime("D", "X")->factor * 1.8);
  EXPECT_GT(unseen_y->band_high, seen_y->band_high);
  EXPECT_LT(unseen_y->band_low, seen_y->band_low);
  EXPECT_LT(seen_y->band_low, 1.0);
  EXPECT_GT(seen_y->band_high, 1.0);
}

// A card's ratio to the prior differs by method (sku-method-skew in
// bench/replay): two LoRA recipes run 0.75x their prior on Y and 1x on X,
// two full fine-tunes 1x on both. A third LoRA recipe measured on X only
// is expected faster on Y, a full fine-tune never measured on Y is not;
// without its method the LoRA recipe gets only the card's ratio.
TEST(FleetModelTest, AMethodsRatioOnACardCarriesToItsOtherRecipes) {
  auto cell = [](const std::string& key, const std::string& sku, double ratio,
                 FineTuneMethod method) {
    FleetCell c = StepCell(key, sku, ratio);
    c.method = method;
    return c;
  };
  std::vector<FleetCell> cells;
  for (const char* key : {"L1", "L2"}) {
    cells.push_back(cell(key, "X", 1.0, FineTuneMethod::kLora));
    cells.push_back(cell(key, "Y", 0.75, FineTuneMethod::kLora));
  }
  for (const char* key : {"F1", "F2"}) {
    cells.push_back(cell(key, "X", 1.0, FineTuneMethod::kFull));
    cells.push_back(cell(key, "Y", 1.0, FineTuneMethod::kFull));
  }
  cells.push_back(cell("L3", "X", 1.0, FineTuneMethod::kLora));
  cells.push_back(cell("F3", "X", 1.0, FineTuneMethod::kFull));
  const FleetModel model = FleetModel::Fit(cells);
  const double lora = model.StepTime("L3", "Y", FineTuneMethod::kLora)->factor;
  const double full = model.StepTime("F3", "Y", FineTuneMethod::kFull)->factor;
  const double blind = model.StepTime("L3", "Y")->factor;
  EXPECT_LT(lora, 0.9);
  EXPECT_GT(full, 0.95);
  EXPECT_LT(full, 1.05);
  EXPECT_GT(blind, lora + 0.05);
  // The method's term is said apart (the plan's reason names it).
  const FleetStepTime with = *model.StepTime("L3", "Y", FineTuneMethod::kLora);
  EXPECT_TRUE(with.method_measured);
  EXPECT_LT(with.method_factor, 0.95);
  EXPECT_FALSE(model.StepTime("L3", "Y")->method_measured);
  EXPECT_EQ(model.StepTime("L3", "Y")->method_factor, 1);
}

TEST(FleetModelTest, NoCellsNoCorrection) {
  const FleetModel model = FleetModel::Fit({});
  EXPECT_FALSE(model.StepTime("A", "X").has_value());
  EXPECT_EQ(model.MemoryScale(TrainingFramework::kLitgpt), 1);
}

TEST(FleetModelTest, TheFitDoesNotDependOnTheOrderOfTheCells) {
  std::vector<FleetCell> cells = TwoSkuCells();
  const double first = FleetModel::Fit(cells).StepTime("C", "Y")->factor;
  std::reverse(cells.begin(), cells.end());
  EXPECT_EQ(FleetModel::Fit(cells).StepTime("C", "Y")->factor, first);
}

TEST(FleetModelTest, MemoryScaleIsAShrunkRobustMedianPerFramework) {
  std::vector<FleetCell> cells;
  for (int i = 0; i < 5; ++i) {
    FleetCell c;
    c.recipe_key = "k" + std::to_string(i);
    c.sku_id = "X";
    c.framework = TrainingFramework::kLitgpt;
    c.measured_peak_gb = 12;
    c.predicted_peak_gb = 10;
    cells.push_back(c);
  }
  // An outlier (a run that reported a spike) does not move the median.
  FleetCell spike = cells[0];
  spike.recipe_key = "spike";
  spike.measured_peak_gb = 30;
  cells.push_back(spike);
  const FleetModel model = FleetModel::Fit(cells);
  // median log ratio = log 1.2 over 6 cells, 3 prior pseudo-cells:
  // 1.2^(6/9) = 1.1292.
  EXPECT_NEAR(model.MemoryScale(TrainingFramework::kLitgpt),
              std::pow(1.2, 6.0 / 9.0), 1e-9);
  EXPECT_EQ(model.MemoryCells(TrainingFramework::kLitgpt), 6);
  EXPECT_EQ(model.MemoryScale(TrainingFramework::kTorchtune), 1);
  // Plans apply it only when asked to.
  EXPECT_EQ(model.PlanMemoryScale(TrainingFramework::kLitgpt), 1);
  FleetModelOptions applied;
  applied.apply_memory_scale = true;
  EXPECT_EQ(FleetModel::Fit(cells, applied)
                .PlanMemoryScale(TrainingFramework::kLitgpt),
            model.MemoryScale(TrainingFramework::kLitgpt));
}

// A cell of `method` on `sku` whose failed run reached `failed_gb` against
// a figure of 10 GB.
FleetCell FailedCell(const std::string& key, const std::string& sku,
                     FineTuneMethod method, double failed_gb) {
  FleetCell c;
  c.recipe_key = key;
  c.sku_id = sku;
  c.method = method;
  c.model = "m-" + key;
  c.failed_peak_gb = failed_gb;
  c.predicted_total_gb = 10;
  return c;
}

TEST(FleetModelTest, AFailedRunSetsItsMethodsFloorOnTheCard) {
  const FleetModel model = FleetModel::Fit({
      FailedCell("a", kL40s, FineTuneMethod::kLora, 12.4),
      FailedCell("b", kL40s, FineTuneMethod::kLora, 11),
      // Failed below its figure: says nothing of the recipe's need.
      FailedCell("c", kL40s, FineTuneMethod::kQlora, 9),
      FailedCell("d", kA100, FineTuneMethod::kFull, 11.5),
  });
  const std::optional<MethodMemoryFloor> lora =
      model.MethodMemory(FineTuneMethod::kLora, kL40s);
  ASSERT_TRUE(lora.has_value());
  // The largest, of the recipe that reached it.
  EXPECT_NEAR(lora->scale, 1.24, 1e-12);
  EXPECT_EQ(lora->recipe_key, "a");
  EXPECT_EQ(lora->model, "m-a");
  EXPECT_EQ(lora->peak_gb, 12.4);
  EXPECT_EQ(lora->predicted_gb, 10);
  EXPECT_FALSE(model.MethodMemory(FineTuneMethod::kQlora, kL40s).has_value());
  EXPECT_FALSE(model.MethodMemory(FineTuneMethod::kLora, kA100).has_value());
  EXPECT_NEAR(model.MethodMemory(FineTuneMethod::kFull, kA100)->scale, 1.15,
              1e-12);
}

TEST(FleetModelTest, AFloorIsHeldWithinTheSpreadOfTheMethodsSucceededRecipes) {
  // A LoRA recipe succeeded on the card at 1.05x its figure; another
  // "failed" at 3x its own (an odd recipe, or a run that reported the card's
  // whole memory): the method's floor there is 1.05 x 1.20, not 3.
  FleetCell succeeded;
  succeeded.recipe_key = "ok";
  succeeded.sku_id = kL40s;
  succeeded.method = FineTuneMethod::kLora;
  succeeded.measured_peak_gb = 21;
  succeeded.predicted_peak_gb = 20;
  const FleetModel model = FleetModel::Fit(
      {succeeded, FailedCell("odd", kL40s, FineTuneMethod::kLora, 30)});
  const std::optional<MethodMemoryFloor> floor =
      model.MethodMemory(FineTuneMethod::kLora, kL40s);
  ASSERT_TRUE(floor.has_value());
  EXPECT_NEAR(floor->scale, 1.05 * kMemoryBandMethodCarried.high, 1e-12);
  EXPECT_NEAR(floor->succeeded_ratio, 1.05, 1e-12);
  EXPECT_EQ(floor->peak_gb, 30);
  // Within the spread, the failed run's own ratio stands.
  const FleetModel near = FleetModel::Fit(
      {succeeded, FailedCell("near", kL40s, FineTuneMethod::kLora, 12)});
  EXPECT_NEAR(near.MethodMemory(FineTuneMethod::kLora, kL40s)->scale, 1.2,
              1e-12);
  EXPECT_EQ(near.MethodMemory(FineTuneMethod::kLora, kL40s)->succeeded_ratio,
            0);
}

TEST(FleetModelTest, OnlyARunThatFailedWithoutOffloadMakesAFailedPeak) {
  const Recipe r = NormalizeRecipe([] {
    Recipe lora;
    lora.model = "Llama-3.1-8B";
    lora.method = FineTuneMethod::kLora;
    lora.lora_rank = 16;
    lora.sequence_length = 2048;
    lora.micro_batch_size = 2;
    lora.gpu_count = 1;
    return lora;
  }());
  EvidenceStats s;
  s.recipe_key = RecipeKey(r);
  s.sku_id = kL40s;
  s.runs = 2;
  s.successful_runs = 1;
  s.peak_memory_gb = 30;
  s.max_peak_memory_gb = 44;  // the failed run's
  auto cells = [&] { return FleetCellsFromEvidence({{r, s}}, TestCatalog()); };
  ASSERT_EQ(cells().size(), 1u);
  EXPECT_EQ(cells()[0].failed_peak_gb, 44);
  EXPECT_GT(cells()[0].predicted_total_gb, 0);
  s.max_peak_memory_gb = 30;  // the succeeded run got furthest
  EXPECT_EQ(cells()[0].failed_peak_gb, 0);
  s.max_peak_memory_gb = 44;
  s.offload_share = 0.5;  // an offloaded run's peak is not the GPU's need
  EXPECT_EQ(cells()[0].failed_peak_gb, 0);
}

EvidenceStats Stats(const std::string& sku, int64_t runs, int64_t ok,
                    double peak, double offload_share = 0) {
  EvidenceStats s;
  s.recipe_key = "rk1-x";
  s.sku_id = sku;
  s.runs = runs;
  s.successful_runs = ok;
  s.peak_memory_gb = peak;
  s.offload_share = offload_share;
  return s;
}

TEST(CrossSkuMemoryTransferTest, TakesTheSkuWithTheMostCleanSuccessfulRuns) {
  const GpuSku& l40s = Sku(kL40s);
  const GpuSku& a100_40 = Sku("A100-PCIE-40GB");
  const GpuSku& h100 = Sku("H100-SXM5-80GB");
  const GpuSku& a100 = Sku(kA100);
  // An OOM among the runs, an offloaded run: their peaks are not the
  // recipe's. The target's own SKU is never a source.
  auto t = CrossSkuMemoryTransfer({{&a100_40, Stats(a100_40.id, 5, 4, 39.9)},
                                   {&h100, Stats(h100.id, 6, 6, 30, 0.5)},
                                   {&l40s, Stats(l40s.id, 2, 2, 20.5)},
                                   {&a100, Stats(a100.id, 9, 9, 21)}},
                                  a100);
  ASSERT_TRUE(t.has_value());
  EXPECT_EQ(t->from_sku_id, kL40s);
  EXPECT_EQ(t->recipe_key, "rk1-x");
  EXPECT_DOUBLE_EQ(t->source_peak_gb, 20.5);
  EXPECT_DOUBLE_EQ(t->peak_gb, 20.5 + t->context_adjustment_gb);
  EXPECT_FALSE(
      CrossSkuMemoryTransfer({{&a100_40, Stats(a100_40.id, 5, 4, 39)}}, a100)
          .has_value());
}

TEST(CrossSkuMemoryTransferTest, TheCeilingIsTheSmallestCardWhereEveryRunFit) {
  const GpuSku& l40s = Sku(kL40s);
  const GpuSku& a100_40 = Sku("A100-PCIE-40GB");
  const GpuSku& a100 = Sku(kA100);
  // The peak comes from the most runs (the A100-80GB), the ceiling from
  // the smallest card that held every run (the A100-40GB).
  auto t = CrossSkuMemoryTransfer({{&a100, Stats(a100.id, 6, 6, 30)},
                                   {&a100_40, Stats(a100_40.id, 2, 2, 31)}},
                                  l40s);
  ASSERT_TRUE(t.has_value());
  EXPECT_EQ(t->from_sku_id, kA100);
  EXPECT_EQ(t->ceiling_sku_id, "A100-PCIE-40GB");
  EXPECT_DOUBLE_EQ(t->ceiling_gb,
                   a100_40.UsableMemoryGb() + t->context_adjustment_gb);
}

Recipe Lora8b(int sequence_length = 2048) {
  Recipe r;
  r.model = "Llama-3.1-8B";
  r.method = FineTuneMethod::kLora;
  r.lora_rank = 16;
  r.target_modules = {"all-linear"};
  r.sequence_length = sequence_length;
  r.micro_batch_size = 2;
  r.activation_checkpointing = ActivationCheckpointing::kOn;
  r.attention = AttentionImplementation::kFlash;
  r.gpu_count = 1;
  r.parallelism = Parallelism::kSingle;
  return NormalizeRecipe(r);
}

MeasuredRun SucceededRunOn(const std::string& sku, double step_s,
                           double peak_gb) {
  MeasuredRun run;
  run.sku_id = sku;
  run.gpu_count = 1;
  run.started = absl::FromUnixSeconds(1'700'000'000);
  run.ended = run.started + absl::Seconds(step_s * 100);
  run.steps_attempted = 100;
  run.steps_succeeded = 100;
  run.step_time_p50_s = step_s;
  run.step_time_p95_s = step_s * 1.1;
  run.peak_memory_gb = peak_gb;
  run.offload = Offload::kNone;
  run.outcome = RunOutcome::kSucceeded;
  return run;
}

// Whether one of the candidate's reasons contains `text`.
bool HasReasonWith(const Candidate& c, const std::string& text) {
  return std::any_of(
      c.reasons.begin(), c.reasons.end(),
      [&](const std::string& r) { return r.find(text) != std::string::npos; });
}

const Candidate* OnPool(const PlanResult& plan, const std::string& pool) {
  for (const Candidate& c : plan.candidates) {
    if (c.pool_name == pool) return &c;
  }
  return nullptr;
}

// A 1,000-step plan of Lora8b() over `pools` after three succeeded runs of
// it on `sku`, each peaking at `peak_gb`.
absl::StatusOr<PlanResult> PlanAfterThreeRunsOn(const std::vector<Pool>& pools,
                                                const std::string& sku,
                                                double peak_gb) {
  InMemoryEvidence evidence;
  for (int i = 0; i < 3; ++i)
    evidence.AddRun(Lora8b(), SucceededRunOn(sku, 2.0, peak_gb));
  PlanRequest request;
  request.recipe = Lora8b();
  request.total_steps = 1000;
  return Plan(request, pools, TestCatalog(), evidence);
}

TEST(PlannerFleetTest, MemoryMeasuredOnL40sTransfersToA100NamingIt) {
  const std::vector<Pool> pools = {TrainingPool("a100", kA100, Fabric::kNvlink),
                                   TrainingPool("l40s", kL40s, Fabric::kPcie)};
  // A recipe no nearby recipe on A100 informs (other model there).
  const Recipe recipe = Lora8b();
  absl::StatusOr<PlanResult> plan = PlanAfterThreeRunsOn(pools, kL40s, 21.3);
  ASSERT_TRUE(plan.ok()) << plan.status();
  const Candidate* a100 = OnPool(*plan, "a100");
  const Candidate* l40s = OnPool(*plan, "l40s");
  ASSERT_NE(a100, nullptr);
  ASSERT_NE(l40s, nullptr);
  EXPECT_EQ(l40s->basis, EvidenceBasis::kMeasured);
  EXPECT_EQ(a100->basis, EvidenceBasis::kTransferred);
  EXPECT_EQ(a100->transferred_from_sku_id, kL40s);
  EXPECT_EQ(a100->transferred_from_recipe_key, RecipeKey(recipe));
  // The L40S p95 (histogram bucket, capped at the max seen), context
  // overhead equal on both cards.
  EXPECT_DOUBLE_EQ(a100->peak_memory_gb, l40s->peak_memory_gb);
  EXPECT_NE(a100->peak_memory_gb, a100->prior_peak_memory_gb);
  EXPECT_TRUE(HasReasonWith(*a100,
                            "TRANSFERRED from the same recipe measured on "
                            "L40S-PCIE-48GB"));
  // Without the fleet model its step time is the analytic prior.
  EXPECT_DOUBLE_EQ(a100->step_time_s, a100->prior_step_time_s);
}

// The guide's L40S-for-LoRA case: a one-card layout measured on the
// A100-40GB, near that card's memory. On the L40S the estimate band alone
// straddles 48 GB; the runs prove it fits the smaller card, so it FITS the
// larger one, and nothing is charged for a risk that is not there.
TEST(PlannerFleetTest, ALayoutThatFitTheSmallerCardFitsTheLargerOne) {
  const std::vector<Pool> pools = {
      TrainingPool("a100-40", "A100-PCIE-40GB", Fabric::kPcie),
      TrainingPool("l40s", kL40s, Fabric::kPcie)};
  absl::StatusOr<PlanResult> plan =
      PlanAfterThreeRunsOn(pools, "A100-PCIE-40GB", 38);
  ASSERT_TRUE(plan.ok()) << plan.status();
  const Candidate* l40s = OnPool(*plan, "l40s");
  ASSERT_NE(l40s, nullptr);
  EXPECT_EQ(l40s->basis, EvidenceBasis::kTransferred);
  EXPECT_EQ(l40s->fit, Fit::kFits);
  EXPECT_EQ(l40s->oom_probability, 0);
  EXPECT_LE(l40s->peak_memory_gb_band.high,
            Sku("A100-PCIE-40GB").UsableMemoryGb());
  EXPECT_TRUE(HasReasonWith(*l40s,
                            "every run of this recipe on "
                            "A100-PCIE-40GB succeeded within"));
}

TEST(PlannerFleetTest, StepTimeOnA100FollowsTheRatioLearnedOnOtherRecipes) {
  const std::vector<Pool> pools = {TrainingPool("a100", kA100, Fabric::kNvlink),
                                   TrainingPool("l40s", kL40s, Fabric::kPcie)};
  InMemoryEvidence evidence;
  // Two other recipes measured on both cards: A100 at 0.5x its prior,
  // L40S at 1.0x (whatever the prior says, the ratio is what is learned).
  for (int seq : {1024, 4096}) {
    const Recipe other = Lora8b(seq);
    const double a100_prior = PriorStepTimeS(other, Sku(kA100));
    const double l40s_prior = PriorStepTimeS(other, Sku(kL40s));
    for (int i = 0; i < 3; ++i) {
      evidence.AddRun(other, SucceededRunOn(kA100, a100_prior * 0.5, 20));
      evidence.AddRun(other, SucceededRunOn(kL40s, l40s_prior * 1.0, 20));
    }
  }
  // The recipe asked for: measured on L40S only, at 1.0x its prior.
  const Recipe recipe = Lora8b(2048);
  const double l40s_prior = PriorStepTimeS(recipe, Sku(kL40s));
  for (int i = 0; i < 3; ++i) {
    evidence.AddRun(recipe, SucceededRunOn(kL40s, l40s_prior, 21));
  }
  std::vector<KeyedEvidence> all;
  for (int seq : {1024, 2048, 4096}) {
    const Recipe r = Lora8b(seq);
    for (const char* sku : {kA100, kL40s}) {
      if (auto s = evidence.Find(RecipeKey(r), sku)) all.push_back({r, *s});
    }
  }
  const FleetModel fleet =
      FleetModel::Fit(FleetCellsFromEvidence(all, TestCatalog()));
  EXPECT_EQ(fleet.step_time_cells(), 5);
  PlanRequest request;
  request.recipe = recipe;
  request.total_steps = 1000;
  // Nearby recipes on the same SKU would transfer by FLOPs; this test is
  // about the fleet model, so ask FindSimilar-free evidence: the exact key
  // only.
  class ExactOnly : public EvidenceSource {
   public:
    explicit ExactOnly(const InMemoryEvidence& e) : e_(e) {}
    std::optional<EvidenceStats> Find(absl::string_view key,
                                      absl::string_view sku) const override {
      return e_.Find(key, sku);
    }
    std::vector<KeyedEvidence> FindSimilar(absl::string_view, FineTuneMethod,
                                           absl::string_view) const override {
      return {};
    }
    std::vector<KeyedEvidence> FindAcrossSkus(
        absl::string_view key) const override {
      return e_.FindAcrossSkus(key);
    }
    PoolReliabilityRollup PoolReliability(absl::string_view pool,
                                          bool multi_gpu) const override {
      return e_.PoolReliability(pool, multi_gpu);
    }
    std::vector<EvalEvidence> FindEvals(absl::string_view recipe_key,
                                        absl::string_view sku_id,
                                        Precision precision) const override {
      return e_.FindEvals(recipe_key, sku_id, precision);
    }

   private:
    const InMemoryEvidence& e_;
  } exact(evidence);
  absl::StatusOr<PlanResult> plan =
      Plan(request, pools, TestCatalog(), exact, &fleet);
  ASSERT_TRUE(plan.ok()) << plan.status();
  const Candidate* a100 = OnPool(*plan, "a100");
  ASSERT_NE(a100, nullptr);
  EXPECT_EQ(a100->basis, EvidenceBasis::kTransferred);
  // Moves from the prior toward 0.5 x prior (histogram buckets and
  // shrinkage keep it from reaching it exactly).
  const double ratio = a100->step_time_s / a100->prior_step_time_s;
  EXPECT_LT(ratio, 0.85);
  EXPECT_GT(ratio, 0.45);
  EXPECT_LT(a100->step_time_s_band.low, a100->step_time_s);
  EXPECT_GT(a100->step_time_s_band.high, a100->step_time_s);
}

// The start-up of a model's layouts is the median of its measured cells,
// whatever their layout or card; a model with none kept has none.
TEST(FleetModelTest, StartupIsTheMedianOfTheModelsMeasuredCells) {
  std::vector<FleetCell> cells;
  for (auto [key, sku, model, seconds] :
       std::vector<std::tuple<const char*, const char*, const char*, double>>{
           {"rk-70b-tp2", kA100, "Llama-3.1-70B", 600},
           {"rk-70b-fsdp2", kL40s, "Llama-3.1-70B", 660},
           {"rk-70b-tp4", kA100, "Llama-3.1-70B", 540},
           {"rk-8b", kL40s, "Llama-3.1-8B", 0}}) {
    FleetCell c = StepCell(key, sku, 1.0);
    c.model = model;
    c.startup_hours_per_attempt = seconds / 3600;
    cells.push_back(c);
  }
  const FleetModel fleet = FleetModel::Fit(cells);
  const std::optional<ModelStartup> startup = fleet.Startup("Llama-3.1-70B");
  ASSERT_TRUE(startup.has_value());
  EXPECT_DOUBLE_EQ(startup->hours_per_attempt * 3600, 600);
  EXPECT_EQ(startup->cells, 3);
  EXPECT_EQ(startup->skus, (std::vector<std::string>{kA100, kL40s}));
  EXPECT_FALSE(fleet.Startup("Llama-3.1-8B").has_value());
  EXPECT_FALSE(fleet.Startup("Qwen2.5-14B").has_value());
}

// A layout whose start-up is not measured on its card starts as long as
// the model's measured layouts did (10 minutes on the L40S here), not in
// the 180 s prior, and says so; without the fleet model, the prior.
TEST(PlannerFleetTest, AnUnmeasuredLayoutStartsAsTheModelsMeasuredOnesDid) {
  const std::vector<Pool> pools = {TrainingPool("a100", kA100, Fabric::kNvlink),
                                   TrainingPool("l40s", kL40s, Fabric::kPcie)};
  InMemoryEvidence evidence;
  const Recipe recipe = Lora8b();
  for (int i = 0; i < 3; ++i) {
    MeasuredRun run = SucceededRunOn(kL40s, 2.0, 21.3);
    run.step_time_mean_s = 2.0;
    run.ended += absl::Seconds(600);
    evidence.AddRun(recipe, run);
  }
  std::vector<KeyedEvidence> all;
  if (auto s = evidence.Find(RecipeKey(recipe), kL40s)) {
    all.push_back({recipe, *s});
  }
  const FleetModel fleet =
      FleetModel::Fit(FleetCellsFromEvidence(all, TestCatalog()));
  PlanRequest request;
  request.recipe = recipe;
  request.total_steps = 1000;
  absl::StatusOr<PlanResult> plan =
      Plan(request, pools, TestCatalog(), evidence, &fleet);
  ASSERT_TRUE(plan.ok()) << plan.status();
  const Candidate* a100 = OnPool(*plan, "a100");
  ASSERT_NE(a100, nullptr);
  EXPECT_FALSE(a100->startup_measured);
  // 600 s within the start-up histogram's 19% bucket.
  EXPECT_NEAR(a100->startup_gpu_hours * 3600 / a100->gpu_count, 600, 0.1 * 600);
  EXPECT_TRUE(HasReasonWith(*a100,
                            "measured layouts started (median of 1 on "
                            "L40S-PCIE-48GB), not the 180 s prior"));

  plan = Plan(request, pools, TestCatalog(), evidence);
  ASSERT_TRUE(plan.ok()) << plan.status();
  a100 = OnPool(*plan, "a100");
  ASSERT_NE(a100, nullptr);
  EXPECT_DOUBLE_EQ(a100->startup_gpu_hours * 3600 / a100->gpu_count, 180);
}

}  // namespace
}  // namespace placement::core
