#ifndef PLACEMENT_TESTS_STORAGE_STORED_RECORDS_H_
#define PLACEMENT_TESTS_STORAGE_STORED_RECORDS_H_

// The records the storage tests store: a training pool, a recipe, and a
// run with every field a stored run needs. A test starts from these and
// sets what it is about.

#include <cstdint>
#include <cstdio>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "core/evidence/evidence.h"
#include "core/pool.h"
#include "core/recipe.h"
#include "storage/records/run_records.h"

namespace placement::storage::testing {

// An exclusive training pool: one node of 8 GPUs, all of them its quota.
inline core::Pool TrainingPool(const std::string& name,
                               const std::string& sku_id, core::Fabric fabric,
                               int64_t internal_rate_micros_per_gpu_hour) {
  core::Pool pool;
  pool.name = name;
  pool.sku_id = sku_id;
  pool.node_count = 1;
  pool.gpus_per_node = 8;
  pool.fabric = fabric;
  pool.purpose = core::PoolPurpose::kTraining;
  pool.exclusive = true;
  pool.gpu_quota = 8;
  pool.internal_rate_micros_per_gpu_hour = internal_rate_micros_per_gpu_hour;
  return pool;
}

// A LoRA of Llama-3.1-8B: rank 16, micro-batch 2.
inline core::Recipe Llama8bLora(int sequence_length = 2048) {
  core::Recipe recipe;
  recipe.model = "Llama-3.1-8B";
  recipe.method = core::FineTuneMethod::kLora;
  recipe.lora_rank = 16;
  recipe.sequence_length = sequence_length;
  recipe.micro_batch_size = 2;
  return recipe;
}

// Test run `i`'s id: a UUID whose text sorts as `i` does (backfills walk
// runs in run_id order).
inline std::string TestRunId(int i) {
  char id[37];
  std::snprintf(id, sizeof(id), "00000000-0000-4000-8000-%012d", i);
  return id;
}

// Run `i` of `recipe` on `pool`, ended at `ended`: one GPU for ten
// minutes, 100 steps of 1 s (p95 1.2 s), all of them succeeded, a peak of
// 30 GB, nothing offloaded; uploaded as "upload-<i>" by "agent-1".
inline RunToStore SucceededRun(const core::Recipe& recipe,
                               const core::Pool& pool, int i,
                               absl::Time ended) {
  RunToStore in;
  in.recipe = recipe;
  core::MeasuredRun& run = in.run;
  run.run_id = TestRunId(i);
  run.recipe_key = core::RecipeKey(recipe);
  run.sku_id = pool.sku_id;
  run.pool_name = pool.name;
  run.gpu_count = 1;
  run.ended = ended;
  run.started = ended - absl::Minutes(10);
  run.steps_attempted = run.steps_succeeded = 100;
  run.step_time_mean_s = run.step_time_p50_s = 1.0;
  run.step_time_p95_s = 1.2;
  run.peak_memory_gb = 30;
  run.offload = core::Offload::kNone;
  run.interconnect = core::Interconnect::kNone;
  run.outcome = core::RunOutcome::kSucceeded;
  in.recipe_proto = absl::StrCat("recipe-", run.recipe_key);
  in.upload = absl::StrCat("upload-", i);
  in.agent_id = "agent-1";
  return in;
}

// Spreads `run` over `gpus` of an NVLink pool: its collectives open when
// it has more than one.
inline void OnNvlinkGpus(int gpus, core::MeasuredRun* run) {
  run->gpu_count = gpus;
  run->interconnect =
      gpus > 1 ? core::Interconnect::kNvlink : core::Interconnect::kNone;
  run->collectives_opened = gpus > 1;
}

}  // namespace placement::storage::testing

#endif  // PLACEMENT_TESTS_STORAGE_STORED_RECORDS_H_
