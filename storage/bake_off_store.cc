#include "storage/bake_off_store.h"

#include <pqxx/pqxx>

#include "absl/strings/str_cat.h"
#include "core/evidence/evidence.h"
#include "core/units.h"
#include "storage/hex.h"

namespace placement::storage {
namespace {

constexpr char kHasRunFailureReasons[] =
    "SELECT to_regclass('run_failure_reasons') IS NOT NULL";

// The runs that carried out one bake-off run: on its pool, naming the plan,
// or of its recipe key stored since the plan was made. Their columns only,
// and the upload ($6 bytes at most) only where a failure reason may be in it
// and nowhere else: its run_failure_reasons row is missing (stored before
// migration 0025, or by a release built before it) and it is not a
// SUCCEEDED run without retries (which has no failed attempt to explain).
// On a schema before 0025 (`with_reasons` false) every reason is in an
// upload.
std::string SelectBakeOffUploads(bool with_reasons) {
  const std::string reason = with_reasons ? "f.failure_reason" : "NULL::text";
  return absl::StrCat(
      R"sql(
SELECT b.run_id::text, b.recipe_key,
       (extract(epoch FROM b.accepted_at) * 1e6)::bigint, b.gpu_microseconds,
       coalesce(b.plan_id = $2::uuid, false), b.outcome, b.steps_attempted,
       b.steps_succeeded, b.gpu_count, b.step_time_mean_s, b.step_time_p50_s,
       b.step_time_p95_s, b.peak_memory_gb, b.offload, b.interconnect, )sql",
      reason, R"sql(,
       CASE WHEN )sql",
      reason, R"sql( IS NULL
                 AND (b.outcome <> 'SUCCEEDED' OR b.retries > 0)
                 AND octet_length(b.upload) <= $6
            THEN encode(b.upload, 'hex') END
FROM benchmark_runs b )sql",
      with_reasons ? "LEFT JOIN run_failure_reasons f USING (run_id)" : "",
      R"sql(
WHERE b.pool_name = $1
  AND (b.plan_id = $2::uuid
       OR (b.recipe_key = $3
           AND b.accepted_at >= timestamptz 'epoch' + $4::bigint * interval '1 microsecond'))
ORDER BY b.accepted_at DESC, b.run_id DESC
LIMIT $5)sql");
}

MatchedUpload UploadFromRow(const pqxx::row& row) {
  MatchedUpload matched;
  core::BakeOffUpload& u = matched.run;
  u.run_id = row[0].as<std::string>();
  u.recipe_key = row[1].as<std::string>();
  u.accepted = absl::FromUnixMicros(row[2].as<int64_t>());
  u.gpu_hours =
      static_cast<double>(row[3].as<int64_t>()) / core::kMicrosecondsPerHour;
  u.carries_plan_id = row[4].as<bool>();
  u.outcome = core::ParseRunOutcome(row[5].as<std::string>())
                  .value_or(core::RunOutcome::kUnspecified);
  u.steps_attempted = row[6].as<int64_t>();
  u.steps_succeeded = row[7].as<int64_t>();
  u.gpu_count = row[8].as<int>();
  u.step_time_mean_s = row[9].as<double>();
  u.step_time_p50_s = row[10].as<double>();
  u.step_time_p95_s = row[11].as<double>();
  u.peak_memory_gb = row[12].as<double>();
  u.offload = core::ParseOffload(row[13].as<std::string>())
                  .value_or(core::Offload::kUnspecified);
  u.interconnect = core::ParseInterconnect(row[14].as<std::string>())
                       .value_or(core::Interconnect::kUnspecified);
  if (!row[15].is_null()) u.failure_reason = row[15].as<std::string>();
  if (!row[16].is_null()) {
    matched.upload_for_failure_reason = HexDecode(row[16].as<std::string>());
  }
  return matched;
}

}  // namespace

absl::StatusOr<std::vector<std::vector<MatchedUpload>>> FindBakeOffUploads(
    DbSession& session, const std::string& plan_id, absl::Time plan_created,
    const std::vector<BakeOffTarget>& targets) {
  return session.Run(
      [&](pqxx::connection_base& c)
          -> absl::StatusOr<std::vector<std::vector<MatchedUpload>>> {
        pqxx::read_transaction txn(c);
        static const std::string* const kWithReasons =
            new std::string(SelectBakeOffUploads(true));
        static const std::string* const kBefore0025 =
            new std::string(SelectBakeOffUploads(false));
        const std::string& select =
            txn.exec(kHasRunFailureReasons)[0][0].as<bool>() ? *kWithReasons
                                                             : *kBefore0025;
        std::vector<std::vector<MatchedUpload>> found;
        found.reserve(targets.size());
        for (const BakeOffTarget& target : targets) {
          const pqxx::result rows = txn.exec_params(
              select, target.pool_name, plan_id, target.recipe_key,
              absl::ToUnixMicros(plan_created), kMaxUploadsPerBakeOffRun,
              kMaxUploadBytesReadForFailureReason);
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
