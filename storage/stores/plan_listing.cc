#include "storage/stores/plan_listing.h"

#include "absl/strings/str_cat.h"
#include "storage/wire/pq_values.h"

namespace placement::storage {
namespace {

// $2 + 1 rows, to learn whether older plans exist. The request bytes are
// a few hundred bytes a plan; the answer (plan_results) is not read. The
// order is the table's column (p.plan_id), not the output's text of it: a
// sort by text reads every plan (40 ms at 20,000), the primary key's
// backward scan only the page's.
constexpr char kRecentPlans[] = R"sql(
SELECT p.plan_id::text, (extract(epoch FROM p.created_at) * 1e6)::bigint,
       p.team, p.recipe_key, p.objective, coalesce(p.chosen_pool, ''),
       coalesce(p.chosen_sku, ''), p.request, cardinality(p.warnings)
FROM placements p
WHERE ($1 = '' OR p.plan_id < nullif($1, '')::uuid)
  AND (cardinality($3::text[]) = 0 OR p.team = ANY ($3::text[]))
ORDER BY p.plan_id DESC
LIMIT $2)sql";

constexpr char kPlanOutcomes[] = R"sql(
SELECT o.run_id::text, o.plan_id::text, o.pool_name, o.basis,
       (extract(epoch FROM recorded_at) * 1e6)::bigint,
       predicted_peak_memory_gb, observed_peak_memory_gb,
       predicted_gpu_hours_per_successful_step,
       observed_gpu_hours_per_successful_step
FROM plan_outcomes o
WHERE sku_id = $1
  AND recorded_at >= to_timestamp($2::float8 / 1e6)
  AND recorded_at < to_timestamp($3::float8 / 1e6)
  AND (cardinality($5::text[]) = 0
       OR EXISTS (SELECT 1 FROM placements p
                  WHERE p.plan_id = o.plan_id AND p.team = ANY ($5::text[])))
ORDER BY recorded_at DESC
LIMIT $4)sql";

// Finite bounds for "no bound" that to_timestamp accepts (as plan_store's
// accuracy query).
constexpr int64_t kEarliestMicros = 0;
constexpr int64_t kLatestMicros = 32503680000LL * 1000000;  // year 3000

int64_t Micros(absl::Time time, int64_t fallback) {
  if (time == absl::InfinitePast() || time == absl::InfiniteFuture()) {
    return fallback;
  }
  return absl::ToUnixMicros(time);
}

}  // namespace

absl::StatusOr<PlanSummaryPage> ListRecentPlans(
    DbSession& session, const std::string& before_plan_id, int page_size,
    const std::vector<std::string>& teams) {
  return session.Run(
      [&](pqxx::connection_base& c) -> absl::StatusOr<PlanSummaryPage> {
        pqxx::read_transaction txn(c);
        PlanSummaryPage page;
        for (const pqxx::row& row :
             txn.exec_params(kRecentPlans, before_plan_id, page_size + 1,
                             TextArrayLiteral(teams))) {
          if (static_cast<int>(page.plans.size()) == page_size) {
            page.more = true;
            break;
          }
          PlanSummary plan;
          plan.plan_id = row[0].as<std::string>();
          plan.created_at = absl::FromUnixMicros(row[1].as<int64_t>());
          plan.team = row[2].as<std::string>();
          plan.recipe_key = row[3].as<std::string>();
          plan.objective = row[4].as<std::string>();
          plan.chosen_pool = row[5].as<std::string>();
          plan.chosen_sku = row[6].as<std::string>();
          const pqxx::binarystring request(row[7]);
          plan.request = request.str();
          plan.warnings = row[8].as<int64_t>();
          page.plans.push_back(std::move(plan));
        }
        return page;
      });
}

absl::StatusOr<std::vector<PlanOutcomePoint>> ListPlanOutcomes(
    DbSession& session, const std::string& sku_id, absl::Time from,
    absl::Time to, int limit, const std::vector<std::string>& teams) {
  return session.Run([&](pqxx::connection_base& c)
                         -> absl::StatusOr<std::vector<PlanOutcomePoint>> {
    pqxx::read_transaction txn(c);
    std::vector<PlanOutcomePoint> points;
    for (const pqxx::row& row : txn.exec_params(
             kPlanOutcomes, sku_id, Micros(from, kEarliestMicros),
             Micros(to, kLatestMicros), limit, TextArrayLiteral(teams))) {
      PlanOutcomePoint point;
      point.run_id = row[0].as<std::string>();
      point.plan_id = row[1].as<std::string>();
      point.pool_name = row[2].as<std::string>();
      point.basis = row[3].as<std::string>();
      point.recorded_at = absl::FromUnixMicros(row[4].as<int64_t>());
      point.predicted_peak_memory_gb = row[5].as<double>();
      point.observed_peak_memory_gb = row[6].as<double>();
      point.predicted_gpu_hours_per_successful_step = row[7].as<double>();
      if (!row[8].is_null()) {
        point.observed_gpu_hours_per_successful_step = row[8].as<double>();
      }
      points.push_back(std::move(point));
    }
    return points;
  });
}

}  // namespace placement::storage
