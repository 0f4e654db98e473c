#include "core/plan/configuration_search.h"

#include <algorithm>
#include <limits>
#include <string>

#include "absl/strings/str_cat.h"
#include "core/models/step_time_model.h"

namespace placement::core {

OpenSettings OpenSettingsOf(const Recipe& requested) {
  OpenSettings open;
  open.gpu_count = requested.gpu_count == 0;
  open.parallelism = requested.parallelism == Parallelism::kUnspecified;
  open.checkpointing = requested.activation_checkpointing ==
                       ActivationCheckpointing::kUnspecified;
  return open;
}

int GpuLimit(const Pool& pool, int max_gpus) {
  int limit = std::min(pool.total_gpus(), pool.gpu_quota);
  if (max_gpus > 0) limit = std::min(limit, max_gpus);
  return std::min(limit, kMaxGpuCount);
}

std::vector<int> GpuCountsToTry(const Pool& pool, int max_gpus) {
  const int limit = GpuLimit(pool, max_gpus);
  const int per_node = std::max(1, pool.gpus_per_node);
  std::vector<int> counts;
  for (int n = 1; n < per_node && n <= limit; n *= 2) counts.push_back(n);
  const int max_nodes = limit / per_node;
  for (int k = 1; k <= max_nodes; k *= 2) counts.push_back(k * per_node);
  if (max_nodes > 0) counts.push_back(max_nodes * per_node);
  std::sort(counts.begin(), counts.end());
  counts.erase(std::unique(counts.begin(), counts.end()), counts.end());
  return counts;
}

namespace {

// One layout of `n` GPUs: parallelism and degrees (0 = derived).
struct Layout {
  Parallelism parallelism;
  int tp = 0;
  int pp = 0;
  int dp = 0;
};

void OpenLayouts(int n, const Pool& pool, const GpuSku& sku, int num_layers,
                 std::vector<Layout>* out) {
  if (n == 1) {
    out->push_back({Parallelism::kSingle});
    return;
  }
  out->push_back({Parallelism::kDdp});
  out->push_back({Parallelism::kZero2});
  out->push_back({Parallelism::kFsdp});
  const int per_node = std::max(1, pool.gpus_per_node);
  for (int tp = 2; tp <= std::min(n, per_node); tp *= 2) {
    if (n % tp != 0 || !CollectivesUseNvlink(sku, pool, tp)) continue;
    if (tp == n) {
      out->push_back({Parallelism::kTensor, tp, 1, 1});
    } else {
      out->push_back({Parallelism::kFsdp, tp, 1, n / tp});
    }
  }
  // Whole nodes as pipeline stages, tensor parallel inside each.
  if (n > per_node && n % per_node == 0 && n / per_node <= num_layers) {
    const int tp = CollectivesUseNvlink(sku, pool, per_node) ? per_node : 1;
    out->push_back({Parallelism::kPipeline, tp, n / per_node, per_node / tp});
  }
}

}  // namespace

std::vector<Recipe> EnumerateConfigurations(const Recipe& requested,
                                            const Pool& pool, const GpuSku& sku,
                                            int max_gpus) {
  // Everything but the layout is normalized and validated once.
  const Recipe base = NormalizeRecipe(requested);
  Recipe probe = base;
  probe.gpu_count = 1;
  probe.parallelism = Parallelism::kSingle;
  probe.tensor_parallel_degree = probe.pipeline_parallel_degree =
      probe.data_parallel_degree = 1;
  if (!ValidateRecipe(probe).empty()) return {};
  int num_layers = std::numeric_limits<int>::max();
  if (auto arch = ResolveArchitecture(base); arch.ok()) {
    num_layers = arch->num_layers;
  }
  return EnumerateConfigurations(requested, base, num_layers, pool, sku,
                                 max_gpus);
}

std::vector<Recipe> EnumerateConfigurations(const Recipe& requested,
                                            const Recipe& base, int num_layers,
                                            const Pool& pool, const GpuSku& sku,
                                            int max_gpus) {
  const OpenSettings open = OpenSettingsOf(requested);
  std::vector<int> counts;
  if (open.gpu_count) {
    counts = GpuCountsToTry(pool, max_gpus);
  } else {
    counts = {requested.gpu_count};
  }
  std::vector<ActivationCheckpointing> checkpointing = {
      requested.activation_checkpointing};
  if (open.checkpointing) {
    checkpointing = {ActivationCheckpointing::kOff,
                     ActivationCheckpointing::kOn};
  }
  std::vector<Recipe> configurations;
  std::vector<Layout> layouts;
  for (int n : counts) {
    layouts.clear();
    if (open.parallelism) {
      OpenLayouts(n, pool, sku, num_layers, &layouts);
    } else {
      layouts.push_back(
          {requested.parallelism, requested.tensor_parallel_degree,
           requested.pipeline_parallel_degree, requested.data_parallel_degree});
    }
    for (const Layout& layout : layouts) {
      for (ActivationCheckpointing ckpt : checkpointing) {
        Recipe r = base;
        r.gpu_count = n;
        r.parallelism = layout.parallelism;
        r.tensor_parallel_degree = layout.tp;
        r.pipeline_parallel_degree = layout.pp;
        r.data_parallel_degree = layout.dp;
        r.activation_checkpointing =
            ckpt == ActivationCheckpointing::kUnspecified
                ? ActivationCheckpointing::kOff
                : ckpt;
        NormalizeLayout(&r);
        if (!ValidateLayout(r, num_layers).empty()) continue;
        configurations.push_back(std::move(r));
      }
    }
  }
  return configurations;
}

std::string DescribeConfiguration(const Recipe& r) {
  return absl::StrCat(
      ParallelismName(r.parallelism), " over ", r.gpu_count,
      r.gpu_count == 1 ? " GPU" : " GPUs", " (tp=", r.tensor_parallel_degree,
      " pp=", r.pipeline_parallel_degree, " dp=", r.data_parallel_degree,
      "), activation checkpointing ", RecomputesActivations(r) ? "on" : "off");
}

}  // namespace placement::core
