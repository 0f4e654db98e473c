#include "storage/stores/bake_off_store.h"

#include <pqxx/pqxx>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "core/evidence/evidence.h"
#include "storage/wire/hex.h"

namespace placement::storage {
namespace {

constexpr char kHasRunFailureReasons[] =
    "SELECT to_regclass('run_failure_reasons') IS NOT NULL";
// Whether benchmark_runs keeps retry causes (migration 0022 adds the
// column; its down keeps it).
constexpr char kHasRetryOutcomes[] = R"sql(
SELECT EXISTS (SELECT 1 FROM pg_attribute
               WHERE attrelid = 'benchmark_runs'::regclass
                 AND attname = 'retry_outcomes' AND NOT attisdropped))sql";

// The runs that carried out one bake-off run: on its pool, of the recipe
// key the plan chose there (its layout included), naming the plan or stored
// since it was made (and of the plan's team, when it has one: $7). A run
// naming the plan with another recipe or layout measured something else
// and does not count.
//
// Their columns only, and the upload ($6 bytes at most) only where a
// failure reason may be in it and nowhere else: its run_failure_reasons row
// is missing (stored before migration 0025, or by a release built before
// it) and it is not a SUCCEEDED run without retries (which has no failed
// attempt to explain). On a schema before 0025 (`with_reasons` false) every
// reason is in an upload; before 0022 (`with_retry_outcomes` false) so are
// the retries' causes.
std::string SelectBakeOffUploads(bool with_reasons, bool with_retry_outcomes) {
  const std::string reason = with_reasons ? "f.failure_reason" : "NULL::text";
  return absl::StrCat(
      R"sql(
SELECT b.run_id::text, b.recipe_key,
       (extract(epoch FROM b.accepted_at) * 1e6)::bigint,
       coalesce(b.plan_id = $2::uuid, false), b.outcome, b.steps_attempted,
       b.steps_succeeded, b.gpu_count, b.step_time_mean_s, b.step_time_p50_s,
       b.step_time_p95_s, b.peak_memory_gb, b.offload, b.interconnect, )sql",
      reason, R"sql(,
       CASE WHEN )sql",
      reason, R"sql( IS NULL
                 AND (b.outcome <> 'SUCCEEDED' OR b.retries > 0)
                 AND octet_length(b.upload) <= $6
            THEN encode(b.upload, 'hex') END,
       b.sku_id, b.pool_name, b.team,
       (extract(epoch FROM b.started_at) * 1e6)::bigint,
       (extract(epoch FROM b.ended_at) * 1e6)::bigint,
       coalesce(b.peak_memory_allocated_gb, 0),
       coalesce(b.peak_memory_reserved_gb, 0), b.collectives_opened,
       b.retries, )sql",
      with_retry_outcomes ? "array_to_string(b.retry_outcomes, ',')"
                          : "NULL::text",
      R"sql(
FROM benchmark_runs b )sql",
      with_reasons ? "LEFT JOIN run_failure_reasons f USING (run_id)" : "",
      R"sql(
WHERE b.pool_name = $1 AND b.recipe_key = $3
  AND (b.plan_id = $2::uuid
       OR (b.accepted_at >= timestamptz 'epoch' + $4::bigint * interval '1 microsecond'
           AND ($7 = '' OR b.team = $7)))
ORDER BY b.accepted_at DESC, b.run_id DESC
LIMIT $5)sql");
}

MatchedUpload UploadFromRow(const pqxx::row& row) {
  MatchedUpload matched;
  core::BakeOffUpload& u = matched.run;
  core::MeasuredRun& run = u.run;
  run.run_id = row[0].as<std::string>();
  run.recipe_key = row[1].as<std::string>();
  u.accepted = absl::FromUnixMicros(row[2].as<int64_t>());
  u.carries_plan_id = row[3].as<bool>();
  run.outcome = core::ParseRunOutcome(row[4].as<std::string>())
                    .value_or(core::RunOutcome::kUnspecified);
  run.steps_attempted = row[5].as<int64_t>();
  run.steps_succeeded = row[6].as<int64_t>();
  run.gpu_count = row[7].as<int>();
  run.step_time_mean_s = row[8].as<double>();
  run.step_time_p50_s = row[9].as<double>();
  run.step_time_p95_s = row[10].as<double>();
  run.peak_memory_gb = row[11].as<double>();
  run.offload = core::ParseOffload(row[12].as<std::string>())
                    .value_or(core::Offload::kUnspecified);
  run.interconnect = core::ParseInterconnect(row[13].as<std::string>())
                         .value_or(core::Interconnect::kUnspecified);
  if (!row[14].is_null()) u.failure_reason = row[14].as<std::string>();
  if (!row[15].is_null()) {
    matched.upload_for_failure_reason = HexDecode(row[15].as<std::string>());
  }
  run.sku_id = row[16].as<std::string>();
  run.pool_name = row[17].as<std::string>();
  run.team = row[18].as<std::string>();
  run.started = absl::FromUnixMicros(row[19].as<int64_t>());
  run.ended = absl::FromUnixMicros(row[20].as<int64_t>());
  run.peak_memory_allocated_gb = row[21].as<double>();
  run.peak_memory_reserved_gb = row[22].as<double>();
  run.collectives_opened = row[23].as<bool>();
  run.retries = row[24].as<int>();
  if (!row[25].is_null()) {
    for (absl::string_view name :
         absl::StrSplit(row[25].as<std::string>(), ',', absl::SkipEmpty())) {
      run.retry_outcomes.push_back(
          core::ParseRunOutcome(name).value_or(core::RunOutcome::kUnspecified));
    }
  }
  return matched;
}

}  // namespace

absl::StatusOr<std::vector<std::vector<MatchedUpload>>> FindBakeOffUploads(
    DbSession& session, const std::string& plan_id, absl::Time plan_created,
    const std::vector<BakeOffTarget>& targets, const std::string& plan_team) {
  return session.Run(
      [&](pqxx::connection_base& c)
          -> absl::StatusOr<std::vector<std::vector<MatchedUpload>>> {
        pqxx::read_transaction txn(c);
        // One statement for each schema this binary may meet: [with run
        // failure reasons (0025)][with retry causes (0022)].
        static const std::string* const kSelects[2][2] = {
            {new std::string(SelectBakeOffUploads(false, false)),
             new std::string(SelectBakeOffUploads(false, true))},
            {new std::string(SelectBakeOffUploads(true, false)),
             new std::string(SelectBakeOffUploads(true, true))}};
        const bool with_reasons =
            txn.exec(kHasRunFailureReasons)[0][0].as<bool>();
        const bool with_retry_outcomes =
            txn.exec(kHasRetryOutcomes)[0][0].as<bool>();
        const std::string& select =
            *kSelects[with_reasons ? 1 : 0][with_retry_outcomes ? 1 : 0];
        std::vector<std::vector<MatchedUpload>> found;
        found.reserve(targets.size());
        for (const BakeOffTarget& target : targets) {
          const pqxx::result rows = txn.exec_params(
              select, target.pool_name, plan_id, target.recipe_key,
              absl::ToUnixMicros(plan_created), kMaxUploadsPerBakeOffRun,
              kMaxUploadBytesReadForFailureReason, plan_team);
          std::vector<MatchedUpload>& uploads = found.emplace_back();
          uploads.reserve(rows.size());
          for (const pqxx::row& row : rows) {
            uploads.push_back(UploadFromRow(row));
          }
        }
        return found;
      });
}

}  // namespace placement::storage
