#include "storage/stores/eval_store.h"

#include "absl/status/status.h"
#include "storage/schema/schema_requirement.h"
#include "storage/wire/pq_values.h"

namespace placement::storage {
namespace {

constexpr char kHasEvalResults[] =
    "SELECT to_regclass('eval_results') IS NOT NULL";
constexpr char kEvalTableId[] =
    "SELECT coalesce(pg_relation_filenode(to_regclass('eval_results'))"
    "::text::bigint, 0)";

constexpr char kInsertEval[] = R"sql(
INSERT INTO eval_results (run_id, ordinal, recipe_key, serving_sku_id,
                          serving_precision, metric, score, recorded_at)
SELECT run_id, $2, $3, $4, $5, $6, $7, accepted_at
FROM benchmark_runs WHERE run_id = $1::uuid)sql";

#define PLACEMENT_EVAL_COLUMNS                                 \
  "SELECT run_id::text, ordinal, recipe_key, serving_sku_id, " \
  "serving_precision, metric, score, "                         \
  "(extract(epoch FROM recorded_at) * 1e6)::bigint FROM eval_results "

constexpr char kReadEvals[] =
    PLACEMENT_EVAL_COLUMNS "ORDER BY recorded_at, run_id, ordinal";
constexpr char kReadEvalsChanged[] =
    PLACEMENT_EVAL_COLUMNS "WHERE" PLACEMENT_CHANGED_SINCE(
        "change_xid") "ORDER BY recorded_at, run_id, ordinal";
constexpr char kListEvals[] = PLACEMENT_EVAL_COLUMNS R"sql(
WHERE ($1 = '' OR recipe_key = $1)
  AND ($2 = '' OR serving_sku_id = $2)
  AND ($3 = '' OR serving_precision = $3)
  AND ($4 = '' OR (recorded_at, run_id, ordinal) <
                  (to_timestamp($5::float8 / 1e6), $4::uuid, $6))
  AND (cardinality($8::text[]) = 0
       OR EXISTS (SELECT 1 FROM benchmark_runs b
                  WHERE b.run_id = eval_results.run_id
                    AND b.team = ANY ($8::text[])))
ORDER BY recorded_at DESC, run_id DESC, ordinal DESC
LIMIT $7)sql";

#undef PLACEMENT_EVAL_COLUMNS

StoredEval EvalFromRow(const pqxx::row& row) {
  StoredEval stored;
  core::EvalEvidence& e = stored.eval;
  e.run_id = row[0].as<std::string>();
  stored.ordinal = row[1].as<int>();
  e.recipe_key = row[2].as<std::string>();
  e.serving_sku_id = row[3].as<std::string>();
  e.serving_precision = core::ParsePrecision(row[4].as<std::string>())
                            .value_or(core::Precision::kUnspecified);
  e.metric = row[5].as<std::string>();
  e.score = row[6].as<double>();
  e.recorded = absl::FromUnixMicros(row[7].as<int64_t>());
  return stored;
}

std::vector<core::EvalEvidence> EvalsOf(const pqxx::result& rows) {
  std::vector<core::EvalEvidence> evals;
  evals.reserve(rows.size());
  for (const pqxx::row& row : rows) evals.push_back(EvalFromRow(row).eval);
  return evals;
}

}  // namespace

bool HasEvalResults(pqxx::transaction_base& txn) {
  return txn.exec(kHasEvalResults)[0][0].as<bool>();
}

void InsertEvals(pqxx::transaction_base& txn, const std::string& run_id,
                 const std::string& recipe_key,
                 const std::vector<core::EvalEvidence>& evals) {
  for (size_t i = 0; i < evals.size(); ++i) {
    const core::EvalEvidence& e = evals[i];
    txn.exec_params(kInsertEval, run_id, static_cast<int>(i), recipe_key,
                    e.serving_sku_id, core::PrecisionName(e.serving_precision),
                    e.metric, e.score);
  }
}

int64_t EvalTableId(pqxx::transaction_base& txn) {
  return txn.exec(kEvalTableId)[0][0].as<int64_t>();
}

std::vector<core::EvalEvidence> ReadEvals(pqxx::transaction_base& txn) {
  if (!HasEvalResults(txn)) return {};
  return EvalsOf(txn.exec(kReadEvals));
}

std::vector<core::EvalEvidence> ReadEvalsChangedSince(
    pqxx::transaction_base& txn, const TransactionHorizon& since) {
  if (!HasEvalResults(txn)) return {};
  return EvalsOf(
      txn.exec_params(kReadEvalsChanged, since.ToText(), since.xmin));
}

absl::StatusOr<EvalPage> ListEvals(DbSession& session, const EvalFilter& filter,
                                   const EvalCursor& after, int page_size) {
  return session.Run([&](pqxx::connection_base& c) -> absl::StatusOr<EvalPage> {
    pqxx::read_transaction txn(c);
    if (!HasEvalResults(txn)) {
      return SchemaLacks("stored evals", 19);
    }
    const int64_t cursor_micros =
        after.run_id.empty() ? 0 : absl::ToUnixMicros(after.recorded);
    const std::string precision =
        filter.serving_precision == core::Precision::kUnspecified
            ? ""
            : core::PrecisionName(filter.serving_precision);
    const pqxx::result rows =
        txn.exec_params(kListEvals, filter.recipe_key, filter.serving_sku_id,
                        precision, after.run_id, cursor_micros, after.ordinal,
                        page_size + 1, TextArrayLiteral(filter.teams));
    EvalPage page;
    for (const pqxx::row& row : rows) {
      if (static_cast<int>(page.evals.size()) == page_size) {
        page.more = true;
        break;
      }
      page.evals.push_back(EvalFromRow(row));
    }
    return page;
  });
}

}  // namespace placement::storage
