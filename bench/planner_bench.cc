// Micro-benchmark of core::Plan over 50 pools with evidence, the size of a
// large PlacePlan call. Run by hand:
//   build/core/bench/planner_bench --benchmark_min_time=1

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "benchmark/benchmark.h"
#include "core/evidence/fleet_model.h"
#include "core/plan/planner.h"

namespace placement::core {
namespace {

GpuSku Sku(const char* id, double memory_gb, const char* form_factor,
           double nvlink, int pcie_gen, double bf16, double bandwidth) {
  GpuSku sku;
  sku.id = id;
  sku.memory_gb = memory_gb;
  sku.form_factor = form_factor;
  sku.max_nvlink_gb_s = nvlink;
  sku.pcie_gen = pcie_gen;
  sku.bf16_dense_tflops = bf16;
  sku.memory_bandwidth_gb_s = bandwidth;
  return sku;
}

// Figures from gpu_skus.csv.
std::vector<GpuSku> Catalog() {
  return {Sku("L4-PCIE-24GB", 24, "PCIe", 0, 4, 121, 300),
          Sku("A10-PCIE-24GB", 24, "PCIe", 0, 4, 125, 600),
          Sku("L40S-PCIE-48GB", 48, "PCIe", 0, 4, 362, 864),
          Sku("A100-PCIE-40GB", 40, "PCIe", 600, 4, 312, 1555),
          Sku("A100-PCIE-80GB", 80, "PCIe", 600, 4, 312, 1935),
          Sku("A100-SXM4-40GB", 40, "SXM4", 600, 4, 312, 1555),
          Sku("A100-SXM4-80GB", 80, "SXM4", 600, 4, 312, 2039),
          Sku("H100-PCIE-80GB", 80, "PCIe", 600, 5, 756, 2000),
          Sku("H100-NVL-94GB", 94, "PCIe", 600, 5, 835, 3900),
          Sku("H100-SXM5-80GB", 80, "SXM5", 900, 5, 989, 3350),
          Sku("H200-SXM-141GB", 141, "SXM5", 900, 5, 989, 4800)};
}

Recipe BenchRecipe(int seq) {
  Recipe r;
  r.model = "Llama-3.1-8B";
  r.method = FineTuneMethod::kLora;
  r.lora_rank = 16;
  r.target_modules = {"all-linear"};
  r.sequence_length = seq;
  r.micro_batch_size = 2;
  r.activation_checkpointing = ActivationCheckpointing::kOn;
  r.attention = AttentionImplementation::kFlash;
  r.gpu_count = 2;
  r.parallelism = Parallelism::kDdp;
  return NormalizeRecipe(r);
}

struct Fixture {
  std::vector<GpuSku> skus = Catalog();
  std::vector<Pool> pools;
  InMemoryEvidence evidence;
  PlanRequest request;

  Fixture() {
    for (int i = 0; i < 50; ++i) {
      const GpuSku& sku = skus[i % skus.size()];
      Pool pool;
      pool.name = absl::StrCat("pool-", i);
      pool.sku_id = sku.id;
      pool.node_count = 2;
      pool.gpus_per_node = 8;
      pool.fabric = sku.HasNvlink() ? Fabric::kNvlink : Fabric::kPcie;
      pool.purpose =
          i % 10 == 9 ? PoolPurpose::kServing : PoolPurpose::kTraining;
      pool.exclusive = true;
      pool.gpu_quota = 16;
      pool.internal_rate_micros_per_gpu_hour = 1'000'000 + 100'000 * (i % 7);
      pools.push_back(pool);
    }
    // Measured runs of the exact recipe on half the SKUs and of nearby
    // sequence lengths on the others.
    for (size_t s = 0; s < skus.size(); ++s) {
      for (int run = 0; run < 20; ++run) {
        MeasuredRun m;
        m.sku_id = skus[s].id;
        m.gpu_count = 2;
        m.started = absl::FromUnixSeconds(1'700'000'000 + run * 86400);
        m.ended = m.started + absl::Hours(2 + run % 3);
        m.steps_attempted = 5000;
        m.steps_succeeded = run % 5 == 0 ? 2500 : 5000;
        m.step_time_p50_s = 1.0 + 0.1 * s;
        m.step_time_p95_s = 1.3 + 0.1 * s;
        m.peak_memory_gb = 20 + run % 4;
        m.outcome = run % 5 == 0 ? RunOutcome::kFailed : RunOutcome::kSucceeded;
        m.collectives_opened = true;
        m.interconnect = Interconnect::kPcie;
        evidence.AddRun(BenchRecipe(s % 2 == 0 ? 2048 : 1024 + 256 * (run % 3)),
                        m);
      }
    }
    request.recipe = BenchRecipe(2048);
    request.total_steps = 20'000;
    request.serving = ServingTarget{"L40S-PCIE-48GB", Precision::kFp8};
  }
};

void BM_Plan50PoolsWithEvidence(benchmark::State& state) {
  Fixture f;
  for (auto _ : state) {
    absl::StatusOr<PlanResult> plan =
        Plan(f.request, f.pools, f.skus, f.evidence);
    benchmark::DoNotOptimize(plan);
    if (!plan.ok()) state.SkipWithError("plan failed");
  }
  state.SetItemsProcessed(state.iterations() * f.pools.size());
}
BENCHMARK(BM_Plan50PoolsWithEvidence);

// The same plan with the configuration left to the planner: GPU count,
// parallelism and activation checkpointing open (the search).
void BM_Plan50PoolsOpenConfiguration(benchmark::State& state) {
  Fixture f;
  f.request.recipe.gpu_count = 0;
  f.request.recipe.parallelism = Parallelism::kUnspecified;
  f.request.recipe.data_parallel_degree = 0;
  f.request.recipe.tensor_parallel_degree = 0;
  f.request.recipe.pipeline_parallel_degree = 0;
  f.request.recipe.activation_checkpointing =
      ActivationCheckpointing::kUnspecified;
  for (auto _ : state) {
    absl::StatusOr<PlanResult> plan =
        Plan(f.request, f.pools, f.skus, f.evidence);
    benchmark::DoNotOptimize(plan);
    if (!plan.ok()) state.SkipWithError("plan failed");
  }
  state.SetItemsProcessed(state.iterations() * f.pools.size());
}
BENCHMARK(BM_Plan50PoolsOpenConfiguration);

// A 70B full fine-tune with everything open on 50 pools of 2 x 8 GPUs with
// InfiniBand between nodes: the widest search (more layouts fit nothing).
void BM_Plan50Pools70bFullOpen(benchmark::State& state) {
  Fixture f;
  for (Pool& pool : f.pools) {
    pool.inter_node_fabric = InterNodeFabric::kInfiniband;
  }
  Recipe r;
  r.model = "Llama-3.1-70B";
  r.method = FineTuneMethod::kFull;
  r.precision = Precision::kBf16;
  r.fp32_master_weights = true;
  r.sequence_length = 2048;
  f.request.recipe = r;
  for (auto _ : state) {
    absl::StatusOr<PlanResult> plan =
        Plan(f.request, f.pools, f.skus, f.evidence);
    benchmark::DoNotOptimize(plan);
    if (!plan.ok()) state.SkipWithError("plan failed");
  }
  state.SetItemsProcessed(state.iterations() * f.pools.size());
}
BENCHMARK(BM_Plan50Pools70bFullOpen);

void BM_RecipeKey(benchmark::State& state) {
  const Recipe r = BenchRecipe(2048);
  for (auto _ : state) benchmark::DoNotOptimize(RecipeKey(r));
}
BENCHMARK(BM_RecipeKey);

void BM_PredictPeakMemory(benchmark::State& state) {
  const Recipe r = BenchRecipe(2048);
  const ModelArchitecture arch = *ResolveArchitecture(r);
  for (auto _ : state) {
    benchmark::DoNotOptimize(
        PredictPeakMemory(r, arch, DefaultMemoryModelConstants()));
  }
}
BENCHMARK(BM_PredictPeakMemory);

// The fleet model's refit (core/evidence/fleet_model.h) over N measured (recipe
// key, SKU) cells: building the cells (the analytic prior of each) and the
// alternating least squares. A replica runs it at most every
// --fleet_refit_seconds, over every rollup of its snapshot.
void BM_FleetRefit(benchmark::State& state) {
  const std::vector<GpuSku> skus = Catalog();
  const int cells = static_cast<int>(state.range(0));
  std::vector<KeyedEvidence> evidence;
  evidence.reserve(cells);
  for (int i = 0; i < cells; ++i) {
    // Distinct recipes: sequence length, rank and micro-batch vary.
    Recipe r = BenchRecipe(256 + 16 * (i / skus.size() % 240));
    r.lora_rank = 4 << (i / (skus.size() * 240) % 6);
    r.micro_batch_size = 1 + static_cast<int>(i / (skus.size() * 1440) % 8);
    r = NormalizeRecipe(r);
    KeyedEvidence e;
    e.stats.recipe_key = RecipeKey(r);
    e.stats.sku_id = skus[i % skus.size()].id;
    e.stats.runs = 3;
    e.stats.successful_runs = 3;
    e.stats.steps_succeeded = 3000;
    e.stats.median_step_time_s = 0.5 + 0.01 * (i % 97);
    e.stats.peak_memory_gb = 20 + i % 7;
    e.stats.max_peak_memory_gb = 21 + i % 7;
    e.recipe = std::move(r);
    evidence.push_back(std::move(e));
  }
  for (auto _ : state) {
    FleetModel model = FleetModel::Fit(FleetCellsFromEvidence(evidence, skus));
    benchmark::DoNotOptimize(model);
  }
  state.SetItemsProcessed(state.iterations() * cells);
}
BENCHMARK(BM_FleetRefit)
    ->Arg(100)
    ->Arg(1000)
    ->Arg(10000)
    ->Arg(100000)
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace placement::core

BENCHMARK_MAIN();
