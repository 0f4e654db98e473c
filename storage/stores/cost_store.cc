#include "storage/stores/cost_store.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "storage/wire/pq_values.h"

namespace placement::storage {
namespace {

// The summed columns of every cost rollup table, in their order there: one
// list drives the three upserts below (what each adds on conflict) and the
// report's sums.
struct SummedColumn {
  const char* name;   // in every cost rollup table
  const char* type;   // of its sum in the report
  const char* alias;  // in the report statement
};
constexpr SummedColumn kSummedColumns[] = {
    {"runs", "bigint", "runs"},
    {"successful_runs", "bigint", "successful_runs"},
    {"retries", "bigint", "retries"},
    {"steps_attempted", "bigint", "steps_attempted"},
    {"successful_steps", "bigint", "successful_steps"},
    {"gpu_microseconds", "bigint", "gpu_us"},
    {"wasted_gpu_microseconds", "bigint", "wasted_gpu_us"},
    {"internal_rate_x_gpu_us", "numeric", "internal_x"},
    {"list_price_x_gpu_us", "numeric", "list_x"},
    {"list_priced_gpu_microseconds", "bigint", "list_priced_us"},
};

// One run into its (day, pool, SKU, recipe key, model, method, team,
// outcome) row, its (day, pool, SKU) row and its (day, SKU) row, in one
// statement. The money columns are exact integer products of the run's
// GPU-microseconds and the pool's rates read in this transaction: the rate
// the run is charged is the rate when it was stored. {summed} is
// kSummedColumns; {added}, each of them added to the stored row.
constexpr char kUpsertCostRollupsTemplate[] = R"sql(
WITH fact AS (
  SELECT f.day, f.pool_name, f.sku_id, f.recipe_key, f.model, f.method, f.team,
         f.outcome, 1 AS runs, f.successful_runs, f.retries, f.steps_attempted,
         f.successful_steps, f.gpu_microseconds, f.wasted_gpu_microseconds,
         f.gpu_microseconds::numeric * p.internal_rate_micros_per_gpu_hour
           AS internal_rate_x_gpu_us,
         coalesce(f.gpu_microseconds::numeric * p.list_price_micros_per_gpu_hour, 0)
           AS list_price_x_gpu_us,
         CASE WHEN p.list_price_micros_per_gpu_hour IS NULL THEN 0
              ELSE f.gpu_microseconds END AS list_priced_gpu_microseconds
  FROM cost_run_facts f JOIN pools p ON p.name = f.pool_name
  WHERE f.run_id = $1::uuid
),
detail AS (
  INSERT INTO cost_daily_rollups AS c (
    day, pool_name, sku_id, recipe_key, model, method, team, outcome, {summed})
  SELECT day, pool_name, sku_id, recipe_key, model, method, team, outcome, {summed}
  FROM fact
  ON CONFLICT (day, pool_name, sku_id, recipe_key, model, method, team, outcome)
  DO UPDATE SET {added}
),
by_pool AS (
  INSERT INTO cost_daily_pool_rollups AS c (day, pool_name, sku_id, {summed})
  SELECT day, pool_name, sku_id, {summed} FROM fact
  ON CONFLICT (day, pool_name, sku_id) DO UPDATE SET {added}
)
INSERT INTO cost_daily_sku_rollups AS c (day, sku_id, {summed})
SELECT day, sku_id, {summed} FROM fact
ON CONFLICT (day, sku_id) DO UPDATE SET {added})sql";

const std::string& UpsertCostRollups() {
  static const std::string* const kStatement = [] {
    std::vector<std::string> summed, added;
    for (const SummedColumn& column : kSummedColumns) {
      summed.push_back(column.name);
      added.push_back(absl::StrCat(column.name, " = c.", column.name,
                                   " + EXCLUDED.", column.name));
    }
    added.push_back("updated_at = now()");
    return new std::string(absl::StrReplaceAll(
        kUpsertCostRollupsTemplate, {{"{summed}", absl::StrJoin(summed, ", ")},
                                     {"{added}", absl::StrJoin(added, ", ")}}));
  }();
  return *kStatement;
}

// The report. Grouping is chosen by bound flags ($10..$16) and the period
// ($17: '', 'DAY', 'WEEK', 'MONTH'): a dimension not grouped by is the
// constant '' so that one statement serves every grouping. Keys compare
// byte-wise (COLLATE "C") so that the order and the page cursor ($18..$25,
// used when $26) agree on every server.
//
// Money: every sum is an exact integer (numeric); each figure is rounded
// half up once, with integer division: round(a / b) = div(a + b/2, b).
//   cost micros         = internal_x / 3.6e9
//   cost nanos per step = internal_x / (3.6e6 x successful steps)
// Occupancy (grouped by pool): the pool's work in the row's window over its
// GPUs x the window's days x 8.64e10 us; the amortized cost divides the row's
// cost by that occupancy.
//
// ROLLUPS is where the sums come from (see ReportStatementFor): the detailed
// rollup, or a coarser one with the dimensions it lacks ''. {sums} are the
// sums of kSummedColumns under their aliases and {group_by} the grouping, or
// the columns themselves and nothing where each rollup row is a group.
constexpr char kCostReportTemplate[] = R"sql(
WITH grouped AS (
  SELECT
    CASE $17::text
      WHEN 'DAY' THEN day
      WHEN 'WEEK' THEN date_trunc('week', day::timestamp)::date
      WHEN 'MONTH' THEN date_trunc('month', day::timestamp)::date
    END AS period,
    (CASE WHEN $10::bool THEN sku_id ELSE '' END) COLLATE "C" AS k_sku,
    (CASE WHEN $11::bool THEN pool_name ELSE '' END) COLLATE "C" AS k_pool,
    (CASE WHEN $12::bool THEN recipe_key ELSE '' END) COLLATE "C" AS k_recipe_key,
    (CASE WHEN $13::bool THEN model ELSE '' END) COLLATE "C" AS k_model,
    (CASE WHEN $14::bool THEN method ELSE '' END) COLLATE "C" AS k_method,
    (CASE WHEN $15::bool THEN team ELSE '' END) COLLATE "C" AS k_team,
    (CASE WHEN $16::bool THEN outcome ELSE '' END) COLLATE "C" AS k_outcome,
    {sums}
  FROM ROLLUPS
  WHERE day >= $1::date AND day < $2::date
    AND (cardinality($3::text[]) = 0 OR sku_id = ANY ($3::text[]))
    AND (cardinality($4::text[]) = 0 OR pool_name = ANY ($4::text[]))
    AND (cardinality($5::text[]) = 0 OR recipe_key = ANY ($5::text[]))
    AND (cardinality($6::text[]) = 0 OR model = ANY ($6::text[]))
    AND (cardinality($7::text[]) = 0 OR method = ANY ($7::text[]))
    AND (cardinality($8::text[]) = 0 OR team = ANY ($8::text[]))
    AND (cardinality($9::text[]) = 0 OR outcome = ANY ($9::text[]))
  {group_by}
),
keyed AS (
  -- Periods are formatted after grouping: once a row, not once a day.
  SELECT coalesce(to_char(period, 'YYYY-MM-DD'), '') COLLATE "C" AS k_period,
         grouped.*
  FROM grouped
),
page AS (
  SELECT * FROM keyed
  WHERE NOT $26::bool
     OR (k_period, k_sku, k_pool, k_recipe_key, k_model, k_method, k_team, k_outcome)
        > ($18::text COLLATE "C", $19::text COLLATE "C", $20::text COLLATE "C",
           $21::text COLLATE "C", $22::text COLLATE "C", $23::text COLLATE "C",
           $24::text COLLATE "C", $25::text COLLATE "C")
  ORDER BY k_period, k_sku, k_pool, k_recipe_key, k_model, k_method, k_team, k_outcome
  LIMIT $27
),
pool_work AS (
  SELECT
    CASE $17::text
      WHEN 'DAY' THEN day
      WHEN 'WEEK' THEN date_trunc('week', day::timestamp)::date
      WHEN 'MONTH' THEN date_trunc('month', day::timestamp)::date
    END AS period,
    pool_name COLLATE "C" AS k_pool,
    sum(gpu_microseconds) AS work_us
  FROM cost_daily_pool_rollups
  WHERE $11::bool AND day >= $1::date AND day < $2::date
    AND pool_name IN (SELECT k_pool FROM page)
  GROUP BY 1, 2
),
windowed AS (
  SELECT pg.*, w.work_us,
         (p.node_count * p.gpus_per_node)::numeric
           * (CASE $17::text
                WHEN 'DAY' THEN 1
                WHEN 'WEEK' THEN least(pg.period + 7, $2::date)
                                 - greatest(pg.period, $1::date)
                WHEN 'MONTH' THEN least((pg.period + interval '1 month')::date, $2::date)
                                  - greatest(pg.period, $1::date)
                ELSE $2::date - $1::date END)
           * 86400000000 AS available_us
  FROM page pg
  LEFT JOIN pools p ON $11::bool AND p.name = pg.k_pool
  LEFT JOIN pool_work w
    ON coalesce(w.period, date 'epoch') = coalesce(pg.period, date 'epoch')
   AND w.k_pool = pg.k_pool
)
SELECT k_period, k_sku, k_pool, k_recipe_key, k_model, k_method, k_team, k_outcome,
       runs, successful_runs, retries, steps_attempted, successful_steps, gpu_us,
       wasted_gpu_us,
       CASE WHEN successful_steps > 0
            THEN (gpu_us::numeric / (3600000 * successful_steps))::float8 END,
       div(internal_x + 1800000000, 3600000000)::bigint,
       CASE WHEN successful_steps > 0
            THEN div(internal_x + 1800000 * successful_steps,
                     3600000 * successful_steps)::bigint END,
       list_priced_us = gpu_us,
       div(list_x + 1800000000, 3600000000)::bigint,
       CASE WHEN successful_steps > 0
            THEN div(list_x + 1800000 * successful_steps,
                     3600000 * successful_steps)::bigint END,
       CASE WHEN list_x > 0 THEN (internal_x / list_x)::float8 END,
       available_us IS NOT NULL,
       coalesce((available_us / 3600000000)::float8, 0),
       coalesce(work_us, 0)::bigint,
       coalesce((work_us / nullif(available_us, 0))::float8, 0),
       CASE WHEN successful_steps > 0 AND work_us > 0
            THEN div(internal_x * available_us + work_us * 1800000 * successful_steps,
                     work_us * 3600000 * successful_steps)::bigint END
FROM windowed
ORDER BY k_period, k_sku, k_pool, k_recipe_key, k_model, k_method, k_team, k_outcome)sql";

// The per-(day, pool, SKU) and per-(day, SKU) rollups with the columns of
// the detailed one.
constexpr char kPoolRollups[] = R"sql((
    SELECT day, pool_name, sku_id, ''::text AS recipe_key, ''::text AS model,
           ''::text AS method, ''::text AS team, ''::text AS outcome, runs,
           successful_runs, retries, steps_attempted, successful_steps,
           gpu_microseconds, wasted_gpu_microseconds, internal_rate_x_gpu_us,
           list_price_x_gpu_us, list_priced_gpu_microseconds
    FROM cost_daily_pool_rollups) AS rollups)sql";
constexpr char kSkuRollups[] = R"sql((
    SELECT day, ''::text AS pool_name, sku_id, ''::text AS recipe_key,
           ''::text AS model, ''::text AS method, ''::text AS team,
           ''::text AS outcome, runs, successful_runs, retries,
           steps_attempted, successful_steps, gpu_microseconds,
           wasted_gpu_microseconds, internal_rate_x_gpu_us,
           list_price_x_gpu_us, list_priced_gpu_microseconds
    FROM cost_daily_sku_rollups) AS rollups)sql";

// The report by SKU and day from cost_daily_sku_rollups, whose rows are its
// rows: the columns of kCostReportTemplate (the same figures by the same
// formulas), without its grouping, joins and pool occupancy. $1, $2: the
// range; $3: the SKU filter; $4, $5: the page cursor's period and SKU, used
// when $6 (the cursor's other fields are '', as are those of every row
// here, so the pair orders rows as the template's eight fields do); $7: the
// limit.
constexpr char kSkuDaysStatement[] = R"sql(
SELECT to_char(day, 'YYYY-MM-DD') COLLATE "C" AS k_period,
       sku_id COLLATE "C" AS k_sku, '', '', '', '', '', '',
       runs, successful_runs, retries, steps_attempted, successful_steps,
       gpu_microseconds, wasted_gpu_microseconds,
       CASE WHEN successful_steps > 0
            THEN (gpu_microseconds::numeric / (3600000 * successful_steps))::float8 END,
       div(internal_rate_x_gpu_us + 1800000000, 3600000000)::bigint,
       CASE WHEN successful_steps > 0
            THEN div(internal_rate_x_gpu_us + 1800000 * successful_steps,
                     3600000 * successful_steps)::bigint END,
       list_priced_gpu_microseconds = gpu_microseconds,
       div(list_price_x_gpu_us + 1800000000, 3600000000)::bigint,
       CASE WHEN successful_steps > 0
            THEN div(list_price_x_gpu_us + 1800000 * successful_steps,
                     3600000 * successful_steps)::bigint END,
       CASE WHEN list_price_x_gpu_us > 0
            THEN (internal_rate_x_gpu_us / list_price_x_gpu_us)::float8 END,
       false, 0::float8, 0::bigint, 0::float8, NULL::bigint
FROM cost_daily_sku_rollups
WHERE day >= $1::date AND day < $2::date
  AND (cardinality($3::text[]) = 0 OR sku_id = ANY ($3::text[]))
  AND (NOT $6::bool
       OR (to_char(day, 'YYYY-MM-DD') COLLATE "C", sku_id COLLATE "C")
          > ($4::text COLLATE "C", $5::text COLLATE "C"))
ORDER BY k_period, k_sku
LIMIT $7)sql";

// One of the report's statements, prepared on each connection under its
// name (parsed and planned once a connection, not once a call).
struct ReportStatement {
  std::string name;
  std::string sql;
};

// The report over `rollups`: its rows summed into groups, or, when `as_rows`
// (the query groups by every key of the rollup and by day), its rows as
// they are: each is a group already, and summing each alone was about a
// third of the statement's time (measured over the SKU rollup).
ReportStatement* NewReportStatement(const std::string& name,
                                    const char* rollups, bool as_rows) {
  std::vector<std::string> sums;
  for (const SummedColumn& column : kSummedColumns) {
    sums.push_back(as_rows
                       ? absl::StrCat(column.name, " AS ", column.alias)
                       : absl::StrCat("sum(", column.name, ")::", column.type,
                                      " AS ", column.alias));
  }
  return new ReportStatement{
      absl::StrCat(name, as_rows ? "_rows" : ""),
      absl::StrReplaceAll(
          kCostReportTemplate,
          {{"ROLLUPS", rollups},
           {"{sums}", absl::StrJoin(sums, ",\n    ")},
           {"{group_by}", as_rows ? "" : "GROUP BY 1, 2, 3, 4, 5, 6, 7, 8"}})};
}

// Neither filtered nor grouped by pool or anything below.
bool AtSkuLevel(const CostQuery& q) {
  return !q.by_pool && !q.by_recipe_key && !q.by_model && !q.by_method &&
         !q.by_team && !q.by_outcome && q.pools.empty() &&
         q.recipe_keys.empty() && q.models.empty() && q.methods.empty() &&
         q.teams.empty() && q.outcomes.empty();
}

// Grouped by SKU and day, nothing else: the rows of cost_daily_sku_rollups,
// read by kSkuDaysStatement.
bool ReadsSkuDays(const CostQuery& q) {
  return AtSkuLevel(q) && q.by_sku && q.period == CostPeriod::kDay;
}

// The statement of any other query: the report over the coarsest rollup
// that holds every dimension the query filters or groups by:
// cost_daily_sku_rollups (rows bounded by days x SKUs) without pools or
// anything below; cost_daily_pool_rollups (days x pools) without recipe key,
// model, method, team or outcome; cost_daily_rollups otherwise. All three
// give the same sums (each coarser rollup sums the finer one). Read as rows
// when the query groups by day and by every key of that rollup.
const ReportStatement& ReportStatementFor(const CostQuery& q) {
  static const ReportStatement* const kDetailed[2] = {
      NewReportStatement("cost_report_detailed", "cost_daily_rollups", false),
      NewReportStatement("cost_report_detailed", "cost_daily_rollups", true)};
  static const ReportStatement* const kByPool[2] = {
      NewReportStatement("cost_report_by_pool", kPoolRollups, false),
      NewReportStatement("cost_report_by_pool", kPoolRollups, true)};
  static const ReportStatement* const kBySku =
      NewReportStatement("cost_report_by_sku", kSkuRollups, false);
  if (AtSkuLevel(q)) return *kBySku;
  const bool by_day = q.period == CostPeriod::kDay;
  const bool below_pool = q.by_recipe_key || q.by_model || q.by_method ||
                          q.by_team || q.by_outcome || !q.recipe_keys.empty() ||
                          !q.models.empty() || !q.methods.empty() ||
                          !q.teams.empty() || !q.outcomes.empty();
  if (!below_pool) return *kByPool[by_day && q.by_sku && q.by_pool];
  return *kDetailed[by_day && q.by_sku && q.by_pool && q.by_recipe_key &&
                    q.by_model && q.by_method && q.by_team && q.by_outcome];
}

const char* PeriodName(CostPeriod period) {
  switch (period) {
    case CostPeriod::kDay:
      return "DAY";
    case CostPeriod::kWeek:
      return "WEEK";
    case CostPeriod::kMonth:
      return "MONTH";
    case CostPeriod::kNone:
      break;
  }
  return "";
}

template <typename T>
std::optional<T> Optional(const pqxx::field& field) {
  if (field.is_null()) return std::nullopt;
  return field.as<T>();
}

}  // namespace

void AddRunToCostRollup(pqxx::work& txn, const std::string& run_id) {
  constexpr char kName[] = "cost_upsert_rollups";
  txn.conn().prepare(kName, UpsertCostRollups());
  txn.exec_prepared(kName, run_id);
}

absl::StatusOr<CostPage> GetCostReport(DbSession& session, const CostQuery& q,
                                       const std::optional<CostGroupKey>& after,
                                       int page_size) {
  return session.Run([&](pqxx::connection_base& c) -> absl::StatusOr<CostPage> {
    // One statement, one snapshot: no BEGIN and COMMIT round trips.
    pqxx::nontransaction txn(c);
    const CostGroupKey cursor = after.value_or(CostGroupKey{});
    pqxx::result rows;
    if (ReadsSkuDays(q)) {
      constexpr char kName[] = "cost_report_sku_days";
      c.prepare(kName, kSkuDaysStatement);  // once a connection
      rows = txn.exec_prepared(kName, absl::FormatCivilTime(q.start),
                               absl::FormatCivilTime(q.end),
                               TextArrayLiteral(q.skus), cursor.period,
                               cursor.sku, after.has_value(), page_size + 1);
    } else {
      const ReportStatement& statement = ReportStatementFor(q);
      c.prepare(statement.name, statement.sql);  // once a connection
      rows = txn.exec_prepared(
          statement.name, absl::FormatCivilTime(q.start),
          absl::FormatCivilTime(q.end), TextArrayLiteral(q.skus),
          TextArrayLiteral(q.pools), TextArrayLiteral(q.recipe_keys),
          TextArrayLiteral(q.models), TextArrayLiteral(q.methods),
          TextArrayLiteral(q.teams), TextArrayLiteral(q.outcomes), q.by_sku,
          q.by_pool, q.by_recipe_key, q.by_model, q.by_method, q.by_team,
          q.by_outcome, PeriodName(q.period), cursor.period, cursor.sku,
          cursor.pool, cursor.recipe_key, cursor.model, cursor.method,
          cursor.team, cursor.outcome, after.has_value(), page_size + 1);
    }
    CostPage page;
    for (const pqxx::row& row : rows) {
      if (static_cast<int>(page.rows.size()) == page_size) {
        page.more = true;
        break;
      }
      CostRow r;
      r.key = CostGroupKey{row[0].as<std::string>(), row[1].as<std::string>(),
                           row[2].as<std::string>(), row[3].as<std::string>(),
                           row[4].as<std::string>(), row[5].as<std::string>(),
                           row[6].as<std::string>(), row[7].as<std::string>()};
      r.runs = row[8].as<int64_t>();
      r.successful_runs = row[9].as<int64_t>();
      r.retries = row[10].as<int64_t>();
      r.steps_attempted = row[11].as<int64_t>();
      r.successful_steps = row[12].as<int64_t>();
      r.gpu_microseconds = row[13].as<int64_t>();
      r.wasted_gpu_microseconds = row[14].as<int64_t>();
      r.gpu_hours_per_1k_successful_steps = Optional<double>(row[15]);
      r.internal_cost_micros = row[16].as<int64_t>();
      r.internal_cost_per_successful_step_nanos = Optional<int64_t>(row[17]);
      if (row[18].as<bool>()) {  // every run of the row had a list price
        r.list_price_cost_micros = row[19].as<int64_t>();
        r.list_price_cost_per_successful_step_nanos =
            Optional<int64_t>(row[20]);
        r.observed_over_list_price_ratio = Optional<double>(row[21]);
      }
      if (row[22].as<bool>()) {  // grouped by pool
        PoolOccupancy o;
        o.available_gpu_hours = row[23].as<double>();
        o.used_gpu_microseconds = row[24].as<int64_t>();
        o.occupancy = row[25].as<double>();
        o.amortized_cost_per_successful_step_nanos = Optional<int64_t>(row[26]);
        r.occupancy = o;
      }
      page.rows.push_back(std::move(r));
    }
    return page;
  });
}

}  // namespace placement::storage
