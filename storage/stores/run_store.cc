#include "storage/stores/run_store.h"

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "core/units.h"
#include "storage/stores/cost_store.h"
#include "storage/stores/eval_store.h"
#include "storage/stores/pool_reliability_store.h"
#include "storage/stores/pool_state_store.h"
#include "storage/wire/double_text.h"
#include "storage/wire/hex.h"
#include "storage/wire/histogram_text.h"
#include "storage/wire/most_failed_run_row.h"
#include "storage/wire/pq_values.h"

namespace placement::storage {
namespace {

#define PLACEMENT_INSERT_RUN_COLUMNS                                        \
  "INSERT INTO benchmark_runs ("                                            \
  "  run_id, fingerprint, agent_id, pool_name, sku_id, team, recipe_key, "  \
  "  model, method, gpu_count, started_at, ended_at, gpu_microseconds, "    \
  "  steps_attempted, steps_succeeded, step_time_mean_s, step_time_p50_s, " \
  "  step_time_p95_s, tokens_per_second, peak_memory_gb, offload, "         \
  "  interconnect, collectives_opened, retries, outcome, exclusive, "       \
  "  plan_id, upload, evidence_version, peak_memory_allocated_gb, "         \
  "  peak_memory_reserved_gb"
#define PLACEMENT_INSERT_RUN_VALUES                                           \
  "VALUES ($1, sha256(decode($2, 'hex')), $3, $4, $5, $6, $7, $8, $9, $10, "  \
  "        to_timestamp($11::float8 / 1e6), to_timestamp($12::float8 / 1e6)," \
  "        $13, $14, $15, $16, $17, $18, $19, $20, $21, $22, $23, $24, $25,"  \
  "        $26, $27::uuid, decode($2, 'hex'),"                                \
  "        pg_current_xact_id()::text::bigint, nullif($28::float8, 0),"       \
  "        nullif($29::float8, 0)"
#define PLACEMENT_INSERT_RUN_CONFLICT                           \
  " ON CONFLICT (run_id) DO NOTHING "                           \
  "RETURNING (extract(epoch FROM accepted_at) * 1e6)::bigint, " \
  "evidence_version"

constexpr char kInsertRun[] = PLACEMENT_INSERT_RUN_COLUMNS
    ") " PLACEMENT_INSERT_RUN_VALUES ")" PLACEMENT_INSERT_RUN_CONFLICT;
// With why each retried attempt failed (migration 0022), for a run that
// reported it: in the INSERT itself, since the database's deferred rollup
// triggers read the row as inserted.
constexpr char kInsertRunWithRetryOutcomes[] = PLACEMENT_INSERT_RUN_COLUMNS
    ", retry_outcomes) " PLACEMENT_INSERT_RUN_VALUES
    ", $30::text[])" PLACEMENT_INSERT_RUN_CONFLICT;

#undef PLACEMENT_INSERT_RUN_CONFLICT
#undef PLACEMENT_INSERT_RUN_VALUES
#undef PLACEMENT_INSERT_RUN_COLUMNS

// Whether benchmark_runs keeps retry causes (migration 0022 adds the
// column; its down keeps it).
constexpr char kHasRetryOutcomes[] = R"sql(
SELECT EXISTS (SELECT 1 FROM pg_attribute
               WHERE attrelid = 'benchmark_runs'::regclass
                 AND attname = 'retry_outcomes' AND NOT attisdropped))sql";

// The team of the plan a run names (no row: not recorded, or not yet).
constexpr char kSelectPlanTeam[] =
    "SELECT team FROM placements WHERE plan_id = $1::uuid";

// Migration 0025's table, and a run's row in it.
constexpr char kHasRunFailureReasons[] =
    "SELECT to_regclass('run_failure_reasons') IS NOT NULL";
constexpr char kInsertFailureReason[] =
    "INSERT INTO run_failure_reasons (run_id, failure_reason) "
    "VALUES ($1::uuid, $2)";

constexpr char kSelectExistingRun[] = R"sql(
SELECT fingerprint = sha256(decode($2, 'hex')) AND team = $3, recipe_key,
       (extract(epoch FROM accepted_at) * 1e6)::bigint, gpu_microseconds,
       coalesce(evidence_version, 0)
FROM benchmark_runs WHERE run_id = $1)sql";

// One atomic upsert per run: concurrent uploads of the same (recipe key,
// SKU) serialize on the row and never lose an update.
constexpr char kUpsertRollup[] = R"sql(
INSERT INTO evidence_rollups AS r (
  recipe_key, sku_id, recipe, model, method, runs, successful_runs,
  offload_runs, retries, collective_runs, nvlink_runs, pcie_runs,
  host_memory_runs, steps_attempted, steps_succeeded, gpu_microseconds,
  max_peak_memory_gb, step_time_p50_hist, step_time_p95_hist, peak_memory_hist,
  succeeded_peak_runs, succeeded_peak_sum_gb, succeeded_peak_max_gb,
  succeeded_allocated_runs, succeeded_allocated_sum_gb,
  succeeded_allocated_max_gb, succeeded_reserved_runs,
  succeeded_reserved_sum_gb, succeeded_reserved_max_gb)
VALUES ($1, $2, decode($3, 'hex'), $4, $5, $6, $7, $8, $9, $10, $11, $12, $13,
        $14, $15, $16, $17, $18::bigint[], $19::bigint[], $20::bigint[],
        $21, $22, $23, $24, $25, $26, $27, $28, $29)
ON CONFLICT (recipe_key, sku_id) DO UPDATE SET
  runs = r.runs + EXCLUDED.runs,
  successful_runs = r.successful_runs + EXCLUDED.successful_runs,
  offload_runs = r.offload_runs + EXCLUDED.offload_runs,
  retries = r.retries + EXCLUDED.retries,
  collective_runs = r.collective_runs + EXCLUDED.collective_runs,
  nvlink_runs = r.nvlink_runs + EXCLUDED.nvlink_runs,
  pcie_runs = r.pcie_runs + EXCLUDED.pcie_runs,
  host_memory_runs = r.host_memory_runs + EXCLUDED.host_memory_runs,
  steps_attempted = r.steps_attempted + EXCLUDED.steps_attempted,
  steps_succeeded = r.steps_succeeded + EXCLUDED.steps_succeeded,
  gpu_microseconds = r.gpu_microseconds + EXCLUDED.gpu_microseconds,
  max_peak_memory_gb = greatest(r.max_peak_memory_gb, EXCLUDED.max_peak_memory_gb),
  step_time_p50_hist = placement_add_counts(r.step_time_p50_hist, EXCLUDED.step_time_p50_hist),
  step_time_p95_hist = placement_add_counts(r.step_time_p95_hist, EXCLUDED.step_time_p95_hist),
  peak_memory_hist = placement_add_counts(r.peak_memory_hist, EXCLUDED.peak_memory_hist),
  succeeded_peak_runs = r.succeeded_peak_runs + EXCLUDED.succeeded_peak_runs,
  succeeded_peak_sum_gb = r.succeeded_peak_sum_gb + EXCLUDED.succeeded_peak_sum_gb,
  succeeded_peak_max_gb = greatest(r.succeeded_peak_max_gb, EXCLUDED.succeeded_peak_max_gb),
  succeeded_allocated_runs = r.succeeded_allocated_runs + EXCLUDED.succeeded_allocated_runs,
  succeeded_allocated_sum_gb =
    r.succeeded_allocated_sum_gb + EXCLUDED.succeeded_allocated_sum_gb,
  succeeded_allocated_max_gb =
    greatest(r.succeeded_allocated_max_gb, EXCLUDED.succeeded_allocated_max_gb),
  succeeded_reserved_runs = r.succeeded_reserved_runs + EXCLUDED.succeeded_reserved_runs,
  succeeded_reserved_sum_gb = r.succeeded_reserved_sum_gb + EXCLUDED.succeeded_reserved_sum_gb,
  succeeded_reserved_max_gb =
    greatest(r.succeeded_reserved_max_gb, EXCLUDED.succeeded_reserved_max_gb),
  updated_at = now())sql";

// Compares a run with what its plan predicted for the run's pool (no row
// when the plan is unknown or did not rank that pool).
constexpr char kInsertPlanOutcome[] = R"sql(
INSERT INTO plan_outcomes (run_id, plan_id, pool_name, sku_id, basis,
                           predicted_peak_memory_gb, observed_peak_memory_gb,
                           predicted_gpu_hours_per_successful_step,
                           observed_gpu_hours_per_successful_step,
                           prior_peak_memory_gb,
                           prior_gpu_hours_per_successful_step)
SELECT $1::uuid, pl.plan_id, p.pool_name, p.sku_id, p.basis,
       p.predicted_peak_memory_gb, $4,
       p.predicted_gpu_hours_per_successful_step, $5::float8,
       p.prior_peak_memory_gb, p.prior_gpu_hours_per_successful_step
FROM placements pl JOIN plan_predictions p USING (result_hash)
WHERE pl.plan_id = $2::uuid AND p.pool_name = $3
RETURNING sku_id, basis, predicted_peak_memory_gb,
          predicted_gpu_hours_per_successful_step)sql";

constexpr char kSelectRun[] = R"sql(
SELECT encode(upload, 'hex'), recipe_key,
       (extract(epoch FROM accepted_at) * 1e6)::bigint, gpu_microseconds, team
FROM benchmark_runs WHERE run_id = $1)sql";

// Newest first; the cursor is the (accepted_at, run_id) of the last row.
// The last column, when retention dropped the run's samples (migration
// 0018), is read through to_jsonb so that the statement also runs on
// schema 17 (NULL there).
constexpr char kListRuns[] = R"sql(
SELECT run_id::text, pool_name, sku_id, recipe_key, model, method, gpu_count,
       (extract(epoch FROM started_at) * 1e6)::bigint,
       (extract(epoch FROM ended_at) * 1e6)::bigint,
       steps_attempted, steps_succeeded, peak_memory_gb, offload, outcome,
       retries, gpu_microseconds,
       (extract(epoch FROM accepted_at) * 1e6)::bigint,
       (SELECT (extract(epoch FROM (to_jsonb(s) ->> 'samples_dropped_at')
                                   ::timestamptz) * 1e6)::bigint
        FROM sample_streams s WHERE s.run_id = benchmark_runs.run_id)
FROM benchmark_runs
WHERE ($1 = '' OR pool_name = $1)
  AND ($2 = '' OR sku_id = $2)
  AND ($3 = '' OR recipe_key = $3)
  AND ($4 = '' OR (accepted_at, run_id) < (to_timestamp($5::float8 / 1e6), $4::uuid))
  AND (cardinality($7::text[]) = 0 OR team = ANY ($7::text[]))
ORDER BY accepted_at DESC, run_id DESC
LIMIT $6)sql";

#define PLACEMENT_ROLLUP_COLUMNS                                              \
  "SELECT recipe_key, sku_id, encode(recipe, 'hex'), runs, successful_runs, " \
  "offload_runs, retries, collective_runs, nvlink_runs, pcie_runs, "          \
  "host_memory_runs, steps_attempted, steps_succeeded, gpu_microseconds, "    \
  "max_peak_memory_gb, step_time_p50_hist::text, step_time_p95_hist::text, "  \
  "peak_memory_hist::text, succeeded_peak_runs, succeeded_peak_sum_gb, "      \
  "succeeded_peak_max_gb, succeeded_allocated_runs, "                         \
  "succeeded_allocated_sum_gb, succeeded_allocated_max_gb, "                  \
  "succeeded_reserved_runs, succeeded_reserved_sum_gb, "                      \
  "succeeded_reserved_max_gb"
// Migration 0017's columns (maintained by the database, see
// storage/stores/pool_reliability_store.h), read after the others.
#define PLACEMENT_BUSY_COLUMNS                            \
  ", busy_gpu_microseconds, succeeded_gpu_microseconds, " \
  "succeeded_busy_gpu_microseconds"
// Migration 0022's (also the database's), after those.
#define PLACEMENT_ATTEMPT_COLUMNS                            \
  ", counted_gpu_microseconds, lost_gpu_microseconds, "      \
  "succeeded_attempts, succeeded_counted_gpu_microseconds, " \
  "startup_hist::text, step_time_mean_hist::text, "          \
  "node_failed_attempts, fabric_failed_attempts"
// Migration 0028's (also the database's), after those.
#define PLACEMENT_MOST_FAILED_COLUMNS                                 \
  ", most_failed_attempts, most_failed_node_attempts, "               \
  "most_failed_fabric_attempts, most_failed_run_attempts, "           \
  "most_failed_counted_microseconds, most_failed_lost_microseconds, " \
  "most_failed_startup_bucket, second_failed_attempts"
#define PLACEMENT_ROLLUP_ORDER " ORDER BY recipe_key, sku_id"
#define PLACEMENT_ROLLUP_CHANGED \
  " FROM evidence_rollups WHERE" PLACEMENT_CHANGED_SINCE("change_xid")

constexpr char kListRollupsWithMostFailed[] =
    PLACEMENT_ROLLUP_COLUMNS PLACEMENT_BUSY_COLUMNS PLACEMENT_ATTEMPT_COLUMNS
        PLACEMENT_MOST_FAILED_COLUMNS
    " FROM evidence_rollups" PLACEMENT_ROLLUP_ORDER;
constexpr char kListChangedRollupsWithMostFailed[] =
    PLACEMENT_ROLLUP_COLUMNS PLACEMENT_BUSY_COLUMNS PLACEMENT_ATTEMPT_COLUMNS
        PLACEMENT_MOST_FAILED_COLUMNS PLACEMENT_ROLLUP_CHANGED
            PLACEMENT_ROLLUP_ORDER;
// On a schema before 0028.
constexpr char kListRollups[] =
    PLACEMENT_ROLLUP_COLUMNS PLACEMENT_BUSY_COLUMNS PLACEMENT_ATTEMPT_COLUMNS
    " FROM evidence_rollups" PLACEMENT_ROLLUP_ORDER;
constexpr char kListChangedRollups[] =
    PLACEMENT_ROLLUP_COLUMNS PLACEMENT_BUSY_COLUMNS PLACEMENT_ATTEMPT_COLUMNS
        PLACEMENT_ROLLUP_CHANGED PLACEMENT_ROLLUP_ORDER;
// On a schema before 0022.
constexpr char kListRollupsPerRun[] =
    PLACEMENT_ROLLUP_COLUMNS PLACEMENT_BUSY_COLUMNS
    " FROM evidence_rollups" PLACEMENT_ROLLUP_ORDER;
constexpr char kListChangedRollupsPerRun[] =
    PLACEMENT_ROLLUP_COLUMNS PLACEMENT_BUSY_COLUMNS PLACEMENT_ROLLUP_CHANGED
        PLACEMENT_ROLLUP_ORDER;
// On a schema before 0017 (a binary started before `migrate up`).
constexpr char kListRollupsWithoutBusy[] =
    PLACEMENT_ROLLUP_COLUMNS " FROM evidence_rollups" PLACEMENT_ROLLUP_ORDER;
constexpr char kListChangedRollupsWithoutBusy[] =
    PLACEMENT_ROLLUP_COLUMNS PLACEMENT_ROLLUP_CHANGED PLACEMENT_ROLLUP_ORDER;

#undef PLACEMENT_ROLLUP_CHANGED
#undef PLACEMENT_ROLLUP_ORDER
#undef PLACEMENT_MOST_FAILED_COLUMNS
#undef PLACEMENT_ATTEMPT_COLUMNS
#undef PLACEMENT_BUSY_COLUMNS
#undef PLACEMENT_ROLLUP_COLUMNS

// The run's retry causes as a text[] literal ("{PREEMPTED,FAILED}").
std::string RetryOutcomesLiteral(const core::MeasuredRun& run) {
  std::vector<const char*> names;
  for (core::RunOutcome o : run.retry_outcomes) {
    names.push_back(core::RunOutcomeName(o));
  }
  return absl::StrCat("{", absl::StrJoin(names, ","), "}");
}

}  // namespace

int64_t GpuMicroseconds(const core::MeasuredRun& run) {
  if (run.ended <= run.started) return 0;
  return run.gpu_count * absl::ToInt64Microseconds(run.ended - run.started);
}

namespace {

// The answer to an upload whose run_id is taken: the first upload's
// acknowledgement again when the bytes are the same (a retry), else a
// conflict.
absl::StatusOr<RunAck> AckOfExistingRun(pqxx::work& txn,
                                        const std::string& run_id,
                                        const std::string& upload_hex,
                                        const std::string& team) {
  const pqxx::result existing =
      txn.exec_params(kSelectExistingRun, run_id, upload_hex, team);
  if (existing.empty()) {
    return absl::AbortedError("run_id conflict; retry the upload");
  }
  if (!existing[0][0].as<bool>()) {
    return absl::AlreadyExistsError(absl::StrCat(
        "run ", run_id,
        " was already uploaded with other content; runs are immutable"));
  }
  return RunAck{run_id,
                existing[0][1].as<std::string>(),
                absl::FromUnixMicros(existing[0][2].as<int64_t>()),
                existing[0][3].as<int64_t>(),
                std::nullopt,
                existing[0][4].as<int64_t>()};
}

// Adds the run to its (recipe, SKU) evidence rollup.
void AddRunToEvidenceRollup(pqxx::work& txn, const RunToStore& in,
                            int64_t gpu_us) {
  const core::MeasuredRun& run = in.run;
  core::EvidenceRollup delta;
  delta.Add(run);
  txn.exec_params(
      kUpsertRollup, run.recipe_key, run.sku_id, HexEncode(in.recipe_proto),
      in.recipe.model, core::FineTuneMethodName(in.recipe.method), delta.runs,
      delta.successful_runs, delta.offload_runs, delta.retries,
      delta.collective_runs, delta.nvlink_runs, delta.pcie_runs,
      delta.host_memory_runs, delta.steps_attempted, delta.steps_succeeded,
      gpu_us, delta.max_peak_memory_gb, CountsLiteral(delta.step_time_p50_hist),
      CountsLiteral(delta.step_time_p95_hist),
      CountsLiteral(delta.peak_memory_hist), delta.succeeded_peak.runs,
      delta.succeeded_peak.sum_gb, delta.succeeded_peak.max_gb,
      delta.succeeded_allocated.runs, delta.succeeded_allocated.sum_gb,
      delta.succeeded_allocated.max_gb, delta.succeeded_reserved.runs,
      delta.succeeded_reserved.sum_gb, delta.succeeded_reserved.max_gb);
}

// Records how the run of a plan came out against what the plan predicted;
// nullopt when the plan is not stored.
std::optional<PlanOutcome> RecordPlanOutcome(pqxx::work& txn,
                                             const RunToStore& in,
                                             int64_t gpu_us) {
  const core::MeasuredRun& run = in.run;
  std::optional<double> observed_per_step;
  if (run.steps_succeeded > 0) {
    observed_per_step = gpu_us / core::kMicrosecondsPerHour /
                        static_cast<double>(run.steps_succeeded);
  }
  const std::string per_step_text =
      observed_per_step ? DoubleText(*observed_per_step) : "";
  const pqxx::result outcome = txn.exec_params(
      kInsertPlanOutcome, run.run_id, in.plan_id, run.pool_name,
      run.peak_memory_gb, observed_per_step ? per_step_text.c_str() : nullptr);
  if (outcome.empty()) return std::nullopt;
  return PlanOutcome{
      outcome[0][0].as<std::string>(), outcome[0][1].as<std::string>(),
      outcome[0][2].as<double>(),      run.peak_memory_gb,
      outcome[0][3].as<double>(),      observed_per_step};
}

}  // namespace

absl::StatusOr<RunAck> InsertRun(DbSession& session, const RunToStore& in) {
  return session.Run([&](pqxx::connection_base& c) -> absl::StatusOr<RunAck> {
    const core::MeasuredRun& run = in.run;
    const int64_t gpu_us = GpuMicroseconds(run);
    pqxx::work txn(c);
    if (!in.plan_id.empty() && in.may_name_plan) {
      const pqxx::result plan = txn.exec_params(kSelectPlanTeam, in.plan_id);
      if (!plan.empty()) {
        absl::Status allowed = in.may_name_plan(plan[0][0].as<std::string>());
        if (!allowed.ok()) return allowed;
      }
    }
    const std::string upload_hex = HexEncode(in.upload);
    // Asked only for a run that reported its retries' causes: a schema
    // that never had 0022 keeps them in the upload bytes alone.
    const bool with_retry_outcomes =
        !run.retry_outcomes.empty() &&
        txn.exec(kHasRetryOutcomes)[0][0].as<bool>();
    auto insert = [&](const char* statement, auto... retry_outcomes) {
      return txn.exec_params(
          statement, run.run_id, upload_hex, in.agent_id, run.pool_name,
          run.sku_id, run.team, run.recipe_key, in.recipe.model,
          core::FineTuneMethodName(in.recipe.method), run.gpu_count,
          absl::ToUnixMicros(run.started), absl::ToUnixMicros(run.ended),
          gpu_us, run.steps_attempted, run.steps_succeeded,
          run.step_time_mean_s, run.step_time_p50_s, run.step_time_p95_s,
          in.tokens_per_second, run.peak_memory_gb,
          core::OffloadName(run.offload),
          core::InterconnectName(run.interconnect), run.collectives_opened,
          run.retries, core::RunOutcomeName(run.outcome), in.exclusive,
          in.plan_id.empty() ? nullptr : in.plan_id.c_str(),
          run.peak_memory_allocated_gb, run.peak_memory_reserved_gb,
          retry_outcomes...);
    };
    const pqxx::result inserted =
        with_retry_outcomes
            ? insert(kInsertRunWithRetryOutcomes, RetryOutcomesLiteral(run))
            : insert(kInsertRun);
    // The run_id is taken: a retry of the same upload, or a conflict.
    if (inserted.empty()) {
      return AckOfExistingRun(txn, run.run_id, upload_hex, run.team);
    }

    AddRunToEvidenceRollup(txn, in, gpu_us);
    // The finance rollup, in the same transaction: cost reports never scan
    // raw runs and always agree with them.
    AddRunToCostRollup(txn, run.run_id);
    // Before migration 0019 (a binary started before `migrate up`) the evals
    // stay in the upload only.
    if (!in.evals.empty() && HasEvalResults(txn)) {
      InsertEvals(txn, run.run_id, run.recipe_key, in.evals);
    }
    // Before migration 0025 the reason stays in the upload only (a bake-off
    // then reads it from there, bounded: storage/stores/bake_off_store.h), and
    // so does one PostgreSQL's text cannot hold (a NUL character).
    if (!in.failure_reason.empty() &&
        in.failure_reason.find('\0') == std::string::npos &&
        txn.exec(kHasRunFailureReasons)[0][0].as<bool>()) {
      txn.exec_params(kInsertFailureReason, run.run_id, in.failure_reason);
    }
    if (in.queue_wait_s.has_value()) {
      AppendUploadedWait(txn, run.pool_name, *in.queue_wait_s);
    }

    RunAck ack{run.run_id,
               run.recipe_key,
               absl::FromUnixMicros(inserted[0][0].as<int64_t>()),
               gpu_us,
               std::nullopt,
               inserted[0][1].as<int64_t>()};
    if (!in.plan_id.empty())
      ack.plan_outcome = RecordPlanOutcome(txn, in, gpu_us);
    txn.commit();
    return ack;
  });
}

absl::StatusOr<StoredRun> GetRun(DbSession& session,
                                 const std::string& run_id) {
  return session.Run(
      [&](pqxx::connection_base& c) -> absl::StatusOr<StoredRun> {
        pqxx::read_transaction txn(c);
        const pqxx::result rows = txn.exec_params(kSelectRun, run_id);
        if (rows.empty()) {
          return absl::NotFoundError(absl::StrCat("no run ", run_id));
        }
        StoredRun stored;
        stored.upload = HexDecode(rows[0][0].as<std::string>());
        stored.ack = RunAck{run_id, rows[0][1].as<std::string>(),
                            absl::FromUnixMicros(rows[0][2].as<int64_t>()),
                            rows[0][3].as<int64_t>(), std::nullopt};
        stored.team = rows[0][4].as<std::string>();
        return stored;
      });
}

absl::StatusOr<RunPage> ListRuns(DbSession& session, const RunFilter& filter,
                                 const RunCursor& after, int page_size) {
  return session.Run([&](pqxx::connection_base& c) -> absl::StatusOr<RunPage> {
    pqxx::read_transaction txn(c);
    const int64_t cursor_micros =
        after.run_id.empty() ? 0 : absl::ToUnixMicros(after.accept_time);
    const pqxx::result rows = txn.exec_params(
        kListRuns, filter.pool, filter.sku, filter.recipe_key, after.run_id,
        cursor_micros, page_size + 1, TextArrayLiteral(filter.teams));
    RunPage page;
    for (const pqxx::row& row : rows) {
      if (static_cast<int>(page.runs.size()) == page_size) {
        page.more = true;
        break;
      }
      RunSummary s;
      s.run_id = row[0].as<std::string>();
      s.pool_name = row[1].as<std::string>();
      s.sku_id = row[2].as<std::string>();
      s.recipe_key = row[3].as<std::string>();
      s.model = row[4].as<std::string>();
      s.method = core::ParseFineTuneMethod(row[5].as<std::string>())
                     .value_or(core::FineTuneMethod::kUnspecified);
      s.gpu_count = row[6].as<int>();
      s.started = absl::FromUnixMicros(row[7].as<int64_t>());
      s.ended = absl::FromUnixMicros(row[8].as<int64_t>());
      s.steps_attempted = row[9].as<int64_t>();
      s.steps_succeeded = row[10].as<int64_t>();
      s.peak_memory_gb = row[11].as<double>();
      s.offload = core::ParseOffload(row[12].as<std::string>())
                      .value_or(core::Offload::kUnspecified);
      s.outcome = core::ParseRunOutcome(row[13].as<std::string>())
                      .value_or(core::RunOutcome::kUnspecified);
      s.retries = row[14].as<int>();
      s.gpu_microseconds = row[15].as<int64_t>();
      s.accept_time = absl::FromUnixMicros(row[16].as<int64_t>());
      if (!row[17].is_null()) {
        s.samples_dropped_at = absl::FromUnixMicros(row[17].as<int64_t>());
      }
      page.runs.push_back(std::move(s));
    }
    return page;
  });
}

namespace {

// (runs, sum, max) in columns first .. first + 2.
core::PeakMemorySums PeakSumsFromRow(const pqxx::row& row, int first) {
  core::PeakMemorySums sums;
  sums.runs = row[first].as<int64_t>();
  sums.sum_gb = row[first + 1].as<double>();
  sums.max_gb = row[first + 2].as<double>();
  return sums;
}

std::vector<StoredRollup> RollupsFromRows(const pqxx::result& rows) {
  std::vector<StoredRollup> rollups;
  for (const pqxx::row& row : rows) {
    StoredRollup stored;
    core::EvidenceRollup& r = stored.rollup;
    r.recipe_key = row[0].as<std::string>();
    r.sku_id = row[1].as<std::string>();
    stored.recipe_proto = HexDecode(row[2].as<std::string>());
    r.runs = row[3].as<int64_t>();
    r.successful_runs = row[4].as<int64_t>();
    r.offload_runs = row[5].as<int64_t>();
    r.retries = row[6].as<int64_t>();
    r.collective_runs = row[7].as<int64_t>();
    r.nvlink_runs = row[8].as<int64_t>();
    r.pcie_runs = row[9].as<int64_t>();
    r.host_memory_runs = row[10].as<int64_t>();
    r.steps_attempted = row[11].as<int64_t>();
    r.steps_succeeded = row[12].as<int64_t>();
    r.gpu_hours = row[13].as<int64_t>() / core::kMicrosecondsPerHour;
    r.max_peak_memory_gb = row[14].as<double>();
    r.step_time_p50_hist = CountsFromLiteral(row[15].as<std::string>());
    r.step_time_p95_hist = CountsFromLiteral(row[16].as<std::string>());
    r.peak_memory_hist = CountsFromLiteral(row[17].as<std::string>());
    r.succeeded_peak = PeakSumsFromRow(row, 18);
    r.succeeded_allocated = PeakSumsFromRow(row, 21);
    r.succeeded_reserved = PeakSumsFromRow(row, 24);
    if (row.size() > 27) {  // read with the busy columns
      r.busy_gpu_hours = core::HoursFromMicroseconds(row[27].as<int64_t>());
      r.succeeded_gpu_hours =
          core::HoursFromMicroseconds(row[28].as<int64_t>());
      r.succeeded_busy_gpu_hours =
          core::HoursFromMicroseconds(row[29].as<int64_t>());
    }
    if (row.size() > 30) {  // and with the per-attempt columns
      r.counted_gpu_hours = core::HoursFromMicroseconds(row[30].as<int64_t>());
      r.lost_gpu_hours = core::HoursFromMicroseconds(row[31].as<int64_t>());
      r.succeeded_attempts = row[32].as<int64_t>();
      r.succeeded_counted_gpu_hours =
          core::HoursFromMicroseconds(row[33].as<int64_t>());
      r.startup_hist = CountsFromLiteral(row[34].as<std::string>());
      r.step_time_mean_hist = CountsFromLiteral(row[35].as<std::string>());
      r.node_failed_attempts = row[36].as<int64_t>();
      r.fabric_failed_attempts = row[37].as<int64_t>();
    }
    if (row.size() > 38) {  // and with the most-failed run (0028)
      r.most_failed_run =
          MostFailedRunFromRow(row, 38, /*with_startup_bucket=*/true);
    }
    rollups.push_back(std::move(stored));
  }
  return rollups;
}

}  // namespace

std::vector<StoredRollup> ReadRollups(pqxx::transaction_base& txn,
                                      FailureEvidence schema) {
  switch (schema) {
    case FailureEvidence::kMostFailedRun:
      return RollupsFromRows(txn.exec(kListRollupsWithMostFailed));
    case FailureEvidence::kPerAttempt:
      return RollupsFromRows(txn.exec(kListRollups));
    case FailureEvidence::kPerRun:
      return RollupsFromRows(txn.exec(kListRollupsPerRun));
    case FailureEvidence::kNone:
      break;
  }
  return RollupsFromRows(txn.exec(kListRollupsWithoutBusy));
}

std::vector<StoredRollup> ReadRollupsChangedSince(
    pqxx::transaction_base& txn, const TransactionHorizon& since,
    FailureEvidence schema) {
  const char* statement = kListChangedRollupsWithoutBusy;
  if (schema == FailureEvidence::kMostFailedRun) {
    statement = kListChangedRollupsWithMostFailed;
  }
  if (schema == FailureEvidence::kPerAttempt) statement = kListChangedRollups;
  if (schema == FailureEvidence::kPerRun) {
    statement = kListChangedRollupsPerRun;
  }
  return RollupsFromRows(
      txn.exec_params(statement, since.ToText(), since.xmin));
}

absl::StatusOr<std::vector<StoredRollup>> ListRollups(DbSession& session) {
  return session.Run([&](pqxx::connection_base& c)
                         -> absl::StatusOr<std::vector<StoredRollup>> {
    pqxx::read_transaction txn(c);
    return ReadRollups(txn, FailureEvidenceIn(txn));
  });
}

}  // namespace placement::storage
