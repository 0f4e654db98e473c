// A replica's catalog snapshot as the evidence grows: memory per rollup and
// the refresh cost per change (see docs/PERFORMANCE.md).
//
//   snapshot_bench [--sizes 100,1000,10000,100000] [--changes 200]
//
// For each size it makes a fresh database on the PostgreSQL server of
// PLACEMENT_TEST_DATABASE_URL (an admin URL), stores that many evidence
// rollups (distinct recipe keys x 10 SKUs), reads a full snapshot, then
// `--changes` times commits one change and refreshes incrementally. Prints
// one line per size:
//
//   snapshot_bench rollups=N bytes_per_rollup=B full_read_ms=..
//     full_read_cpu_ms=.. update_refresh_cpu_us=.. update_refresh_wall_us=..
//     insert_refresh_cpu_us=.. insert_refresh_wall_us=.. changes=C
//
// (all on one line).
//
// bytes_per_rollup: heap bytes in use (glibc mallinfo2) after the full read
// less before it, over N, the snapshot alone (the read's rows are freed by
// then). *_refresh_cpu_us: this process's CPU (CLOCK_THREAD_CPUTIME_ID) per
// refresh after one change, the replica's side only (the database server's
// work for the query is not in it; *_wall_us includes it and the round
// trips). "update": a run added to an existing (recipe key, SKU); "insert": a
// new one.
#include <malloc.h>
#include <time.h>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "core/recipe.h"
#include "placement/v1/recipe.pb.h"
#include "services/api/recipe_convert.h"
#include "services/plan/evidence_cache.h"
#include "storage/session/db_session.h"
#include "storage/wire/hex.h"
#include "tests/support/test_database.h"

ABSL_FLAG(std::string, sizes, "100,1000,10000,100000",
          "rollup counts to measure, comma-separated");
ABSL_FLAG(int, changes, 200, "changes (and refreshes) per size and kind");

namespace {

using placement::services::CatalogSnapshot;

constexpr const char* kSkus[] = {
    "L4-PCIE-24GB",   "A10-PCIE-24GB",  "L40S-PCIE-48GB", "A100-PCIE-40GB",
    "A100-PCIE-80GB", "A100-SXM4-40GB", "A100-SXM4-80GB", "H100-PCIE-80GB",
    "H100-SXM5-80GB", "H200-SXM-141GB"};
constexpr int kSkuCount = 10;
constexpr const char* kModels[] = {"Llama-3.1-8B", "Qwen2.5-7B",
                                   "Mistral-7B-v0.3", "Llama-3.1-70B"};

// Distinct recipes: four models x four ranks x sequence lengths in steps of
// 8 tokens.
placement::core::Recipe RecipeNumber(int n) {
  placement::core::Recipe r;
  r.model = kModels[n % 4];
  r.method = placement::core::FineTuneMethod::kLora;
  r.lora_rank = 8 << (n / 4 % 4);
  r.sequence_length = 256 + 8 * (n / 16);
  r.micro_batch_size = 1;
  r.attention = placement::core::AttentionImplementation::kFlash;
  return placement::core::NormalizeRecipe(r);
}

double ThreadCpuSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

std::string RollupValues(int recipe_number, int sku) {
  const placement::core::Recipe recipe = RecipeNumber(recipe_number);
  const std::string proto =
      placement::services::RecipeToProto(recipe).SerializeAsString();
  std::string hist = "{";
  for (int i = 0; i < 64; ++i) absl::StrAppend(&hist, i ? "," : "", i == 20);
  hist += "}";
  return absl::StrCat(
      "('", placement::core::RecipeKey(recipe), "','", kSkus[sku], "',decode('",
      placement::storage::HexEncode(proto), "','hex'),'", recipe.model,
      "','LORA',1,1,0,0,0,0,0,0,100,90,", 600'000'000, ",20,'", hist, "','",
      hist, "','", hist, "')");
}

constexpr char kInsertPrefix[] =
    "INSERT INTO evidence_rollups (recipe_key, sku_id, recipe, model, method, "
    "runs, successful_runs, offload_runs, retries, collective_runs, "
    "nvlink_runs, pcie_runs, host_memory_runs, steps_attempted, "
    "steps_succeeded, gpu_microseconds, max_peak_memory_gb, "
    "step_time_p50_hist, step_time_p95_hist, peak_memory_hist) VALUES ";

void Seed(const placement::testing::TestDatabase& db, int rollups) {
  const int keys = (rollups + kSkuCount - 1) / kSkuCount;
  std::string batch;
  int in_batch = 0;
  int made = 0;
  for (int k = 0; k < keys && made < rollups; ++k) {
    for (int s = 0; s < kSkuCount && made < rollups; ++s, ++made) {
      absl::StrAppend(&batch, in_batch ? "," : kInsertPrefix,
                      RollupValues(k, s));
      if (++in_batch == 1000) {
        db.Execute(batch);
        batch.clear();
        in_batch = 0;
      }
    }
  }
  if (in_batch > 0) db.Execute(batch);
}

struct Cost {
  double cpu_us = 0;
  double wall_us = 0;
};

// Commits `change()` then refreshes `snapshot` incrementally, `count` times.
template <typename Change>
Cost MeasureRefreshes(placement::storage::DbSession& session,
                      std::shared_ptr<CatalogSnapshot>& snapshot, int count,
                      Change change) {
  Cost total;
  for (int i = 0; i < count; ++i) {
    change(i);
    const double cpu = ThreadCpuSeconds();
    const absl::Time wall = absl::Now();
    absl::StatusOr<std::shared_ptr<CatalogSnapshot>> next =
        placement::services::ReadSnapshotChanges(session, *snapshot, 0);
    total.wall_us += absl::ToDoubleMicroseconds(absl::Now() - wall);
    total.cpu_us += (ThreadCpuSeconds() - cpu) * 1e6;
    if (!next.ok() || !(*next)->incremental) {
      std::fprintf(stderr, "snapshot_bench: refresh failed: %s\n",
                   next.status().ToString().c_str());
      std::exit(1);
    }
    snapshot = *std::move(next);
  }
  return {total.cpu_us / count, total.wall_us / count};
}

void MeasureSize(int rollups, int changes) {
  placement::testing::TestDatabase db;
  db.Migrate();
  Seed(db, rollups);
  db.Execute("VACUUM ANALYZE evidence_rollups");
  placement::storage::DbSession session(db.url());

  const size_t heap_before = mallinfo2().uordblks;
  const double cpu = ThreadCpuSeconds();
  const absl::Time wall = absl::Now();
  absl::StatusOr<std::shared_ptr<CatalogSnapshot>> full =
      placement::services::ReadFullSnapshot(session, 0);
  const double full_ms = absl::ToDoubleMilliseconds(absl::Now() - wall);
  const double full_cpu_ms = (ThreadCpuSeconds() - cpu) * 1e3;
  if (!full.ok()) {
    std::fprintf(stderr, "snapshot_bench: %s\n",
                 full.status().ToString().c_str());
    std::exit(1);
  }
  const size_t heap_after = mallinfo2().uordblks;
  if (static_cast<int>((*full)->evidence.size()) != rollups) {
    std::fprintf(stderr, "snapshot_bench: read %zu rollups of %d\n",
                 (*full)->evidence.size(), rollups);
    std::exit(1);
  }
  const double bytes_per_rollup =
      (static_cast<double>(heap_after) - static_cast<double>(heap_before)) /
      rollups;

  std::shared_ptr<CatalogSnapshot> snapshot = *std::move(full);
  std::mt19937 random(rollups);
  const int keys = (rollups + kSkuCount - 1) / kSkuCount;
  const Cost update = MeasureRefreshes(session, snapshot, changes, [&](int) {
    const int n = static_cast<int>(random() % rollups);
    db.Execute(absl::StrCat(
        "UPDATE evidence_rollups SET runs = runs + 1 WHERE recipe_key = '",
        placement::core::RecipeKey(RecipeNumber(n / kSkuCount)),
        "' AND sku_id = '", kSkus[n % kSkuCount], "'"));
  });
  const Cost insert = MeasureRefreshes(session, snapshot, changes, [&](int i) {
    db.Execute(
        absl::StrCat(kInsertPrefix, RollupValues(keys + i, i % kSkuCount)));
  });
  std::printf(
      "snapshot_bench rollups=%d bytes_per_rollup=%.0f full_read_ms=%.1f "
      "full_read_cpu_ms=%.1f update_refresh_cpu_us=%.1f "
      "update_refresh_wall_us=%.1f insert_refresh_cpu_us=%.1f "
      "insert_refresh_wall_us=%.1f changes=%d\n",
      rollups, bytes_per_rollup, full_ms, full_cpu_ms, update.cpu_us,
      update.wall_us, insert.cpu_us, insert.wall_us, changes);
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  const int changes = std::max(1, absl::GetFlag(FLAGS_changes));
  for (absl::string_view size :
       absl::StrSplit(absl::GetFlag(FLAGS_sizes), ',', absl::SkipEmpty())) {
    int rollups = 0;
    if (!absl::SimpleAtoi(size, &rollups) || rollups <= 0) {
      std::fprintf(stderr, "snapshot_bench: bad size '%s'\n",
                   std::string(size).c_str());
      return 2;
    }
    MeasureSize(rollups, changes);
  }
  return 0;
}
