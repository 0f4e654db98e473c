#include "storage/bake_off_store.h"

#include <pqxx/pqxx>

#include "storage/hex.h"

namespace placement::storage {
namespace {

// The runs that carried out one bake-off run: on its pool, of the recipe
// key the plan chose there (its layout included), naming the plan or stored
// since it was made (and of the plan's team, when it has one: $6). A run
// naming the plan with another recipe or layout measured something else
// and does not count.
constexpr char kSelectBakeOffUploads[] = R"sql(
SELECT encode(upload, 'hex'), recipe_key,
       (extract(epoch FROM accepted_at) * 1e6)::bigint, gpu_microseconds,
       coalesce(plan_id = $2::uuid, false)
FROM benchmark_runs
WHERE pool_name = $1 AND recipe_key = $3
  AND (plan_id = $2::uuid
       OR (accepted_at >= timestamptz 'epoch' + $4::bigint * interval '1 microsecond'
           AND ($6 = '' OR team = $6)))
ORDER BY accepted_at DESC, run_id DESC
LIMIT $5)sql";

}  // namespace

absl::StatusOr<std::vector<std::vector<MatchedUpload>>> FindBakeOffUploads(
    DbSession& session, const std::string& plan_id, absl::Time plan_created,
    const std::vector<BakeOffTarget>& targets, const std::string& plan_team) {
  return session.Run(
      [&](pqxx::connection_base& c)
          -> absl::StatusOr<std::vector<std::vector<MatchedUpload>>> {
        pqxx::read_transaction txn(c);
        std::vector<std::vector<MatchedUpload>> found;
        found.reserve(targets.size());
        for (const BakeOffTarget& target : targets) {
          const pqxx::result rows = txn.exec_params(
              kSelectBakeOffUploads, target.pool_name, plan_id,
              target.recipe_key, absl::ToUnixMicros(plan_created),
              kMaxUploadsPerBakeOffRun, plan_team);
          std::vector<MatchedUpload>& uploads = found.emplace_back();
          for (const pqxx::row& row : rows) {
            MatchedUpload u;
            u.upload = HexDecode(row[0].as<std::string>());
            u.recipe_key = row[1].as<std::string>();
            u.accepted = absl::FromUnixMicros(row[2].as<int64_t>());
            u.gpu_microseconds = row[3].as<int64_t>();
            u.carries_plan_id = row[4].as<bool>();
            uploads.push_back(std::move(u));
          }
        }
        return found;
      });
}

}  // namespace placement::storage
