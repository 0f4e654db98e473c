#include "storage/stores/pool_state_store.h"

#include <cstdlib>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "storage/schema/schema_requirement.h"
#include "storage/wire/double_text.h"
#include "storage/wire/hex.h"
#include "storage/wire/pq_values.h"

namespace placement::storage {
namespace {

constexpr char kHasPoolStates[] =
    "SELECT to_regclass('pool_states') IS NOT NULL";

#define PLACEMENT_POOL_STATE_COLUMNS                                    \
  "SELECT pool_name, (extract(epoch FROM observed_at) * 1e6)::bigint, " \
  "(extract(epoch FROM received_at) * 1e6)::bigint, "                   \
  "coalesce(encode(fingerprint, 'hex'), ''), "                          \
  "coalesce(encode(report, 'hex'), ''), planned_job_ids::text, "        \
  "planned_median_s::text, planned_p90_s::text, durations_s::text, "    \
  "limits_s::text, waits_s::text, start_pits::text, "                   \
  "prediction_job_ids::text, prediction_origins::text, "                \
  "prediction_delays_s::text"

constexpr char kReadAll[] =
    PLACEMENT_POOL_STATE_COLUMNS " FROM pool_states ORDER BY pool_name";

constexpr char kReadChanged[] = PLACEMENT_POOL_STATE_COLUMNS
    " FROM pool_states WHERE" PLACEMENT_CHANGED_SINCE(
        "change_xid") "ORDER BY pool_name";

constexpr char kLockRow[] = PLACEMENT_POOL_STATE_COLUMNS
    " FROM pool_states WHERE pool_name = $1 FOR UPDATE";

constexpr char kPoolCapacity[] =
    "SELECT node_count, gpus_per_node, "
    "(extract(epoch FROM now()) * 1e6)::bigint FROM pools WHERE name = $1 "
    "FOR KEY SHARE";

constexpr char kPlanResponses[] =
    "SELECT p.plan_id::text, encode(r.response, 'hex') FROM placements p "
    "JOIN plan_results r ON r.result_hash = p.result_hash "
    "WHERE p.plan_id = ANY($1::text[]::uuid[])";

constexpr char kUpsert[] = R"sql(
INSERT INTO pool_states (
  pool_name, observed_at, received_at, fingerprint, report,
  planned_job_ids, planned_median_s, planned_p90_s,
  durations_s, limits_s, waits_s, start_pits,
  prediction_job_ids, prediction_origins, prediction_delays_s)
VALUES ($1, timestamptz 'epoch' + $2::bigint * interval '1 microsecond', now(),
        decode($3, 'hex'), decode($4, 'hex'),
        $5::text[], $6::float8[], $7::float8[],
        $8::float8[], $9::float8[], $10::float8[], $11::float8[],
        $12::text[], $13::bigint[], $14::float8[])
ON CONFLICT (pool_name) DO UPDATE SET
  observed_at = EXCLUDED.observed_at, received_at = EXCLUDED.received_at,
  fingerprint = EXCLUDED.fingerprint, report = EXCLUDED.report,
  planned_job_ids = EXCLUDED.planned_job_ids,
  planned_median_s = EXCLUDED.planned_median_s,
  planned_p90_s = EXCLUDED.planned_p90_s,
  durations_s = EXCLUDED.durations_s, limits_s = EXCLUDED.limits_s,
  waits_s = EXCLUDED.waits_s, start_pits = EXCLUDED.start_pits,
  prediction_job_ids = EXCLUDED.prediction_job_ids,
  prediction_origins = EXCLUDED.prediction_origins,
  prediction_delays_s = EXCLUDED.prediction_delays_s
RETURNING change_xid, (extract(epoch FROM received_at) * 1e6)::bigint)sql";

// The newest core::kMaxHistoryWaits, this one included.
constexpr char kAppendWait[] = R"sql(
INSERT INTO pool_states (pool_name, waits_s) VALUES ($1, ARRAY[$2::float8])
ON CONFLICT (pool_name) DO UPDATE SET waits_s =
  (pool_states.waits_s || $2::float8)[
    greatest(1, cardinality(pool_states.waits_s) + 2 - $3::int):])sql";

std::vector<double> Doubles(const std::string& literal) {
  std::vector<double> out;
  for (const std::string& item : ParseTextArray(literal)) {
    out.push_back(std::strtod(item.c_str(), nullptr));
  }
  return out;
}

std::string DoublesLiteral(const std::vector<double>& values) {
  std::string out = "{";
  for (size_t i = 0; i < values.size(); ++i) {
    if (i > 0) out.push_back(',');
    AppendDouble(values[i], &out);
  }
  out.push_back('}');
  return out;
}

std::optional<absl::Time> MicrosOrNull(const pqxx::field& field) {
  if (field.is_null()) return std::nullopt;
  return absl::FromUnixMicros(field.as<int64_t>());
}

std::vector<core::StartPrediction> PredictionsFromRow(const pqxx::row& row) {
  std::vector<core::StartPrediction> out;
  const std::vector<std::string> ids =
      ParseTextArray(row[12].as<std::string>());
  const std::vector<std::string> origins =
      ParseTextArray(row[13].as<std::string>());
  const std::vector<double> delays = Doubles(row[14].as<std::string>());
  constexpr size_t kLevels = core::kPredictionLevels;
  for (size_t i = 0; i < ids.size() && i < origins.size() &&
                     (i + 1) * kLevels <= delays.size();
       ++i) {
    core::StartPrediction p;
    p.job_id = ids[i];
    p.origin =
        absl::FromUnixMicros(std::strtoll(origins[i].c_str(), nullptr, 10));
    p.delay_s.assign(
        delays.begin() + static_cast<ptrdiff_t>(i * kLevels),
        delays.begin() + static_cast<ptrdiff_t>((i + 1) * kLevels));
    out.push_back(std::move(p));
  }
  return out;
}

PoolStateRecord RecordFromRow(const pqxx::row& row) {
  PoolStateRecord r;
  r.pool_name = row[0].as<std::string>();
  r.observed = MicrosOrNull(row[1]);
  r.received = MicrosOrNull(row[2]).value_or(absl::InfinitePast());
  r.fingerprint = HexDecode(row[3].as<std::string>());
  r.report = HexDecode(row[4].as<std::string>());
  const std::vector<std::string> ids = ParseTextArray(row[5].as<std::string>());
  const std::vector<double> medians = Doubles(row[6].as<std::string>());
  const std::vector<double> p90s = Doubles(row[7].as<std::string>());
  for (size_t i = 0; i < ids.size() && i < medians.size() && i < p90s.size();
       ++i) {
    r.planned[ids[i]] = {medians[i], p90s[i]};
  }
  r.history.durations_s = Doubles(row[8].as<std::string>());
  r.history.limits_s = Doubles(row[9].as<std::string>());
  r.history.waits_s = Doubles(row[10].as<std::string>());
  r.history.start_pits = Doubles(row[11].as<std::string>());
  core::KeepNewest(&r.history);
  r.predictions = PredictionsFromRow(row);
  return r;
}

// The upsert's parameters $5..$14 beyond the report's own.
struct RowArrays {
  std::string planned_ids, planned_medians, planned_p90s;
  std::string durations, limits, waits, pits;
  std::string prediction_ids, prediction_origins, prediction_delays;
};

RowArrays ArraysOf(const PoolStateRecord& r) {
  RowArrays a;
  std::vector<std::string> ids;
  std::vector<double> medians;
  std::vector<double> p90s;
  for (const auto& [id, run] : r.planned) {
    ids.push_back(id);
    medians.push_back(run.median_s);
    p90s.push_back(run.p90_s);
  }
  a.planned_ids = TextArrayLiteral(ids);
  a.planned_medians = DoublesLiteral(medians);
  a.planned_p90s = DoublesLiteral(p90s);
  a.durations = DoublesLiteral(r.history.durations_s);
  a.limits = DoublesLiteral(r.history.limits_s);
  a.waits = DoublesLiteral(r.history.waits_s);
  a.pits = DoublesLiteral(r.history.start_pits);
  std::vector<std::string> prediction_ids;
  std::string origins = "{";
  std::vector<double> delays;
  for (const core::StartPrediction& p : r.predictions) {
    if (p.delay_s.size() != static_cast<size_t>(core::kPredictionLevels)) {
      continue;
    }
    if (!prediction_ids.empty()) origins.push_back(',');
    prediction_ids.push_back(p.job_id);
    absl::StrAppend(&origins, absl::ToUnixMicros(p.origin));
    delays.insert(delays.end(), p.delay_s.begin(), p.delay_s.end());
  }
  origins.push_back('}');
  a.prediction_ids = TextArrayLiteral(prediction_ids);
  a.prediction_origins = std::move(origins);
  a.prediction_delays = DoublesLiteral(delays);
  return a;
}

}  // namespace

bool HasPoolStates(pqxx::transaction_base& txn) {
  return txn.exec(kHasPoolStates)[0][0].as<bool>();
}

std::vector<PoolStateRecord> ReadPoolStates(pqxx::transaction_base& txn) {
  std::vector<PoolStateRecord> out;
  if (!HasPoolStates(txn)) return out;
  for (const pqxx::row& row : txn.exec(kReadAll)) {
    out.push_back(RecordFromRow(row));
  }
  return out;
}

std::vector<PoolStateRecord> ReadPoolStatesChangedSince(
    pqxx::transaction_base& txn, const TransactionHorizon& since) {
  std::vector<PoolStateRecord> out;
  if (!HasPoolStates(txn)) return out;
  for (const pqxx::row& row :
       txn.exec_params(kReadChanged, since.ToText(), since.xmin)) {
    out.push_back(RecordFromRow(row));
  }
  return out;
}

absl::StatusOr<PoolStateWritten> ReplacePoolState(
    DbSession& session, const std::string& pool_name,
    const std::function<PoolStateDecision(const PoolStateContext&)>& decide) {
  return session.Run(
      [&](pqxx::connection_base& c) -> absl::StatusOr<PoolStateWritten> {
        pqxx::work txn(c);
        if (!HasPoolStates(txn)) return SchemaLacks("pool state", 24);
        const pqxx::result pool = txn.exec_params(kPoolCapacity, pool_name);
        if (pool.empty()) {
          return absl::NotFoundError(absl::StrCat("no pool ", pool_name));
        }
        PoolStateContext context;
        context.node_count = pool[0][0].as<int>();
        context.gpus_per_node = pool[0][1].as<int>();
        context.now = absl::FromUnixMicros(pool[0][2].as<int64_t>());
        const pqxx::result row = txn.exec_params(kLockRow, pool_name);
        if (!row.empty()) {
          context.previous = RecordFromRow(row[0]);
        }
        context.plan_responses = [&txn](const std::vector<std::string>& ids) {
          std::map<std::string, std::string> responses;
          if (ids.empty()) return responses;
          for (const pqxx::row& r :
               txn.exec_params(kPlanResponses, TextArrayLiteral(ids))) {
            responses[r[0].as<std::string>()] =
                HexDecode(r[1].as<std::string>());
          }
          return responses;
        };
        PoolStateDecision decision = decide(context);
        if (!decision.status.ok()) return decision.status;
        if (!decision.store.has_value()) {
          PoolStateWritten same;
          same.duplicate = true;
          if (context.previous.has_value()) {
            same.received = context.previous->received;
          }
          return same;
        }
        const PoolStateRecord& r = *decision.store;
        const RowArrays a = ArraysOf(r);
        const pqxx::result written = txn.exec_params(
            kUpsert, pool_name,
            r.observed.has_value() ? absl::ToUnixMicros(*r.observed) : 0,
            HexEncode(r.fingerprint), HexEncode(r.report), a.planned_ids,
            a.planned_medians, a.planned_p90s, a.durations, a.limits, a.waits,
            a.pits, a.prediction_ids, a.prediction_origins,
            a.prediction_delays);
        txn.commit();
        PoolStateWritten out;
        out.evidence_version = written[0][0].as<int64_t>();
        out.received = absl::FromUnixMicros(written[0][1].as<int64_t>());
        return out;
      });
}

void AppendUploadedWait(pqxx::transaction_base& txn,
                        const std::string& pool_name, double wait_s) {
  if (!HasPoolStates(txn)) return;
  txn.exec_params(kAppendWait, pool_name, wait_s,
                  static_cast<int>(core::kMaxHistoryWaits));
}

}  // namespace placement::storage
