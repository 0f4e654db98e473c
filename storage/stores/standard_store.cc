#include "storage/stores/standard_store.h"

#include <optional>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "storage/schema/schema_requirement.h"
#include "storage/wire/hex.h"
#include "storage/wire/pq_values.h"

namespace placement::storage {
namespace {

constexpr char kHasStandards[] = "SELECT to_regclass('standards') IS NOT NULL";

#define PLACEMENT_STANDARD_COLUMNS                                         \
  "SELECT standard_id::text, request_id, encode(fingerprint, 'hex'), "     \
  "encode(recipe_class, 'hex'), model, pool_name, sku_id, plan_id::text, " \
  "written_by, team, reason, cost_band_low, cost_band_high, "              \
  "failure_rate_p10, failure_rate_p90, "                                   \
  "(extract(epoch FROM created_at) * 1e6)::bigint, "                       \
  "(extract(epoch FROM retired_at) * 1e6)::bigint, "                       \
  "coalesce(retired_by, ''), coalesce(retire_reason, '') FROM standards "

constexpr char kSelectActive[] =
    PLACEMENT_STANDARD_COLUMNS "WHERE retired_at IS NULL ORDER BY standard_id";

constexpr char kSelectById[] =
    PLACEMENT_STANDARD_COLUMNS "WHERE standard_id = $1::uuid";

constexpr char kSelectByRequestId[] =
    PLACEMENT_STANDARD_COLUMNS "WHERE request_id = $1";

// Newest first; the cursor is the (created_at, standard_id) of the last row
// (an empty id: from the start).
constexpr char kList[] = PLACEMENT_STANDARD_COLUMNS
    R"sql(WHERE ($1 OR retired_at IS NULL)
  AND ($2 = '' OR (created_at, standard_id) <
       (timestamptz 'epoch' + $3::bigint * interval '1 microsecond',
        nullif($2, '')::uuid))
  AND (cardinality($5::text[]) = 0 OR team = '' OR team = ANY ($5::text[]))
ORDER BY created_at DESC, standard_id DESC
LIMIT $4)sql";

constexpr char kInsert[] = R"sql(
INSERT INTO standards (
  standard_id, request_id, fingerprint, recipe_class, model, pool_name,
  sku_id, plan_id, written_by, team, reason, cost_band_low, cost_band_high,
  failure_rate_p10, failure_rate_p90)
VALUES ($1::uuid, $2, decode($3, 'hex'), decode($4, 'hex'), $5, $6, $7,
        $8::uuid, $9, $10, $11, $12, $13, $14, $15)
ON CONFLICT (request_id) DO NOTHING
RETURNING standard_id)sql";

constexpr char kRetire[] = R"sql(
UPDATE standards
SET retired_at = now(), retired_by = $2, retire_reason = $3
WHERE standard_id = $1::uuid AND retired_at IS NULL)sql";

#undef PLACEMENT_STANDARD_COLUMNS

StandardRecord RecordFromRow(const pqxx::row& row) {
  StandardRecord r;
  core::Standard& s = r.standard;
  s.standard_id = row[0].as<std::string>();
  s.request_id = row[1].as<std::string>();
  r.fingerprint = row[2].as<std::string>();
  r.recipe_class_proto = HexDecode(row[3].as<std::string>());
  r.model = row[4].as<std::string>();
  s.pool_name = row[5].as<std::string>();
  s.sku_id = row[6].as<std::string>();
  s.plan_id = row[7].as<std::string>();
  s.written_by = row[8].as<std::string>();
  s.team = row[9].as<std::string>();
  s.reason = row[10].as<std::string>();
  s.cost_micros_per_successful_step_band = {row[11].as<double>(),
                                            row[12].as<double>()};
  s.failure_rate_per_hour_band = {row[13].as<double>(), row[14].as<double>()};
  s.created = absl::FromUnixMicros(row[15].as<int64_t>());
  if (!row[16].is_null()) {
    s.retired = absl::FromUnixMicros(row[16].as<int64_t>());
  }
  s.retired_by = row[17].as<std::string>();
  s.retire_reason = row[18].as<std::string>();
  return r;
}

absl::Status NoTable() { return SchemaLacks("standards", 21); }

std::optional<StandardRecord> SelectOne(pqxx::transaction_base& txn,
                                        const char* query,
                                        const std::string& key) {
  const pqxx::result rows = txn.exec_params(query, key);
  if (rows.empty()) return std::nullopt;
  return RecordFromRow(rows[0]);
}

}  // namespace

bool HasStandards(pqxx::transaction_base& txn) {
  return txn.exec(kHasStandards)[0][0].as<bool>();
}

std::vector<StandardRecord> ReadActiveStandards(pqxx::transaction_base& txn) {
  std::vector<StandardRecord> records;
  if (!HasStandards(txn)) return records;
  for (const pqxx::row& row : txn.exec(kSelectActive)) {
    records.push_back(RecordFromRow(row));
  }
  return records;
}

absl::StatusOr<StandardRecord> InsertStandard(DbSession& session,
                                              const StandardRecord& record) {
  return session.Run(
      [&](pqxx::connection_base& c) -> absl::StatusOr<StandardRecord> {
        pqxx::work txn(c);
        if (!HasStandards(txn)) return NoTable();
        const core::Standard& s = record.standard;
        const pqxx::result inserted = txn.exec_params(
            kInsert, s.standard_id, s.request_id, record.fingerprint,
            HexEncode(record.recipe_class_proto), record.model, s.pool_name,
            s.sku_id, s.plan_id, s.written_by, s.team, s.reason,
            s.cost_micros_per_successful_step_band.low,
            s.cost_micros_per_successful_step_band.high,
            s.failure_rate_per_hour_band.low,
            s.failure_rate_per_hour_band.high);
        std::optional<StandardRecord> stored =
            SelectOne(txn, kSelectByRequestId, s.request_id);
        txn.commit();
        if (!stored.has_value()) {
          return absl::InternalError("standard vanished after its insert");
        }
        if (inserted.empty() && stored->fingerprint != record.fingerprint) {
          return absl::AlreadyExistsError(absl::StrCat(
              "request_id ", s.request_id, " already wrote standard ",
              stored->standard.standard_id, " with other content"));
        }
        return *std::move(stored);
      });
}

absl::StatusOr<std::optional<StandardRecord>> FindStandardByRequestId(
    DbSession& session, const std::string& request_id) {
  return session.Run([&](pqxx::connection_base& c)
                         -> absl::StatusOr<std::optional<StandardRecord>> {
    pqxx::read_transaction txn(c);
    if (!HasStandards(txn)) return NoTable();
    return SelectOne(txn, kSelectByRequestId, request_id);
  });
}

absl::StatusOr<StandardRecord> GetStandard(DbSession& session,
                                           const std::string& standard_id) {
  return session.Run(
      [&](pqxx::connection_base& c) -> absl::StatusOr<StandardRecord> {
        pqxx::read_transaction txn(c);
        if (!HasStandards(txn)) return NoTable();
        std::optional<StandardRecord> stored =
            SelectOne(txn, kSelectById, standard_id);
        if (!stored.has_value()) {
          return absl::NotFoundError(absl::StrCat("no standard ", standard_id));
        }
        return *std::move(stored);
      });
}

absl::StatusOr<StandardPage> ListStandards(
    DbSession& session, const StandardCursor& after, int page_size,
    bool include_retired, const std::vector<std::string>& teams) {
  return session.Run(
      [&](pqxx::connection_base& c) -> absl::StatusOr<StandardPage> {
        pqxx::read_transaction txn(c);
        if (!HasStandards(txn)) return NoTable();
        const int64_t cursor_micros =
            after.standard_id.empty() ? 0 : absl::ToUnixMicros(after.created);
        const pqxx::result rows = txn.exec_params(
            kList, include_retired, after.standard_id, cursor_micros,
            page_size + 1, TextArrayLiteral(teams));
        StandardPage page;
        for (const pqxx::row& row : rows) {
          if (static_cast<int>(page.standards.size()) == page_size) {
            page.more = true;
            break;
          }
          page.standards.push_back(RecordFromRow(row));
        }
        return page;
      });
}

absl::StatusOr<StandardRecord> RetireStandard(DbSession& session,
                                              const std::string& standard_id,
                                              const std::string& retired_by,
                                              const std::string& reason) {
  return session.Run(
      [&](pqxx::connection_base& c) -> absl::StatusOr<StandardRecord> {
        pqxx::work txn(c);
        if (!HasStandards(txn)) return NoTable();
        txn.exec_params(kRetire, standard_id, retired_by, reason);
        std::optional<StandardRecord> stored =
            SelectOne(txn, kSelectById, standard_id);
        txn.commit();
        if (!stored.has_value()) {
          return absl::NotFoundError(absl::StrCat("no standard ", standard_id));
        }
        return *std::move(stored);
      });
}

}  // namespace placement::storage
