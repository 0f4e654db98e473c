#include "storage/stores/sku_store.h"

namespace placement::storage {
namespace {

#define PLACEMENT_SKU_SELECT                                        \
  "SELECT sku_id, family, architecture, memory_gb, memory_type, "   \
  "memory_bandwidth_gb_s, form_factor, max_nvlink_gb_s, pcie_gen, " \
  "bf16_dense_tflops, coalesce(fp8_dense_tflops, 0), tdp_w FROM skus "

constexpr char kListSkus[] = PLACEMENT_SKU_SELECT "ORDER BY sku_id";

constexpr char kListChangedSkus[] = PLACEMENT_SKU_SELECT
    "WHERE" PLACEMENT_CHANGED_SINCE("change_xid") "ORDER BY sku_id";

#undef PLACEMENT_SKU_SELECT

std::vector<core::GpuSku> SkusFromRows(const pqxx::result& rows) {
  std::vector<core::GpuSku> skus;
  for (const pqxx::row& row : rows) {
    core::GpuSku sku;
    sku.id = row[0].as<std::string>();
    sku.family = row[1].as<std::string>();
    sku.architecture = row[2].as<std::string>();
    sku.memory_gb = row[3].as<double>();
    sku.memory_type = row[4].as<std::string>();
    sku.memory_bandwidth_gb_s = row[5].as<double>();
    sku.form_factor = row[6].as<std::string>();
    sku.max_nvlink_gb_s = row[7].as<double>();
    sku.pcie_gen = row[8].as<int>();
    sku.bf16_dense_tflops = row[9].as<double>();
    sku.fp8_dense_tflops = row[10].as<double>();
    sku.tdp_w = row[11].as<int>();
    skus.push_back(std::move(sku));
  }
  return skus;
}

}  // namespace

std::vector<core::GpuSku> ReadSkus(pqxx::transaction_base& txn) {
  return SkusFromRows(txn.exec(kListSkus));
}

std::vector<core::GpuSku> ReadSkusChangedSince(
    pqxx::transaction_base& txn, const TransactionHorizon& since) {
  return SkusFromRows(
      txn.exec_params(kListChangedSkus, since.ToText(), since.xmin));
}

absl::StatusOr<std::vector<core::GpuSku>> ListSkus(DbSession& session) {
  return session.Run([](pqxx::connection_base& c)
                         -> absl::StatusOr<std::vector<core::GpuSku>> {
    pqxx::read_transaction txn(c);
    return ReadSkus(txn);
  });
}

}  // namespace placement::storage
