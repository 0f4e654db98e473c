#include "storage/plan_store.h"

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "storage/hex.h"

namespace placement::storage {
namespace {

constexpr char kInsertPlan[] = R"sql(
INSERT INTO placements (plan_id, request_id, team, recipe_key, objective,
                        chosen_pool, chosen_sku, request, response)
VALUES ($1::uuid, $2, $3, $4, $5, $6, $7, decode($8, 'hex'), decode($9, 'hex'))
ON CONFLICT (request_id) DO NOTHING
RETURNING plan_id)sql";

constexpr char kInsertPrediction[] = R"sql(
INSERT INTO plan_predictions (plan_id, pool_name, sku_id, rank, basis,
                              predicted_peak_memory_gb,
                              predicted_gpu_hours_per_successful_step)
VALUES ($1::uuid, $2, $3, $4, $5, $6, $7))sql";

constexpr char kSelectByRequestId[] =
    "SELECT encode(response, 'hex') FROM placements WHERE request_id = $1";

constexpr char kSelectPlan[] =
    "SELECT encode(request, 'hex'), encode(response, 'hex') FROM placements "
    "WHERE plan_id = $1::uuid";

// Errors relative to the observed value, in percent.
constexpr char kAccuracy[] = R"sql(
WITH errors AS (
  SELECT sku_id,
         100 * (predicted_peak_memory_gb - observed_peak_memory_gb)
             / observed_peak_memory_gb AS memory_error,
         CASE WHEN observed_gpu_hours_per_successful_step > 0 THEN
           100 * (predicted_gpu_hours_per_successful_step
                  - observed_gpu_hours_per_successful_step)
               / observed_gpu_hours_per_successful_step
         END AS step_error
  FROM plan_outcomes
  WHERE recorded_at >= to_timestamp($1::float8 / 1e6)
    AND recorded_at < to_timestamp($2::float8 / 1e6))
SELECT sku_id, count(*),
       percentile_cont(0.5) WITHIN GROUP (ORDER BY abs(memory_error)),
       percentile_cont(0.9) WITHIN GROUP (ORDER BY abs(memory_error)),
       avg(memory_error),
       count(step_error),
       coalesce(percentile_cont(0.5) WITHIN GROUP (ORDER BY abs(step_error)), 0),
       coalesce(percentile_cont(0.9) WITHIN GROUP (ORDER BY abs(step_error)), 0),
       coalesce(avg(step_error), 0)
FROM errors GROUP BY sku_id ORDER BY sku_id)sql";

// Finite bounds for "no window" that to_timestamp accepts.
constexpr int64_t kEarliestMicros = 0;
constexpr int64_t kLatestMicros = 32503680000LL * 1000000;  // year 3000

int64_t Micros(absl::Time time, int64_t fallback) {
  if (time == absl::InfinitePast() || time == absl::InfiniteFuture()) {
    return fallback;
  }
  return absl::ToUnixMicros(time);
}

}  // namespace

absl::StatusOr<std::string> InsertPlan(DbSession& session,
                                       const PlanRecord& plan) {
  return session.Run([&](pqxx::connection& c) -> absl::StatusOr<std::string> {
    pqxx::work txn(c);
    const auto text_or_null = [](const std::string& s) {
      return s.empty() ? nullptr : s.c_str();
    };
    const pqxx::result inserted = txn.exec_params(
        kInsertPlan, plan.plan_id, text_or_null(plan.request_id), plan.team,
        plan.recipe_key, plan.objective, text_or_null(plan.chosen_pool),
        text_or_null(plan.chosen_sku), HexEncode(plan.request),
        HexEncode(plan.response));
    if (inserted.empty()) {
      // The same request_id raced us: the first plan is the answer.
      const pqxx::result existing =
          txn.exec_params(kSelectByRequestId, plan.request_id);
      if (existing.empty()) return absl::AbortedError("plan insert conflict");
      return HexDecode(existing[0][0].as<std::string>());
    }
    for (const PlanPrediction& p : plan.predictions) {
      txn.exec_params(kInsertPrediction, plan.plan_id, p.pool_name, p.sku_id,
                      p.rank, p.basis, p.peak_memory_gb,
                      p.gpu_hours_per_successful_step);
    }
    txn.commit();
    return plan.response;
  });
}

absl::StatusOr<std::optional<std::string>> FindPlanByRequestId(
    DbSession& session, const std::string& request_id) {
  return session.Run(
      [&](pqxx::connection& c) -> absl::StatusOr<std::optional<std::string>> {
        pqxx::read_transaction txn(c);
        const pqxx::result rows =
            txn.exec_params(kSelectByRequestId, request_id);
        if (rows.empty()) return std::optional<std::string>();
        return std::optional<std::string>(
            HexDecode(rows[0][0].as<std::string>()));
      });
}

absl::StatusOr<StoredPlan> GetPlan(DbSession& session,
                                   const std::string& plan_id) {
  return session.Run([&](pqxx::connection& c) -> absl::StatusOr<StoredPlan> {
    pqxx::read_transaction txn(c);
    const pqxx::result rows = txn.exec_params(kSelectPlan, plan_id);
    if (rows.empty()) {
      return absl::NotFoundError(absl::StrCat("no plan ", plan_id));
    }
    return StoredPlan{HexDecode(rows[0][0].as<std::string>()),
                      HexDecode(rows[0][1].as<std::string>())};
  });
}

absl::StatusOr<std::vector<SkuAccuracyRow>> PlanAccuracy(DbSession& session,
                                                         absl::Time from,
                                                         absl::Time to) {
  return session.Run(
      [&](pqxx::connection& c) -> absl::StatusOr<std::vector<SkuAccuracyRow>> {
        pqxx::read_transaction txn(c);
        std::vector<SkuAccuracyRow> rows;
        for (const pqxx::row& row :
             txn.exec_params(kAccuracy, Micros(from, kEarliestMicros),
                             Micros(to, kLatestMicros))) {
          SkuAccuracyRow r;
          r.sku_id = row[0].as<std::string>();
          r.runs = row[1].as<int64_t>();
          r.peak_memory_median_abs_error_pct = row[2].as<double>();
          r.peak_memory_p90_abs_error_pct = row[3].as<double>();
          r.peak_memory_mean_error_pct = row[4].as<double>();
          r.runs_with_successful_steps = row[5].as<int64_t>();
          r.gpu_hours_per_step_median_abs_error_pct = row[6].as<double>();
          r.gpu_hours_per_step_p90_abs_error_pct = row[7].as<double>();
          r.gpu_hours_per_step_mean_error_pct = row[8].as<double>();
          rows.push_back(r);
        }
        return rows;
      });
}

}  // namespace placement::storage
