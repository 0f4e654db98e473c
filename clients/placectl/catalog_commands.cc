#include "clients/placectl/catalog_commands.h"

#include <iostream>
#include <random>

#include "absl/flags/flag.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/time/time.h"
#include "clients/common/channel.h"
#include "clients/common/rpc_errors.h"
#include "clients/common/table.h"
#include "clients/placectl/flags.h"
#include "clients/placectl/json.h"
#include "clients/placectl/pool_state_commands.h"
#include "core/money.h"
#include "placement/v1/catalog.grpc.pb.h"

PLACECTL_FLAG(std::string, name, "", "pools create", "the pool's name");
PLACECTL_FLAG(std::string, sku, "", "pools create",
              "the exact SKU, e.g. A100-SXM4-80GB (placectl skus)");
PLACECTL_FLAG(int, nodes, 1, "pools create|pools update", "node count");
PLACECTL_FLAG(int, gpus_per_node, 8, "pools create|pools update",
              "GPUs per node");
PLACECTL_FLAG(std::string, fabric, "", "pools create|pools update",
              "nvlink or pcie");
PLACECTL_FLAG(std::string, inter_node_fabric, "", "pools create|pools update",
              "between nodes: none, ethernet, roce or infiniband (unset: never "
              "declared; plans assume a conservative bandwidth and warn)");
PLACECTL_FLAG(double, inter_node_gb_s, 0, "pools create|pools update",
              "bandwidth between nodes per GPU, GB/s each way (0: not "
              "declared)");
PLACECTL_FLAG(std::string, purpose, "training", "pools create|pools update",
              "training or serving");
PLACECTL_FLAG(
    bool, exclusive, true, "pools create|pools update",
    "cards are not shared with other tenants (--exclusive=false: shared)");
PLACECTL_FLAG(int, quota, -1, "pools create|pools update",
              "most GPUs a plan may take (default: all)");
PLACECTL_FLAG(std::string, rate, "", "pools create|pools update",
              "internal rate per GPU-hour, e.g. 2.10");
PLACECTL_FLAG(std::string, list_price, "", "pools create|pools update",
              "list price per GPU-hour, e.g. 4.10");
PLACECTL_FLAG(std::string, labels, "", "pools create|pools update",
              "the pool's labels, comma-separated key=value");
PLACECTL_FLAG(std::string, request_id, "", "pools create",
              "idempotency key (default: a new random one)");

namespace placement::placectl {
namespace {

using clients::ContextWithDeadline;
using clients::DescribeError;
using clients::Table;

int Fail(const grpc::Status& status) {
  std::cerr << "placectl: " << DescribeError(status) << "\n";
  return 1;
}

int Usage(const std::string& text) {
  std::cerr << "usage: " << text << "\n";
  return 2;
}

std::string RandomRequestId() {
  std::random_device device;
  std::mt19937_64 random(device());
  return absl::StrFormat("%016x%016x", random(), random());
}

std::string Gb(double value) { return absl::StrFormat("%.0f", value); }

std::string Money(int64_t micros) { return core::FormatMicros(micros); }

std::string FabricText(v1::Fabric fabric) {
  switch (fabric) {
    case v1::FABRIC_NVLINK:
      return "nvlink";
    case v1::FABRIC_PCIE:
      return "pcie";
    default:
      return "-";
  }
}

std::string InterNodeText(const v1::Pool& pool) {
  std::string text;
  switch (pool.inter_node_fabric()) {
    case v1::INTER_NODE_FABRIC_NONE:
      return "none";
    case v1::INTER_NODE_FABRIC_ETHERNET:
      text = "ethernet";
      break;
    case v1::INTER_NODE_FABRIC_ROCE:
      text = "roce";
      break;
    case v1::INTER_NODE_FABRIC_INFINIBAND:
      text = "infiniband";
      break;
    default:
      text = "-";
  }
  if (pool.inter_node_bandwidth_gb_s_per_gpu() > 0) {
    absl::StrAppend(
        &text,
        absl::StrFormat(" %g GB/s", pool.inter_node_bandwidth_gb_s_per_gpu()));
  }
  return text;
}

std::string PurposeText(v1::PoolPurpose purpose) {
  switch (purpose) {
    case v1::POOL_PURPOSE_TRAINING:
      return "training";
    case v1::POOL_PURPOSE_SERVING:
      return "serving";
    default:
      return "-";
  }
}

std::string LabelsText(const v1::Pool& pool) {
  std::map<std::string, std::string> sorted(pool.labels().begin(),
                                            pool.labels().end());
  return sorted.empty() ? "-"
                        : absl::StrJoin(sorted, ",", absl::PairFormatter("="));
}

void PrintPools(const std::vector<v1::Pool>& pools) {
  Table table(
      {"NAME", "SKU", "NODES", "GPUS/NODE", "FABRIC", "INTER-NODE", "PURPOSE",
       "EXCLUSIVE", "QUOTA", "RATE/GPU-H", "LIST/GPU-H", "LABELS"},
      {false, false, true, true, false, false, false, false, true, true, true,
       false});
  for (const v1::Pool& pool : pools) {
    table.AddRow({pool.name(), pool.sku(), absl::StrCat(pool.node_count()),
                  absl::StrCat(pool.gpus_per_node()), FabricText(pool.fabric()),
                  InterNodeText(pool), PurposeText(pool.purpose()),
                  pool.exclusive() ? "yes" : "no",
                  absl::StrCat(pool.gpu_quota()),
                  Money(pool.internal_rate_micros_per_gpu_hour()),
                  pool.has_list_price_micros_per_gpu_hour()
                      ? Money(pool.list_price_micros_per_gpu_hour())
                      : "-",
                  LabelsText(pool)});
  }
  table.Print(std::cout);
}

// Which pool flags to read: every one (a new pool) or, `only_given`, those
// given on the command line (an update); each one read adds its field to
// `mask` when there is one.
struct WantedFlags {
  bool only_given;
  google::protobuf::FieldMask* mask;

  bool operator()(const char* flag, const char* field) const {
    if (only_given && !FlagGiven(flag)) return false;
    if (mask != nullptr) mask->add_paths(field);
    return true;
  }
};

// --fabric: nvlink or pcie ("" leaves it unset).
bool SetFabric(const std::string& fabric, v1::Pool* pool) {
  if (fabric == "nvlink") {
    pool->set_fabric(v1::FABRIC_NVLINK);
  } else if (fabric == "pcie") {
    pool->set_fabric(v1::FABRIC_PCIE);
  } else if (!fabric.empty()) {
    std::cerr << "placectl: --fabric must be nvlink or pcie\n";
    return false;
  }
  return true;
}

// --inter_node_fabric ("" leaves it unset).
bool SetInterNodeFabric(const std::string& fabric, v1::Pool* pool) {
  if (fabric == "none") {
    pool->set_inter_node_fabric(v1::INTER_NODE_FABRIC_NONE);
  } else if (fabric == "ethernet") {
    pool->set_inter_node_fabric(v1::INTER_NODE_FABRIC_ETHERNET);
  } else if (fabric == "roce") {
    pool->set_inter_node_fabric(v1::INTER_NODE_FABRIC_ROCE);
  } else if (fabric == "infiniband") {
    pool->set_inter_node_fabric(v1::INTER_NODE_FABRIC_INFINIBAND);
  } else if (!fabric.empty()) {
    std::cerr << "placectl: --inter_node_fabric must be none, ethernet, "
                 "roce or infiniband\n";
    return false;
  }
  return true;
}

// The pool's hardware: nodes, GPUs per node and the fabrics between them.
bool HardwareFromFlags(const WantedFlags& wanted, v1::Pool* pool) {
  if (wanted("nodes", "node_count"))
    pool->set_node_count(absl::GetFlag(FLAGS_nodes));
  if (wanted("gpus_per_node", "gpus_per_node")) {
    pool->set_gpus_per_node(absl::GetFlag(FLAGS_gpus_per_node));
  }
  if (wanted("fabric", "fabric") &&
      !SetFabric(absl::GetFlag(FLAGS_fabric), pool)) {
    return false;
  }
  if (wanted("inter_node_fabric", "inter_node_fabric") &&
      !SetInterNodeFabric(absl::GetFlag(FLAGS_inter_node_fabric), pool)) {
    return false;
  }
  if (wanted("inter_node_gb_s", "inter_node_bandwidth_gb_s_per_gpu")) {
    pool->set_inter_node_bandwidth_gb_s_per_gpu(
        absl::GetFlag(FLAGS_inter_node_gb_s));
  }
  return true;
}

// What the pool is for and how much of it a plan may take (the quota's
// default is every GPU of the hardware read before).
bool UseFromFlags(const WantedFlags& wanted, v1::Pool* pool) {
  if (wanted("purpose", "purpose")) {
    const std::string purpose = absl::GetFlag(FLAGS_purpose);
    if (purpose == "training") {
      pool->set_purpose(v1::POOL_PURPOSE_TRAINING);
    } else if (purpose == "serving") {
      pool->set_purpose(v1::POOL_PURPOSE_SERVING);
    } else {
      std::cerr << "placectl: --purpose must be training or serving\n";
      return false;
    }
  }
  if (wanted("exclusive", "exclusive")) {
    pool->set_exclusive(absl::GetFlag(FLAGS_exclusive));
  }
  if (wanted("quota", "gpu_quota")) {
    const int quota = absl::GetFlag(FLAGS_quota);
    pool->set_gpu_quota(
        quota >= 0 ? quota : pool->node_count() * pool->gpus_per_node());
  }
  return true;
}

// The internal rate and the list price per GPU-hour.
bool PricesFromFlags(const WantedFlags& wanted, v1::Pool* pool) {
  if (wanted("rate", "internal_rate_micros_per_gpu_hour")) {
    absl::StatusOr<int64_t> rate = core::ParseMicros(absl::GetFlag(FLAGS_rate));
    if (!rate.ok()) {
      std::cerr << "placectl: --rate: " << rate.status().message() << "\n";
      return false;
    }
    pool->set_internal_rate_micros_per_gpu_hour(*rate);
  }
  if (wanted("list_price", "list_price_micros_per_gpu_hour") &&
      !absl::GetFlag(FLAGS_list_price).empty()) {
    absl::StatusOr<int64_t> price =
        core::ParseMicros(absl::GetFlag(FLAGS_list_price));
    if (!price.ok()) {
      std::cerr << "placectl: --list_price: " << price.status().message()
                << "\n";
      return false;
    }
    pool->set_list_price_micros_per_gpu_hour(*price);
  }
  return true;
}

// Reads the pool flags into `pool`; with `only_given`, only the flags given on
// the command line, each added to `mask`. Returns false (after printing why)
// on a malformed flag.
bool PoolFromFlags(bool only_given, v1::Pool* pool,
                   google::protobuf::FieldMask* mask) {
  const WantedFlags wanted{only_given, mask};
  if (!HardwareFromFlags(wanted, pool) || !UseFromFlags(wanted, pool) ||
      !PricesFromFlags(wanted, pool)) {
    return false;
  }
  if (wanted("labels", "labels")) {
    for (absl::string_view pair :
         absl::StrSplit(absl::GetFlag(FLAGS_labels), ',', absl::SkipEmpty())) {
      std::pair<std::string, std::string> kv =
          absl::StrSplit(pair, absl::MaxSplits('=', 1));
      (*pool->mutable_labels())[kv.first] = kv.second;
    }
  }
  return true;
}

int PoolsList(v1::CatalogService::Stub& stub) {
  std::vector<v1::Pool> pools;
  v1::ListPoolsResponse all;
  std::string token;
  do {
    v1::ListPoolsRequest request;
    request.set_page_token(token);
    v1::ListPoolsResponse response;
    grpc::Status status =
        stub.ListPools(ContextWithDeadline().get(), request, &response);
    if (!status.ok()) return Fail(status);
    for (const v1::Pool& pool : response.pools()) {
      pools.push_back(pool);
      *all.add_pools() = pool;
    }
    token = response.next_page_token();
  } while (!token.empty());
  if (absl::GetFlag(FLAGS_json)) {
    std::cout << ToJson(all);
  } else {
    PrintPools(pools);
  }
  return 0;
}

int PrintOnePool(const v1::Pool& pool) {
  if (absl::GetFlag(FLAGS_json)) {
    std::cout << ToJson(pool);
  } else {
    PrintPools({pool});
  }
  return 0;
}

}  // namespace

int RunSkus(const std::vector<std::string>& args) {
  auto stub =
      v1::CatalogService::NewStub(clients::MakeChannel(ServerAddress()));
  if (args.size() == 1) {
    v1::GetSkuRequest request;
    request.set_name(args[0]);
    v1::GetSkuResponse response;
    grpc::Status status =
        stub->GetSku(ContextWithDeadline().get(), request, &response);
    if (!status.ok()) return Fail(status);
    if (absl::GetFlag(FLAGS_json)) {
      std::cout << ToJson(response.sku());
      return 0;
    }
    const v1::Sku& sku = response.sku();
    std::cout << sku.name() << ": " << sku.architecture() << ", "
              << Gb(sku.memory_gb()) << " GB " << sku.memory_type() << " at "
              << Gb(sku.memory_bandwidth_gb_s()) << " GB/s, "
              << sku.form_factor() << ", NVLink "
              << (sku.max_nvlink_gb_s() > 0
                      ? absl::StrCat(Gb(sku.max_nvlink_gb_s()), " GB/s")
                      : "none")
              << ", " << Gb(sku.bf16_dense_tflops()) << " dense BF16 TFLOPS\n";
    return 0;
  }
  if (!args.empty()) return Usage("placectl skus [NAME]");

  v1::ListSkusResponse all;
  std::string token;
  do {
    v1::ListSkusRequest request;
    request.set_page_token(token);
    v1::ListSkusResponse response;
    grpc::Status status =
        stub->ListSkus(ContextWithDeadline().get(), request, &response);
    if (!status.ok()) return Fail(status);
    for (const v1::Sku& sku : response.skus()) *all.add_skus() = sku;
    token = response.next_page_token();
  } while (!token.empty());
  if (absl::GetFlag(FLAGS_json)) {
    std::cout << ToJson(all);
    return 0;
  }
  Table table({"SKU", "ARCH", "MEMORY GB", "TYPE", "BW GB/S", "FORM",
               "NVLINK GB/S", "BF16 TFLOPS", "FP8 TFLOPS"},
              {false, false, true, false, true, false, true, true, true});
  for (const v1::Sku& sku : all.skus()) {
    table.AddRow(
        {sku.name(), sku.architecture(), Gb(sku.memory_gb()), sku.memory_type(),
         Gb(sku.memory_bandwidth_gb_s()), sku.form_factor(),
         sku.max_nvlink_gb_s() > 0 ? Gb(sku.max_nvlink_gb_s()) : "-",
         Gb(sku.bf16_dense_tflops()),
         sku.fp8_dense_tflops() > 0 ? Gb(sku.fp8_dense_tflops()) : "-"});
  }
  table.Print(std::cout);
  return 0;
}

int RunPools(const std::vector<std::string>& args) {
  const char* usage =
      "placectl pools list | get NAME | create --name N --sku S --fabric F "
      "[--inter_node_fabric none|ethernet|roce|infiniband] "
      "[--inter_node_gb_s G] --rate R [...] | update NAME [--quota Q ...] | "
      "state NAME [--gpu_counts 1,8] | report FILE|-";
  if (args.empty()) return Usage(usage);
  auto stub =
      v1::CatalogService::NewStub(clients::MakeChannel(ServerAddress()));
  const std::string& verb = args[0];
  if (verb == "list" && args.size() == 1) return PoolsList(*stub);
  if (verb == "state") return RunPoolState({args.begin() + 1, args.end()});
  if (verb == "report") return RunPoolReport({args.begin() + 1, args.end()});
  if (verb == "get" && args.size() == 2) {
    v1::GetPoolRequest request;
    request.set_name(args[1]);
    v1::GetPoolResponse response;
    grpc::Status status =
        stub->GetPool(ContextWithDeadline().get(), request, &response);
    if (!status.ok()) return Fail(status);
    return PrintOnePool(response.pool());
  }
  if (verb == "create" && args.size() == 1) {
    v1::CreatePoolRequest request;
    v1::Pool* pool = request.mutable_pool();
    pool->set_name(absl::GetFlag(FLAGS_name));
    pool->set_sku(absl::GetFlag(FLAGS_sku));
    if (!PoolFromFlags(/*only_given=*/false, pool, nullptr)) return 2;
    request.set_request_id(absl::GetFlag(FLAGS_request_id).empty()
                               ? RandomRequestId()
                               : absl::GetFlag(FLAGS_request_id));
    v1::CreatePoolResponse response;
    grpc::Status status =
        stub->CreatePool(ContextWithDeadline().get(), request, &response);
    if (!status.ok()) return Fail(status);
    return PrintOnePool(response.pool());
  }
  if (verb == "update" && args.size() == 2) {
    v1::UpdatePoolRequest request;
    request.mutable_pool()->set_name(args[1]);
    if (!PoolFromFlags(/*only_given=*/true, request.mutable_pool(),
                       request.mutable_update_mask())) {
      return 2;
    }
    if (request.update_mask().paths().empty()) {
      std::cerr << "placectl: pools update: give at least one field flag\n";
      return 2;
    }
    v1::UpdatePoolResponse response;
    grpc::Status status =
        stub->UpdatePool(ContextWithDeadline().get(), request, &response);
    if (!status.ok()) return Fail(status);
    return PrintOnePool(response.pool());
  }
  return Usage(usage);
}

}  // namespace placement::placectl
