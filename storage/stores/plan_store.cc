#include "storage/stores/plan_store.h"

#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "storage/wire/binary_array.h"
#include "storage/wire/double_text.h"
#include "storage/wire/hex.h"
#include "storage/wire/pq_values.h"

namespace placement::storage {
namespace {

constexpr char kInsertResult[] = R"sql(
INSERT INTO plan_results (result_hash, response)
VALUES (decode($1, 'hex'), decode($2, 'hex'))
ON CONFLICT (result_hash) DO NOTHING
RETURNING 1)sql";

constexpr char kCopyPredictions[] =
    "COPY plan_predictions (result_hash, pool_name, sku_id, rank, basis, "
    "predicted_peak_memory_gb, predicted_gpu_hours_per_successful_step, "
    "prior_peak_memory_gb, prior_gpu_hours_per_successful_step) "
    "FROM STDIN";

// A batch of plans, one binary array per column (see PlacementColumns).
constexpr char kInsertPlacementsName[] = "insert_placements";
constexpr char kInsertPlacements[] = R"sql(
INSERT INTO placements (plan_id, request_id, team, recipe_key, objective,
                        chosen_pool, chosen_sku, request, result_hash,
                        evidence_time, warnings, created_at)
SELECT plan_id, request_id, team, recipe_key, objective, chosen_pool,
       chosen_sku, request, result_hash, evidence_time, warnings::text[],
       created_at
FROM unnest($1::uuid[], $2::text[], $3::text[], $4::text[], $5::text[],
            $6::text[], $7::text[], $8::bytea[], $9::bytea[],
            $10::timestamptz[], $11::text[], $12::timestamptz[])
  AS batch(plan_id, request_id, team, recipe_key, objective, chosen_pool,
           chosen_sku, request, result_hash, evidence_time, warnings,
           created_at))sql";

constexpr char kInsertPlacement[] = R"sql(
INSERT INTO placements (plan_id, request_id, team, recipe_key, objective,
                        chosen_pool, chosen_sku, request, result_hash,
                        evidence_time, warnings, created_at)
VALUES ($1::uuid, $2, $3, $4, $5, $6, $7, decode($8, 'hex'), decode($9, 'hex'),
        to_timestamp($10::float8 / 1e6), $11::text[],
        to_timestamp($12::float8 / 1e6))
ON CONFLICT (request_id) WHERE request_id IS NOT NULL DO NOTHING
RETURNING plan_id)sql";

constexpr char kSelectPlanIdByRequestId[] =
    "SELECT plan_id::text FROM placements WHERE request_id = $1";

#define PLACEMENT_PLAN_COLUMNS                                        \
  "SELECT p.plan_id::text, encode(p.request, 'hex'), "                \
  "encode(r.response, 'hex'), "                                       \
  "(extract(epoch FROM p.created_at) * 1e6)::bigint, "                \
  "(extract(epoch FROM p.evidence_time) * 1e6)::bigint, p.warnings, " \
  "p.team "                                                           \
  "FROM placements p JOIN plan_results r USING (result_hash) "

constexpr char kSelectPlan[] =
    PLACEMENT_PLAN_COLUMNS "WHERE p.plan_id = $1::uuid";
constexpr char kSelectPlanByRequestId[] =
    PLACEMENT_PLAN_COLUMNS "WHERE p.request_id = $1";
#undef PLACEMENT_PLAN_COLUMNS

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
         END AS step_error,
         100 * (prior_peak_memory_gb - observed_peak_memory_gb)
             / observed_peak_memory_gb AS prior_memory_error,
         CASE WHEN observed_gpu_hours_per_successful_step > 0 THEN
           100 * (prior_gpu_hours_per_successful_step
                  - observed_gpu_hours_per_successful_step)
               / observed_gpu_hours_per_successful_step
         END AS prior_step_error
  FROM plan_outcomes o
  WHERE recorded_at >= to_timestamp($1::float8 / 1e6)
    AND recorded_at < to_timestamp($2::float8 / 1e6)
    AND (cardinality($3::text[]) = 0
         OR EXISTS (SELECT 1 FROM placements p
                    WHERE p.plan_id = o.plan_id AND p.team = ANY ($3::text[]))))
SELECT sku_id, count(*),
       percentile_cont(0.5) WITHIN GROUP (ORDER BY abs(memory_error)),
       percentile_cont(0.9) WITHIN GROUP (ORDER BY abs(memory_error)),
       avg(memory_error),
       count(step_error),
       coalesce(percentile_cont(0.5) WITHIN GROUP (ORDER BY abs(step_error)), 0),
       coalesce(percentile_cont(0.9) WITHIN GROUP (ORDER BY abs(step_error)), 0),
       coalesce(avg(step_error), 0),
       count(prior_memory_error),
       coalesce(percentile_cont(0.5) WITHIN GROUP (ORDER BY abs(prior_memory_error)), 0),
       coalesce(percentile_cont(0.9) WITHIN GROUP (ORDER BY abs(prior_memory_error)), 0),
       coalesce(avg(prior_memory_error), 0),
       count(prior_step_error),
       coalesce(percentile_cont(0.5) WITHIN GROUP (ORDER BY abs(prior_step_error)), 0),
       coalesce(percentile_cont(0.9) WITHIN GROUP (ORDER BY abs(prior_step_error)), 0),
       coalesce(avg(prior_step_error), 0)
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

// COPY text format: backslash, tab, newline and carriage return escaped.
void AppendCopyText(absl::string_view text, std::string* out) {
  for (char c : text) {
    switch (c) {
      case '\\':
        out->append("\\\\");
        break;
      case '\t':
        out->append("\\t");
        break;
      case '\n':
        out->append("\\n");
        break;
      case '\r':
        out->append("\\r");
        break;
      default:
        out->push_back(c);
    }
  }
}

StoredPlan PlanFromRow(const PGresult* result) {
  StoredPlan plan;
  plan.plan_id = PQgetvalue(result, 0, 0);
  plan.request = HexDecode(PQgetvalue(result, 0, 1));
  plan.result_response = HexDecode(PQgetvalue(result, 0, 2));
  plan.created_at = absl::FromUnixMicros(Int64Field(result, 0, 3));
  plan.evidence_time = absl::FromUnixMicros(Int64Field(result, 0, 4));
  plan.warnings = ParseTextArray(PQgetvalue(result, 0, 5));
  plan.team = PQgetvalue(result, 0, 6);
  return plan;
}

// Stores `result` unless it is stored already; its predictions with it.
absl::Status EnsureResult(PqConnection& c, const PlanResultRecord& result) {
  const std::string hash = HexEncode(result.hash);
  const std::string response = HexEncode(result.response);
  absl::StatusOr<PqResult> inserted =
      c.Exec(kInsertResult, {hash.c_str(), response.c_str()});
  if (!inserted.ok()) return inserted.status();
  if (PQntuples(inserted->get()) == 0 || result.predictions.empty()) {
    return absl::OkStatus();  // stored before, predictions with it
  }
  std::string rows;
  for (const PlanPrediction& p : result.predictions) {
    absl::StrAppend(&rows, "\\\\x", hash, "\t");
    AppendCopyText(p.pool_name, &rows);
    rows.push_back('\t');
    AppendCopyText(p.sku_id, &rows);
    absl::StrAppend(&rows, "\t", p.rank, "\t");
    AppendCopyText(p.basis, &rows);
    rows.push_back('\t');
    AppendDouble(p.peak_memory_gb, &rows);
    rows.push_back('\t');
    AppendDouble(p.gpu_hours_per_successful_step, &rows);
    // An unknown prior (0) is NULL.
    for (double prior :
         {p.prior_peak_memory_gb, p.prior_gpu_hours_per_successful_step}) {
      rows.push_back('\t');
      if (prior > 0) {
        AppendDouble(prior, &rows);
      } else {
        rows.append("\\N");
      }
    }
    rows.push_back('\n');
  }
  return c.CopyIn(kCopyPredictions, rows).status();
}

// kInsertPlacements' parameters: the plans' columns, one array each.
class PlacementColumns {
 public:
  // False, adding nothing, if the plan id is not a UUID.
  bool Add(const PlacementRecord& p) {
    if (!plan_id_.AddUuid(p.plan_id)) return false;
    TextOrNull(p.request_id, request_id_);
    team_.AddBytes(p.team);
    recipe_key_.AddBytes(p.recipe_key);
    objective_.AddBytes(p.objective);
    TextOrNull(p.chosen_pool, chosen_pool_);
    TextOrNull(p.chosen_sku, chosen_sku_);
    request_.AddBytes(p.request);
    result_hash_.AddBytes(p.result->hash);
    evidence_time_.AddTimestamp(p.evidence_time);
    // An array of arrays must be rectangular: each plan's warnings go as
    // one literal, cast back to text[] by the statement.
    warnings_.AddBytes(TextArrayLiteral(p.warnings));
    created_at_.AddTimestamp(p.created_at);
    return true;
  }

  std::vector<std::string> Finish() && {
    std::vector<std::string> params;
    params.reserve(12);
    for (BinaryArray* column :
         {&plan_id_, &request_id_, &team_, &recipe_key_, &objective_,
          &chosen_pool_, &chosen_sku_, &request_, &result_hash_,
          &evidence_time_, &warnings_, &created_at_}) {
      params.push_back(std::move(*column).Finish());
    }
    return params;
  }

 private:
  static void TextOrNull(const std::string& text, BinaryArray& column) {
    if (text.empty()) {
      column.AddNull();
    } else {
      column.AddBytes(text);
    }
  }

  BinaryArray plan_id_{BinaryArray::kUuid};
  BinaryArray request_id_{BinaryArray::kText};
  BinaryArray team_{BinaryArray::kText};
  BinaryArray recipe_key_{BinaryArray::kText};
  BinaryArray objective_{BinaryArray::kText};
  BinaryArray chosen_pool_{BinaryArray::kText};
  BinaryArray chosen_sku_{BinaryArray::kText};
  BinaryArray request_{BinaryArray::kBytea};
  BinaryArray result_hash_{BinaryArray::kBytea};
  BinaryArray evidence_time_{BinaryArray::kTimestamptz};
  BinaryArray warnings_{BinaryArray::kText};
  BinaryArray created_at_{BinaryArray::kTimestamptz};
};

}  // namespace

absl::Status InsertPlacements(
    DbSession& session, const std::vector<const PlacementRecord*>& plans,
    const std::function<bool(const std::string& hash)>& known) {
  if (plans.empty()) return absl::OkStatus();
  std::vector<const PlanResultRecord*> unknown;
  absl::flat_hash_set<const PlanResultRecord*> seen;
  PlacementColumns columns;
  for (const PlacementRecord* plan : plans) {
    if (seen.insert(plan->result.get()).second && !known(plan->result->hash)) {
      unknown.push_back(plan->result.get());
    }
    if (!columns.Add(*plan)) {
      return absl::InvalidArgumentError(
          absl::StrCat("plan id ", plan->plan_id, " is not a UUID"));
    }
  }
  const std::vector<std::string> params = std::move(columns).Finish();
  return session.RunRaw([&](PqConnection& c) -> absl::Status {
    // With every result already stored (the usual case) the insert is the
    // whole write and commits on its own: one round trip.
    if (unknown.empty()) {
      return c.ExecPrepared(kInsertPlacementsName, kInsertPlacements, params)
          .status();
    }
    PqTransaction txn(c);
    if (absl::Status s = txn.Begin(); !s.ok()) return s;
    for (const PlanResultRecord* result : unknown) {
      if (absl::Status s = EnsureResult(c, *result); !s.ok()) return s;
    }
    if (absl::StatusOr<PqResult> inserted =
            c.ExecPrepared(kInsertPlacementsName, kInsertPlacements, params);
        !inserted.ok()) {
      return inserted.status();
    }
    return txn.Commit();
  });
}

absl::StatusOr<std::optional<std::string>> InsertPlacementWithRequestId(
    DbSession& session, const PlacementRecord& plan) {
  return session.RunRaw(
      [&](PqConnection& c) -> absl::StatusOr<std::optional<std::string>> {
        PqTransaction txn(c);
        if (absl::Status s = txn.Begin(); !s.ok()) return s;
        if (absl::Status s = EnsureResult(c, *plan.result); !s.ok()) return s;
        const std::string request = HexEncode(plan.request);
        const std::string hash = HexEncode(plan.result->hash);
        const std::string evidence =
            std::to_string(absl::ToUnixMicros(plan.evidence_time));
        const std::string warnings = TextArrayLiteral(plan.warnings);
        const std::string created =
            std::to_string(absl::ToUnixMicros(plan.created_at));
        auto or_null = [](const std::string& s) {
          return s.empty() ? nullptr : s.c_str();
        };
        absl::StatusOr<PqResult> inserted =
            c.Exec(kInsertPlacement,
                   {plan.plan_id.c_str(), or_null(plan.request_id),
                    plan.team.c_str(), plan.recipe_key.c_str(),
                    plan.objective.c_str(), or_null(plan.chosen_pool),
                    or_null(plan.chosen_sku), request.c_str(), hash.c_str(),
                    evidence.c_str(), warnings.c_str(), created.c_str()});
        if (!inserted.ok()) return inserted.status();
        std::optional<std::string> existing;
        if (PQntuples(inserted->get()) == 0) {
          absl::StatusOr<PqResult> other =
              c.Exec(kSelectPlanIdByRequestId, {plan.request_id.c_str()});
          if (!other.ok()) return other.status();
          if (PQntuples(other->get()) == 0) {
            return absl::AbortedError("request_id conflict; retry");
          }
          existing = PQgetvalue(other->get(), 0, 0);
        }
        if (absl::Status s = txn.Commit(); !s.ok()) return s;
        return existing;
      });
}

absl::StatusOr<StoredPlan> GetPlan(DbSession& session,
                                   const std::string& plan_id) {
  return session.RunRaw([&](PqConnection& c) -> absl::StatusOr<StoredPlan> {
    absl::StatusOr<PqResult> rows = c.Exec(kSelectPlan, {plan_id.c_str()});
    if (!rows.ok()) return rows.status();
    if (PQntuples(rows->get()) == 0) {
      return absl::NotFoundError(absl::StrCat("no plan ", plan_id));
    }
    return PlanFromRow(rows->get());
  });
}

absl::StatusOr<std::optional<StoredPlan>> FindPlanByRequestId(
    DbSession& session, const std::string& request_id) {
  // Parameters travel as C strings: a NUL would cut the key short and find
  // another request's plan.
  if (request_id.find('\0') != std::string::npos) {
    return absl::InvalidArgumentError("request_id holds a NUL byte");
  }
  return session.RunRaw(
      [&](PqConnection& c) -> absl::StatusOr<std::optional<StoredPlan>> {
        absl::StatusOr<PqResult> rows =
            c.Exec(kSelectPlanByRequestId, {request_id.c_str()});
        if (!rows.ok()) return rows.status();
        if (PQntuples(rows->get()) == 0) return std::optional<StoredPlan>();
        return std::optional<StoredPlan>(PlanFromRow(rows->get()));
      });
}

absl::StatusOr<std::vector<SkuAccuracyRow>> PlanAccuracy(
    DbSession& session, absl::Time from, absl::Time to,
    const std::vector<std::string>& teams) {
  return session.Run([&](pqxx::connection_base& c)
                         -> absl::StatusOr<std::vector<SkuAccuracyRow>> {
    pqxx::read_transaction txn(c);
    std::vector<SkuAccuracyRow> rows;
    for (const pqxx::row& row :
         txn.exec_params(kAccuracy, Micros(from, kEarliestMicros),
                         Micros(to, kLatestMicros), TextArrayLiteral(teams))) {
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
      r.prior_runs = row[9].as<int64_t>();
      r.prior_peak_memory_median_abs_error_pct = row[10].as<double>();
      r.prior_peak_memory_p90_abs_error_pct = row[11].as<double>();
      r.prior_peak_memory_mean_error_pct = row[12].as<double>();
      r.prior_runs_with_successful_steps = row[13].as<int64_t>();
      r.prior_gpu_hours_per_step_median_abs_error_pct = row[14].as<double>();
      r.prior_gpu_hours_per_step_p90_abs_error_pct = row[15].as<double>();
      r.prior_gpu_hours_per_step_mean_error_pct = row[16].as<double>();
      rows.push_back(r);
    }
    return rows;
  });
}

}  // namespace placement::storage
