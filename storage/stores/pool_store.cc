#include "storage/stores/pool_store.h"

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "storage/wire/double_text.h"
#include "storage/wire/json_text.h"

namespace placement::storage {
namespace {

// Every pool query returns these columns, one row per label (a pool without
// labels yields one row with NULL label columns).
#define PLACEMENT_POOL_COLUMNS                                             \
  "p.name, p.sku_id, p.node_count, p.gpus_per_node, p.fabric, p.purpose, " \
  "p.exclusive, p.gpu_quota, p.internal_rate_micros_per_gpu_hour, "        \
  "p.list_price_micros_per_gpu_hour, "                                     \
  "(extract(epoch FROM p.create_time) * 1000000)::bigint, "                \
  "(extract(epoch FROM p.update_time) * 1000000)::bigint, "                \
  "p.inter_node_fabric, p.inter_node_gb_s_per_gpu, l.key, l.value"
#define PLACEMENT_POOL_FROM \
  " FROM pools p LEFT JOIN LATERAL jsonb_each_text(p.labels) l ON true "

constexpr char kInsertPool[] = R"sql(
INSERT INTO pools (name, sku_id, node_count, gpus_per_node, fabric, purpose,
                   exclusive, gpu_quota, internal_rate_micros_per_gpu_hour,
                   list_price_micros_per_gpu_hour, labels, create_request_id,
                   inter_node_fabric, inter_node_gb_s_per_gpu)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11::jsonb, $12, $13, $14)
ON CONFLICT DO NOTHING
RETURNING name)sql";

constexpr char kSelectPoolByName[] =
    "SELECT " PLACEMENT_POOL_COLUMNS PLACEMENT_POOL_FROM
    "WHERE p.name = $1 ORDER BY l.key";

constexpr char kSelectPoolByNameForUpdate[] =
    "SELECT " PLACEMENT_POOL_COLUMNS PLACEMENT_POOL_FROM
    "WHERE p.name = $1 ORDER BY l.key FOR UPDATE OF p";

constexpr char kSelectPoolNameByRequestId[] =
    "SELECT name FROM pools WHERE create_request_id = $1";

// Pages by name; $2 pools plus one to learn whether more exist.
constexpr char kSelectPoolPage[] =
    "SELECT " PLACEMENT_POOL_COLUMNS
    " FROM (SELECT * FROM pools WHERE name > $1 ORDER BY name LIMIT $2) p"
    " LEFT JOIN LATERAL jsonb_each_text(p.labels) l ON true"
    " ORDER BY p.name, l.key";

constexpr char kSelectAllPools[] =
    "SELECT " PLACEMENT_POOL_COLUMNS PLACEMENT_POOL_FROM
    "ORDER BY p.name, l.key";

constexpr char kUpdatePool[] = R"sql(
UPDATE pools
SET node_count = $2, gpus_per_node = $3, fabric = $4, purpose = $5,
    exclusive = $6, gpu_quota = $7, internal_rate_micros_per_gpu_hour = $8,
    list_price_micros_per_gpu_hour = $9, labels = $10::jsonb,
    inter_node_fabric = $11, inter_node_gb_s_per_gpu = $12,
    update_time = now()
WHERE name = $1)sql";

constexpr char kSelectChangedPools[] =
    "SELECT " PLACEMENT_POOL_COLUMNS PLACEMENT_POOL_FROM
    "WHERE" PLACEMENT_CHANGED_SINCE("p.change_xid") "ORDER BY p.name, l.key";

#undef PLACEMENT_POOL_COLUMNS
#undef PLACEMENT_POOL_FROM

// Folds the one-row-per-label result into pool records, keeping order.
std::vector<PoolRecord> RecordsFromRows(const pqxx::result& rows) {
  std::vector<PoolRecord> records;
  for (const pqxx::row& row : rows) {
    const std::string name = row[0].as<std::string>();
    if (records.empty() || records.back().pool.name != name) {
      PoolRecord record;
      core::Pool& pool = record.pool;
      pool.name = name;
      pool.sku_id = row[1].as<std::string>();
      pool.node_count = row[2].as<int>();
      pool.gpus_per_node = row[3].as<int>();
      pool.fabric = core::ParseFabric(row[4].as<std::string>())
                        .value_or(core::Fabric::kUnspecified);
      pool.purpose = core::ParsePoolPurpose(row[5].as<std::string>())
                         .value_or(core::PoolPurpose::kUnspecified);
      pool.exclusive = row[6].as<bool>();
      pool.gpu_quota = row[7].as<int>();
      pool.internal_rate_micros_per_gpu_hour = row[8].as<int64_t>();
      if (!row[9].is_null()) {
        pool.list_price_micros_per_gpu_hour = row[9].as<int64_t>();
      }
      record.create_time = absl::FromUnixMicros(row[10].as<int64_t>());
      record.update_time = absl::FromUnixMicros(row[11].as<int64_t>());
      // The inter_node_fabric column holds core::InterNodeFabricName (0007).
      pool.inter_node_fabric =
          core::ParseInterNodeFabric(row[12].as<std::string>())
              .value_or(core::InterNodeFabric::kUnspecified);
      pool.inter_node_gb_s_per_gpu = row[13].as<double>();
      records.push_back(std::move(record));
    }
    if (!row[14].is_null()) {
      records.back().pool.labels[row[14].as<std::string>()] =
          row[15].as<std::string>();
    }
  }
  return records;
}

absl::StatusOr<PoolRecord> OnePool(const pqxx::result& rows,
                                   const std::string& name) {
  std::vector<PoolRecord> records = RecordsFromRows(rows);
  if (records.empty()) {
    return absl::NotFoundError(absl::StrCat("no pool is named '", name, "'"));
  }
  return std::move(records.front());
}

// libpqxx 6.4 binds a null `const char*` as SQL NULL.
struct NullableInt {
  explicit NullableInt(const std::optional<int64_t>& value)
      : text(value ? std::to_string(*value) : ""), is_set(value.has_value()) {}
  const char* param() const { return is_set ? text.c_str() : nullptr; }
  std::string text;
  bool is_set;
};

}  // namespace

absl::StatusOr<PoolRecord> CreatePool(DbSession& session,
                                      const core::Pool& pool,
                                      const std::string& request_id) {
  return session.Run([&](pqxx::connection_base& c)
                         -> absl::StatusOr<PoolRecord> {
    pqxx::work txn(c);
    const NullableInt list_price(pool.list_price_micros_per_gpu_hour);
    const pqxx::result inserted =
        txn.exec_params(kInsertPool, pool.name, pool.sku_id, pool.node_count,
                        pool.gpus_per_node, core::FabricName(pool.fabric),
                        core::PoolPurposeName(pool.purpose), pool.exclusive,
                        pool.gpu_quota, pool.internal_rate_micros_per_gpu_hour,
                        list_price.param(), JsonObjectText(pool.labels),
                        request_id.empty() ? nullptr : request_id.c_str(),
                        core::InterNodeFabricName(pool.inter_node_fabric),
                        DoubleText(pool.inter_node_gb_s_per_gpu));
    if (!inserted.empty()) {
      absl::StatusOr<PoolRecord> created =
          OnePool(txn.exec_params(kSelectPoolByName, pool.name), pool.name);
      txn.commit();
      return created;
    }
    // Nothing inserted: the name or the request id is taken.
    if (!request_id.empty()) {
      const pqxx::result by_request =
          txn.exec_params(kSelectPoolNameByRequestId, request_id);
      if (!by_request.empty()) {
        const std::string created_name = by_request[0][0].as<std::string>();
        if (created_name != pool.name) {
          return absl::AlreadyExistsError(
              absl::StrCat("request_id '", request_id,
                           "' already created pool '", created_name, "'"));
        }
        // A retry of the call that created it: the original answer.
        return OnePool(txn.exec_params(kSelectPoolByName, pool.name),
                       pool.name);
      }
    }
    absl::StatusOr<PoolRecord> existing =
        OnePool(txn.exec_params(kSelectPoolByName, pool.name), pool.name);
    if (!existing.ok()) return existing.status();
    if (existing->pool != pool) {
      return absl::AlreadyExistsError(absl::StrCat(
          "a pool named '", pool.name, "' already exists with other settings"));
    }
    return existing;
  });
}

absl::StatusOr<PoolRecord> GetPool(DbSession& session,
                                   const std::string& name) {
  return session.Run(
      [&](pqxx::connection_base& c) -> absl::StatusOr<PoolRecord> {
        pqxx::read_transaction txn(c);
        return OnePool(txn.exec_params(kSelectPoolByName, name), name);
      });
}

absl::StatusOr<PoolPage> ListPools(DbSession& session, int page_size,
                                   const std::string& after_name) {
  return session.Run([&](pqxx::connection_base& c) -> absl::StatusOr<PoolPage> {
    pqxx::read_transaction txn(c);
    PoolPage page;
    page.pools = RecordsFromRows(
        txn.exec_params(kSelectPoolPage, after_name, page_size + 1));
    if (static_cast<int>(page.pools.size()) > page_size) {
      page.pools.resize(page_size);
      page.more = true;
    }
    return page;
  });
}

std::vector<PoolRecord> ReadAllPools(pqxx::transaction_base& txn) {
  return RecordsFromRows(txn.exec(kSelectAllPools));
}

std::vector<PoolRecord> ReadPoolsChangedSince(pqxx::transaction_base& txn,
                                              const TransactionHorizon& since) {
  return RecordsFromRows(
      txn.exec_params(kSelectChangedPools, since.ToText(), since.xmin));
}

absl::StatusOr<std::vector<PoolRecord>> ListAllPools(DbSession& session) {
  return session.Run(
      [&](pqxx::connection_base& c) -> absl::StatusOr<std::vector<PoolRecord>> {
        pqxx::read_transaction txn(c);
        return ReadAllPools(txn);
      });
}

absl::StatusOr<PoolRecord> UpdatePool(DbSession& session,
                                      const std::string& name,
                                      const PoolMutation& mutate) {
  return session.Run(
      [&](pqxx::connection_base& c) -> absl::StatusOr<PoolRecord> {
        pqxx::work txn(c);
        absl::StatusOr<PoolRecord> current =
            OnePool(txn.exec_params(kSelectPoolByNameForUpdate, name), name);
        if (!current.ok()) return current.status();
        core::Pool pool = current->pool;
        if (absl::Status status = mutate(pool); !status.ok()) return status;
        pool.name = current->pool.name;
        pool.sku_id = current->pool.sku_id;
        const NullableInt list_price(pool.list_price_micros_per_gpu_hour);
        txn.exec_params(kUpdatePool, pool.name, pool.node_count,
                        pool.gpus_per_node, core::FabricName(pool.fabric),
                        core::PoolPurposeName(pool.purpose), pool.exclusive,
                        pool.gpu_quota, pool.internal_rate_micros_per_gpu_hour,
                        list_price.param(), JsonObjectText(pool.labels),
                        core::InterNodeFabricName(pool.inter_node_fabric),
                        DoubleText(pool.inter_node_gb_s_per_gpu));
        absl::StatusOr<PoolRecord> updated =
            OnePool(txn.exec_params(kSelectPoolByName, name), name);
        txn.commit();
        return updated;
      });
}

}  // namespace placement::storage
