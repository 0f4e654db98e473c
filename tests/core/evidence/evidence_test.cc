#include "core/evidence/evidence.h"

#include "gtest/gtest.h"

namespace placement::core {
namespace {

Recipe Lora8b(int seq) {
  Recipe r;
  r.model = "Llama-3.1-8B";
  r.method = FineTuneMethod::kLora;
  r.lora_rank = 16;
  r.sequence_length = seq;
  r.micro_batch_size = 4;
  r.attention = AttentionImplementation::kFlash;
  return NormalizeRecipe(r);
}

MeasuredRun MakeRun(double hours, int64_t steps_ok, double p50, double peak,
                    RunOutcome outcome, int retries = 0,
                    Offload offload = Offload::kNone) {
  MeasuredRun run;
  run.sku_id = "L40S-PCIE-48GB";
  run.pool_name = "l40s-train";
  run.gpu_count = 1;
  run.started = absl::FromUnixSeconds(1'700'000'000);
  run.ended = run.started + absl::Hours(hours);
  run.steps_attempted = steps_ok + 10;
  run.steps_succeeded = steps_ok;
  run.step_time_mean_s = p50;
  run.step_time_p50_s = p50;
  run.step_time_p95_s = p50 * 1.2;
  run.peak_memory_gb = peak;
  run.offload = offload;
  run.interconnect = Interconnect::kNone;
  run.retries = retries;
  run.outcome = outcome;
  return run;
}

TEST(EvidenceTest, GpuHoursPerSuccessfulStepCountsFailedRuns) {
  std::vector<MeasuredRun> runs = {
      MakeRun(2, 1000, 1.0, 30, RunOutcome::kSucceeded),
      MakeRun(2, 0, 1.0, 47.9, RunOutcome::kOom, /*retries=*/2),
  };
  for (MeasuredRun& r : runs) r.recipe_key = "rk1-x";
  const EvidenceStats s = AggregateRuns(runs);
  EXPECT_EQ(s.runs, 2);
  EXPECT_EQ(s.successful_runs, 1);
  EXPECT_DOUBLE_EQ(s.gpu_hours, 4);
  EXPECT_DOUBLE_EQ(*s.gpu_hours_per_successful_step, 4.0 / 1000);
  EXPECT_DOUBLE_EQ(s.retry_rate, 1.0);
  EXPECT_DOUBLE_EQ(s.failure_share, 0.5);
  EXPECT_DOUBLE_EQ(s.max_peak_memory_gb, 47.9);
}

TEST(EvidenceTest, StepTimeQuantilesFromHistogramWithinHalfABucket) {
  EvidenceRollup rollup;
  for (int i = 1; i <= 100; ++i) {
    rollup.Add(
        MakeRun(1, 100, 0.5 + 0.01 * i, 20 + 0.1 * i, RunOutcome::kSucceeded));
  }
  const EvidenceStats s = Summarize(rollup);
  EXPECT_NEAR(s.median_step_time_s, 1.0, 1.0 * 0.1);
  EXPECT_NEAR(s.p95_step_time_s, 1.45 * 1.2, 1.74 * 0.1);
  // Peak memory is not read from its histogram: the largest peak, exactly.
  EXPECT_TRUE(s.peak_memory_exact);
  EXPECT_EQ(s.peak_memory_gb, 20 + 0.1 * 100);
  EXPECT_NEAR(s.succeeded_peak.MeanGb(), 25.05, 1e-9);
}

TEST(EvidenceTest, PeakMemoryIsTheExactLargestPeakOfASucceededRun) {
  EvidenceRollup rollup;
  MeasuredRun a = MakeRun(1, 100, 1.0, 40.0, RunOutcome::kSucceeded);
  a.peak_memory_allocated_gb = 37.2;
  a.peak_memory_reserved_gb = 40.0;
  MeasuredRun b = MakeRun(1, 100, 1.0, 41.3, RunOutcome::kSucceeded);
  b.peak_memory_reserved_gb = 41.3;  // no allocated figure
  MeasuredRun oom = MakeRun(1, 2, 1.0, 47.9, RunOutcome::kOom);
  oom.peak_memory_allocated_gb = 47.0;
  oom.peak_memory_reserved_gb = 47.9;
  for (const MeasuredRun& run : {a, b, oom}) rollup.Add(run);
  const EvidenceStats s = Summarize(rollup);
  // 41.3 GB, not the middle of its 12% bucket (42.7 GB) nor the OOM run's
  // 47.9 GB (where it stopped, not what the recipe needs).
  EXPECT_TRUE(s.peak_memory_exact);
  EXPECT_EQ(s.peak_memory_gb, 41.3);
  EXPECT_EQ(s.max_peak_memory_gb, 47.9);
  EXPECT_EQ(s.succeeded_peak.runs, 2);
  EXPECT_DOUBLE_EQ(s.succeeded_peak.MeanGb(), (40.0 + 41.3) / 2);
  EXPECT_EQ(s.succeeded_allocated.runs, 1);
  EXPECT_EQ(s.succeeded_allocated.max_gb, 37.2);
  EXPECT_EQ(s.succeeded_reserved.runs, 2);
  EXPECT_EQ(s.succeeded_reserved.max_gb, 41.3);
  EXPECT_DOUBLE_EQ(s.succeeded_reserved.MeanGb(), (40.0 + 41.3) / 2);

  // No run succeeded: the largest peak any run reached, exactly.
  EvidenceRollup failed;
  failed.Add(oom);
  EXPECT_EQ(Summarize(failed).peak_memory_gb, 47.9);
  EXPECT_TRUE(Summarize(failed).peak_memory_exact);
}

TEST(EvidenceTest, RollupWithoutExactFiguresFallsBackToItsHistogram) {
  // A stored row whose succeeded runs are not all in its exact figures
  // (runs stored before they were kept, and gone since).
  EvidenceRollup rollup;
  rollup.Add(MakeRun(1, 100, 1.0, 40.0, RunOutcome::kSucceeded));
  rollup.Add(MakeRun(1, 2, 1.0, 30.0, RunOutcome::kFailed));
  rollup.succeeded_peak = {};
  const EvidenceStats s = Summarize(rollup);
  EXPECT_FALSE(s.peak_memory_exact);
  // 40 GB lies in the bucket [35.9, 40.3) GB: read back as its middle,
  // 5% low.
  EXPECT_NEAR(s.peak_memory_gb, 38.05, 0.01);
  // Every run succeeded: the all-runs maximum is the exact figure.
  EvidenceRollup clean;
  clean.Add(MakeRun(1, 100, 1.0, 40.0, RunOutcome::kSucceeded));
  clean.succeeded_peak = {};
  EXPECT_TRUE(Summarize(clean).peak_memory_exact);
  EXPECT_EQ(Summarize(clean).peak_memory_gb, 40.0);
}

TEST(EvidenceTest, MergeEqualsAddingEveryRun) {
  EvidenceRollup all, a, b;
  for (int i = 0; i < 10; ++i) {
    MeasuredRun run =
        MakeRun(1 + i, 100 * i, 0.2 * (i + 1), 10 + 3 * i,
                i % 3 ? RunOutcome::kSucceeded : RunOutcome::kFailed, i % 2,
                i == 7 ? Offload::kCpu : Offload::kNone);
    all.Add(run);
    (i < 5 ? a : b).Add(run);
  }
  a.Merge(b);
  EXPECT_EQ(a.runs, all.runs);
  EXPECT_EQ(a.offload_runs, 1);
  EXPECT_DOUBLE_EQ(a.gpu_hours, all.gpu_hours);
  EXPECT_EQ(a.step_time_p50_hist, all.step_time_p50_hist);
  EXPECT_EQ(a.peak_memory_hist, all.peak_memory_hist);
  EXPECT_EQ(a.succeeded_peak.runs, all.succeeded_peak.runs);
  EXPECT_DOUBLE_EQ(a.succeeded_peak.sum_gb, all.succeeded_peak.sum_gb);
  EXPECT_EQ(a.succeeded_peak.max_gb, all.succeeded_peak.max_gb);
  EXPECT_DOUBLE_EQ(Summarize(a).offload_share, 0.1);
}

TEST(EvidenceTest, InMemoryFindAndFindSimilar) {
  InMemoryEvidence evidence;
  evidence.AddRun(Lora8b(2048),
                  MakeRun(1, 1000, 1, 30, RunOutcome::kSucceeded));
  evidence.AddRun(Lora8b(4096), MakeRun(1, 500, 2, 38, RunOutcome::kSucceeded));
  ASSERT_TRUE(evidence.Find(RecipeKey(Lora8b(2048)), "L40S-PCIE-48GB"));
  EXPECT_FALSE(evidence.Find(RecipeKey(Lora8b(2048)), "A100-SXM4-80GB"));
  EXPECT_FALSE(evidence.Find(RecipeKey(Lora8b(1024)), "L40S-PCIE-48GB"));
  EXPECT_EQ(
      evidence
          .FindSimilar("Llama-3.1-8B", FineTuneMethod::kLora, "L40S-PCIE-48GB")
          .size(),
      2u);
  EXPECT_TRUE(
      evidence
          .FindSimilar("Llama-3.1-8B", FineTuneMethod::kQlora, "L40S-PCIE-48GB")
          .empty());
}

TEST(EvidenceTest, TransferScalesStepTimeWithTokensAndMemoryWithModel) {
  InMemoryEvidence evidence;
  evidence.AddRun(Lora8b(2048),
                  MakeRun(1, 1000, 1.0, 30, RunOutcome::kSucceeded));
  const auto similar = evidence.FindSimilar(
      "Llama-3.1-8B", FineTuneMethod::kLora, "L40S-PCIE-48GB");
  const auto t = BestTransfer(similar, Lora8b(1024));
  ASSERT_TRUE(t.has_value());
  // Half the tokens: a bit more than half the time (attention is s^2).
  EXPECT_GT(t->step_time_scale, 0.45);
  EXPECT_LT(t->step_time_scale, 0.55);
  EXPECT_LT(t->memory_scale, 1.0);
  EXPECT_NEAR(*t->stats.gpu_hours_per_successful_step,
              0.001 * t->step_time_scale, 1e-12);
  EXPECT_EQ(t->stats.recipe_key, RecipeKey(Lora8b(1024)));
  // A different method never transfers.
  Recipe full = Lora8b(1024);
  full.method = FineTuneMethod::kFull;
  EXPECT_FALSE(BestTransfer(similar, NormalizeRecipe(full)).has_value());
}

TEST(EvidenceTest, OneAdapterTypeNeverStandsForAnother) {
  // LitGPT's Llama-2-7B at equal settings: LLaMA-Adapter 20.0 GB, LoRA
  // 21.3, Adapter v2 25.5. Neither the exact key nor a transfer may carry
  // one's peak to another.
  InMemoryEvidence evidence;
  Recipe dora = Lora8b(2048);
  dora.adapter = AdapterType::kDora;
  dora = NormalizeRecipe(dora);
  evidence.AddRun(dora, MakeRun(1, 1000, 1.0, 30, RunOutcome::kSucceeded));
  EXPECT_FALSE(
      evidence.Find(RecipeKey(Lora8b(2048)), "L40S-PCIE-48GB").has_value());
  const auto similar = evidence.FindSimilar(
      "Llama-3.1-8B", FineTuneMethod::kLora, "L40S-PCIE-48GB");
  ASSERT_EQ(similar.size(), 1u);
  EXPECT_FALSE(BestTransfer(similar, Lora8b(1024)).has_value());
  Recipe dora_short = Lora8b(1024);
  dora_short.adapter = AdapterType::kDora;
  EXPECT_TRUE(BestTransfer(similar, NormalizeRecipe(dora_short)).has_value());
  // A recipe stored before the field (UNSPECIFIED) was a LoRA.
  Recipe stored = Lora8b(2048);
  stored.adapter = AdapterType::kUnspecified;
  EXPECT_TRUE(IsTransferable(stored, Lora8b(1024)));
}

}  // namespace
}  // namespace placement::core
