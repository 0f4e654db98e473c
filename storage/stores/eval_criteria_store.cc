#include "storage/stores/eval_criteria_store.h"

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "storage/schema/schema_requirement.h"
#include "storage/wire/double_text.h"

namespace placement::storage {
namespace {

constexpr char kHasEvalCriteria[] =
    "SELECT to_regclass('eval_criteria') IS NOT NULL";

constexpr char kPoolExists[] =
    "SELECT 1 FROM pools WHERE name = $1 FOR KEY SHARE";

// Empty texts bind as NULL: the table's selector and bounds are NULL when
// unset.
constexpr char kUpsertCriterion[] = R"sql(
INSERT INTO eval_criteria (name, pool_name, label_key, label_value, metric,
                           min_score, max_score)
VALUES ($1, NULLIF($2, ''), NULLIF($3, ''),
        CASE WHEN $3 = '' THEN NULL ELSE $4 END, $5,
        NULLIF($6, '')::float8, NULLIF($7, '')::float8)
ON CONFLICT (name) DO UPDATE
SET pool_name = EXCLUDED.pool_name, label_key = EXCLUDED.label_key,
    label_value = EXCLUDED.label_value, metric = EXCLUDED.metric,
    min_score = EXCLUDED.min_score, max_score = EXCLUDED.max_score,
    update_time = now()
RETURNING (extract(epoch FROM update_time) * 1000000)::bigint)sql";

// Serializes concurrent creations, so the cap below holds.
constexpr char kLockCriteria[] =
    "LOCK TABLE eval_criteria IN SHARE ROW EXCLUSIVE MODE";
constexpr char kCountOtherCriteria[] =
    "SELECT count(*) FROM eval_criteria WHERE name <> $1";

constexpr char kDeleteCriterion[] =
    "DELETE FROM eval_criteria WHERE name = $1 RETURNING name";

#define PLACEMENT_CRITERION_COLUMNS                                 \
  "SELECT name, coalesce(pool_name, ''), coalesce(label_key, ''), " \
  "coalesce(label_value, ''), metric, min_score, max_score, "       \
  "(extract(epoch FROM update_time) * 1000000)::bigint FROM eval_criteria "

constexpr char kReadCriteria[] = PLACEMENT_CRITERION_COLUMNS "ORDER BY name";
constexpr char kCriteriaPage[] =
    PLACEMENT_CRITERION_COLUMNS "WHERE name > $1 ORDER BY name LIMIT $2";

#undef PLACEMENT_CRITERION_COLUMNS

EvalCriterionRecord RecordFromRow(const pqxx::row& row) {
  EvalCriterionRecord record;
  core::EvalCriterion& c = record.criterion;
  c.name = row[0].as<std::string>();
  c.pool_name = row[1].as<std::string>();
  c.label_key = row[2].as<std::string>();
  c.label_value = row[3].as<std::string>();
  c.metric = row[4].as<std::string>();
  if (!row[5].is_null()) c.min_score = row[5].as<double>();
  if (!row[6].is_null()) c.max_score = row[6].as<double>();
  record.update_time = absl::FromUnixMicros(row[7].as<int64_t>());
  return record;
}

std::string BoundText(const std::optional<double>& bound) {
  return bound.has_value() ? DoubleText(*bound) : "";
}

bool HasEvalCriteria(pqxx::transaction_base& txn) {
  return txn.exec(kHasEvalCriteria)[0][0].as<bool>();
}

absl::Status NoTable() { return SchemaLacks("eval criteria", 20); }

}  // namespace

absl::StatusOr<EvalCriterionRecord> SetEvalCriterion(
    DbSession& session, const core::EvalCriterion& criterion) {
  return session.Run(
      [&](pqxx::connection_base& c) -> absl::StatusOr<EvalCriterionRecord> {
        pqxx::work txn(c);
        if (!HasEvalCriteria(txn)) return NoTable();
        if (!criterion.pool_name.empty() &&
            txn.exec_params(kPoolExists, criterion.pool_name).empty()) {
          return absl::NotFoundError(
              absl::StrCat("no pool is named '", criterion.pool_name, "'"));
        }
        txn.exec(kLockCriteria);
        if (txn.exec_params(kCountOtherCriteria, criterion.name)[0][0]
                .as<int64_t>() >= core::kMaxEvalCriteria) {
          return absl::FailedPreconditionError(
              absl::StrCat("at most ", core::kMaxEvalCriteria,
                           " eval criteria: delete one first"));
        }
        const pqxx::result written = txn.exec_params(
            kUpsertCriterion, criterion.name, criterion.pool_name,
            criterion.label_key, criterion.label_value, criterion.metric,
            BoundText(criterion.min_score), BoundText(criterion.max_score));
        txn.commit();
        EvalCriterionRecord record;
        record.criterion = criterion;
        if (record.criterion.label_key.empty()) {
          record.criterion.label_value.clear();
        }
        record.update_time = absl::FromUnixMicros(written[0][0].as<int64_t>());
        return record;
      });
}

absl::StatusOr<bool> DeleteEvalCriterion(DbSession& session,
                                         const std::string& name) {
  return session.Run([&](pqxx::connection_base& c) -> absl::StatusOr<bool> {
    pqxx::work txn(c);
    if (!HasEvalCriteria(txn)) return NoTable();
    const bool deleted = !txn.exec_params(kDeleteCriterion, name).empty();
    txn.commit();
    return deleted;
  });
}

absl::StatusOr<EvalCriterionPage> ListEvalCriteria(
    DbSession& session, int page_size, const std::string& after_name) {
  return session.Run(
      [&](pqxx::connection_base& c) -> absl::StatusOr<EvalCriterionPage> {
        pqxx::read_transaction txn(c);
        EvalCriterionPage page;
        if (!HasEvalCriteria(txn)) return NoTable();
        for (const pqxx::row& row :
             txn.exec_params(kCriteriaPage, after_name, page_size + 1)) {
          if (static_cast<int>(page.criteria.size()) == page_size) {
            page.more = true;
            break;
          }
          page.criteria.push_back(RecordFromRow(row));
        }
        return page;
      });
}

std::vector<core::EvalCriterion> ReadEvalCriteria(pqxx::transaction_base& txn) {
  std::vector<core::EvalCriterion> criteria;
  if (!HasEvalCriteria(txn)) return criteria;
  for (const pqxx::row& row : txn.exec(kReadCriteria)) {
    criteria.push_back(RecordFromRow(row).criterion);
  }
  return criteria;
}

}  // namespace placement::storage
