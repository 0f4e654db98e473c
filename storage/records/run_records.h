#ifndef PLACEMENT_STORAGE_RUN_RECORDS_H_
#define PLACEMENT_STORAGE_RUN_RECORDS_H_

// What storage/stores/run_store.h reads and writes, without its database
// headers, for the code that converts it.

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "core/evidence/eval_evidence.h"
#include "core/evidence/evidence.h"
#include "core/recipe.h"

namespace placement::storage {

// A validated run, ready to store.
struct RunToStore {
  core::MeasuredRun run;     // run_id, recipe_key, sku, pool, team, figures
  core::Recipe recipe;       // normalized
  std::string recipe_proto;  // serialized placement.v1.Recipe (normalized)
  // Serialized placement.v1.BenchmarkRun as sent (deterministic): its
  // sha256 is the run's fingerprint for idempotency.
  std::string upload;
  std::string agent_id;
  double tokens_per_second = 0;
  bool exclusive = false;
  std::string plan_id;  // empty: none
  // The upload's evals, serving SKUs resolved to ids (run_id, recipe_key and
  // recorded are the run's; InsertEvals).
  std::vector<core::EvalEvidence> evals;
  // BenchmarkRun.failure_reason; stored in run_failure_reasons (migration
  // 0025) when not empty and the schema has that table.
  std::string failure_reason;
  // Whether the uploader may name a plan of the given team (OK, or the
  // refusal InsertRun answers); unset: any plan.
  std::function<absl::Status(const std::string& plan_team)> may_name_plan;
  // The job's wait for the pool (start less submission), when the upload
  // carried its submission time: it joins the pool's waits (pool_states).
  std::optional<double> queue_wait_s;
};

// A run that carried out a plan, against what the plan predicted for the
// run's pool.
struct PlanOutcome {
  std::string sku_id;
  std::string basis;  // of the prediction: MEASURED, TRANSFERRED, ESTIMATED
  double predicted_peak_memory_gb = 0;
  double observed_peak_memory_gb = 0;
  double predicted_gpu_hours_per_successful_step = 0;
  std::optional<double> observed_gpu_hours_per_successful_step;
};

struct RunAck {
  std::string run_id;
  std::string recipe_key;
  absl::Time accept_time;
  int64_t gpu_microseconds = 0;
  // Set when the run is new, names a plan, and that plan predicted its pool.
  std::optional<PlanOutcome> plan_outcome;
  // The id of the transaction that stored the run (0 for runs stored before
  // versions were kept): see TransactionHorizon.
  int64_t evidence_version = 0;
};

struct StoredRun {
  std::string upload;  // serialized placement.v1.BenchmarkRun
  RunAck ack;
  std::string team;  // as stored (the upload's, or the default it took)
};

struct RunSummary {
  std::string run_id;
  std::string pool_name;
  std::string sku_id;
  std::string recipe_key;
  std::string model;
  core::FineTuneMethod method = core::FineTuneMethod::kUnspecified;
  int gpu_count = 0;
  absl::Time started;
  absl::Time ended;
  int64_t steps_attempted = 0;
  int64_t steps_succeeded = 0;
  double peak_memory_gb = 0;
  core::Offload offload = core::Offload::kUnspecified;
  core::RunOutcome outcome = core::RunOutcome::kUnspecified;
  int retries = 0;
  int64_t gpu_microseconds = 0;
  absl::Time accept_time;
  // When the run's step samples were dropped by retention
  // (storage/stores/sample_retention.h); unset while kept or when none were
  // sent.
  std::optional<absl::Time> samples_dropped_at;
};

}  // namespace placement::storage

#endif  // PLACEMENT_STORAGE_RUN_RECORDS_H_
