// CatalogService over loopback gRPC on an in-process server, against a real
// PostgreSQL database: every validation rule, idempotency, exact SKU names,
// pagination.
#include <limits>
#include <memory>

#include "gmock/gmock.h"
#include "google/rpc/error_details.pb.h"
#include "google/rpc/status.pb.h"
#include "gtest/gtest.h"
#include "placement/v1/catalog.grpc.pb.h"
#include "tests/support/fixtures.h"
#include "tests/support/in_process_server.h"

namespace placement {
namespace {

using ::placement::testing::InProcessServer;
using ::placement::testing::ViolatedFields;
using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::SizeIs;

v1::Pool ValidPool(const std::string& name) {
  v1::Pool pool;
  pool.set_name(name);
  pool.set_sku("A100-SXM4-80GB");
  pool.set_node_count(2);
  pool.set_gpus_per_node(8);
  pool.set_fabric(v1::FABRIC_NVLINK);
  pool.set_purpose(v1::POOL_PURPOSE_TRAINING);
  pool.set_exclusive(true);
  pool.set_gpu_quota(16);
  pool.set_internal_rate_micros_per_gpu_hour(2'100'000);
  (*pool.mutable_labels())["team"] = "ml-platform";
  return pool;
}

class CatalogServiceTest : public ::testing::Test {
 protected:
  CatalogServiceTest()
      : stub_(v1::CatalogService::NewStub(server_.channel())) {}

  std::unique_ptr<grpc::ClientContext> Context() { return testing::Deadline(); }

  grpc::Status Create(const v1::Pool& pool, const std::string& request_id,
                      v1::CreatePoolResponse* response = nullptr) {
    v1::CreatePoolRequest request;
    *request.mutable_pool() = pool;
    request.set_request_id(request_id);
    v1::CreatePoolResponse ignored;
    return stub_->CreatePool(Context().get(), request,
                             response != nullptr ? response : &ignored);
  }

  // Everything stored about pools, to prove a refused request changed nothing.
  std::string PoolsSnapshot() {
    return server_.db().QueryValue(
        "SELECT count(*) || ':' || md5(coalesce(string_agg(p::text, '|' "
        "ORDER BY name), '')) FROM pools p");
  }

  InProcessServer server_;
  std::unique_ptr<v1::CatalogService::Stub> stub_;
};

TEST_F(CatalogServiceTest, ListsTheSeededCatalog) {
  v1::ListSkusRequest request;
  v1::ListSkusResponse response;
  ASSERT_TRUE(stub_->ListSkus(Context().get(), request, &response).ok());
  ASSERT_THAT(response.skus(), SizeIs(11));
  EXPECT_TRUE(response.next_page_token().empty());

  // Pages of 4 visit the same 11 SKUs in order.
  std::vector<std::string> paged;
  std::string token;
  do {
    v1::ListSkusRequest page_request;
    page_request.set_page_size(4);
    page_request.set_page_token(token);
    v1::ListSkusResponse page;
    ASSERT_TRUE(stub_->ListSkus(Context().get(), page_request, &page).ok());
    for (const auto& sku : page.skus()) paged.push_back(sku.name());
    token = page.next_page_token();
  } while (!token.empty());
  ASSERT_THAT(paged, SizeIs(11));
  for (int i = 0; i < 11; ++i) EXPECT_EQ(paged[i], response.skus(i).name());
}

TEST_F(CatalogServiceTest, GetSkuNeedsTheExactName) {
  v1::GetSkuRequest request;
  v1::GetSkuResponse response;
  request.set_name("l40s-pcie-48gb");
  ASSERT_TRUE(stub_->GetSku(Context().get(), request, &response).ok());
  EXPECT_EQ(response.sku().name(), "L40S-PCIE-48GB");
  EXPECT_EQ(response.sku().max_nvlink_gb_s(), 0);

  request.set_name("A100");
  grpc::Status status = stub_->GetSku(Context().get(), request, &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(status.error_message(),
              AllOf(HasSubstr("A100-PCIE-40GB"), HasSubstr("A100-PCIE-80GB"),
                    HasSubstr("A100-SXM4-40GB"), HasSubstr("A100-SXM4-80GB")));
  EXPECT_THAT(ViolatedFields(status), ElementsAre("name"));

  request.set_name("a100 80g");
  status = stub_->GetSku(Context().get(), request, &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(status.error_message(),
              HasSubstr("A100-PCIE-80GB, A100-SXM4-80GB"));

  request.set_name("MI300X");
  EXPECT_EQ(stub_->GetSku(Context().get(), request, &response).error_code(),
            grpc::StatusCode::NOT_FOUND);
}

TEST_F(CatalogServiceTest, CreateIsIdempotentOnRequestId) {
  v1::CreatePoolResponse first;
  ASSERT_TRUE(Create(ValidPool("a100-train"), "req-1", &first).ok());
  v1::CreatePoolResponse retry;
  ASSERT_TRUE(Create(ValidPool("a100-train"), "req-1", &retry).ok());
  EXPECT_EQ(retry.pool().SerializeAsString(), first.pool().SerializeAsString());

  v1::Pool other = ValidPool("a100-train");
  other.set_gpu_quota(4);
  const std::string before = PoolsSnapshot();
  EXPECT_EQ(Create(other, "req-2").error_code(),
            grpc::StatusCode::ALREADY_EXISTS);
  EXPECT_EQ(PoolsSnapshot(), before);
}

TEST_F(CatalogServiceTest, SkuNameIsResolvedExactlyOrRejected) {
  v1::Pool pool = ValidPool("a100-train");
  pool.set_sku("a100-sxm4-80gb");
  v1::CreatePoolResponse response;
  ASSERT_TRUE(Create(pool, "", &response).ok());
  EXPECT_EQ(response.pool().sku(), "A100-SXM4-80GB");

  pool.set_name("ambiguous");
  pool.set_sku("A100 80GB");
  const std::string before = PoolsSnapshot();
  grpc::Status status = Create(pool, "");
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(ViolatedFields(status), ElementsAre("pool.sku"));
  EXPECT_THAT(status.error_message(), HasSubstr("A100-SXM4-80GB"));
  EXPECT_EQ(PoolsSnapshot(), before);
}

// One case per validation rule: the named field, and nothing stored changes.
struct RuleCase {
  const char* rule;
  std::function<void(v1::Pool&)> breaks;
  const char* field;
};

void PrintTo(const RuleCase& rule, std::ostream* out) { *out << rule.rule; }

class PoolRuleTest : public CatalogServiceTest,
                     public ::testing::WithParamInterface<RuleCase> {};

TEST_P(PoolRuleTest, CreateAndUpdateAreRefusedAndChangeNothing) {
  ASSERT_TRUE(Create(ValidPool("existing"), "req-existing").ok());
  const std::string before = PoolsSnapshot();

  v1::Pool bad = ValidPool("new-pool");
  GetParam().breaks(bad);
  grpc::Status status = Create(bad, "req-bad");
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT)
      << status.error_message();
  EXPECT_THAT(ViolatedFields(status), ElementsAre(GetParam().field));
  EXPECT_EQ(PoolsSnapshot(), before);

  // The same broken value as an update of the existing pool (name and SKU
  // are not updatable, so those rules apply to creation only).
  if (bad.name() == "new-pool" && bad.sku() == ValidPool("x").sku()) {
    v1::UpdatePoolRequest update;
    *update.mutable_pool() = bad;
    update.mutable_pool()->set_name("existing");
    v1::UpdatePoolResponse response;
    status = stub_->UpdatePool(Context().get(), update, &response);
    EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
    EXPECT_THAT(ViolatedFields(status), ElementsAre(GetParam().field));
    EXPECT_EQ(PoolsSnapshot(), before);
  }
}

INSTANTIATE_TEST_SUITE_P(
    EveryRule, PoolRuleTest,
    ::testing::Values(
        RuleCase{"name_format", [](v1::Pool& p) { p.set_name("Bad Name"); },
                 "pool.name"},
        RuleCase{"unknown_sku", [](v1::Pool& p) { p.set_sku("B200"); },
                 "pool.sku"},
        RuleCase{"node_count", [](v1::Pool& p) { p.set_node_count(0); },
                 "pool.node_count"},
        RuleCase{"gpus_per_node", [](v1::Pool& p) { p.set_gpus_per_node(17); },
                 "pool.gpus_per_node"},
        RuleCase{"fabric_required",
                 [](v1::Pool& p) { p.set_fabric(v1::FABRIC_UNSPECIFIED); },
                 "pool.fabric"},
        RuleCase{"sxm_cannot_be_pcie_only",
                 [](v1::Pool& p) { p.set_fabric(v1::FABRIC_PCIE); },
                 "pool.fabric"},
        RuleCase{"no_nvlink_card_on_nvlink_fabric",
                 [](v1::Pool& p) { p.set_sku("L40S-PCIE-48GB"); },
                 "pool.fabric"},
        RuleCase{
            "purpose_required",
            [](v1::Pool& p) { p.set_purpose(v1::POOL_PURPOSE_UNSPECIFIED); },
            "pool.purpose"},
        RuleCase{"quota_within_pool", [](v1::Pool& p) { p.set_gpu_quota(17); },
                 "pool.gpu_quota"},
        RuleCase{
            "rate_positive",
            [](v1::Pool& p) { p.set_internal_rate_micros_per_gpu_hour(0); },
            "pool.internal_rate_micros_per_gpu_hour"},
        RuleCase{"list_price_positive",
                 [](v1::Pool& p) { p.set_list_price_micros_per_gpu_hour(-1); },
                 "pool.list_price_micros_per_gpu_hour"},
        RuleCase{"label_format",
                 [](v1::Pool& p) { (*p.mutable_labels())["bad key"] = "v"; },
                 "pool.labels"},
        RuleCase{"inter_node_fabric_undeclared_number",
                 [](v1::Pool& p) {
                   p.set_inter_node_fabric(static_cast<v1::InterNodeFabric>(9));
                 },
                 "pool.inter_node_fabric"},
        RuleCase{"fabric_undeclared_number",
                 [](v1::Pool& p) { p.set_fabric(static_cast<v1::Fabric>(3)); },
                 "pool.fabric"},
        RuleCase{"inter_node_bandwidth_not_negative",
                 [](v1::Pool& p) {
                   p.set_inter_node_fabric(v1::INTER_NODE_FABRIC_INFINIBAND);
                   p.set_inter_node_bandwidth_gb_s_per_gpu(-1);
                 },
                 "pool.inter_node_bandwidth_gb_s_per_gpu"},
        RuleCase{"inter_node_bandwidth_in_gb_not_gbit",
                 [](v1::Pool& p) {
                   p.set_inter_node_fabric(v1::INTER_NODE_FABRIC_INFINIBAND);
                   p.set_inter_node_bandwidth_gb_s_per_gpu(400);
                 },
                 "pool.inter_node_bandwidth_gb_s_per_gpu"},
        RuleCase{"inter_node_bandwidth_finite",
                 [](v1::Pool& p) {
                   p.set_inter_node_fabric(v1::INTER_NODE_FABRIC_ROCE);
                   p.set_inter_node_bandwidth_gb_s_per_gpu(
                       std::numeric_limits<double>::infinity());
                 },
                 "pool.inter_node_bandwidth_gb_s_per_gpu"},
        RuleCase{"inter_node_none_has_no_bandwidth",
                 [](v1::Pool& p) {
                   p.set_inter_node_fabric(v1::INTER_NODE_FABRIC_NONE);
                   p.set_inter_node_bandwidth_gb_s_per_gpu(25);
                 },
                 "pool.inter_node_bandwidth_gb_s_per_gpu"},
        RuleCase{
            "inter_node_bandwidth_needs_its_fabric",
            [](v1::Pool& p) { p.set_inter_node_bandwidth_gb_s_per_gpu(25); },
            "pool.inter_node_fabric"}),
    [](const ::testing::TestParamInfo<RuleCase>& info) {
      return std::string(info.param.rule);
    });

TEST_F(CatalogServiceTest,
       InterNodeFabricRoundTripsThroughCreateUpdateGetList) {
  v1::Pool pool = ValidPool("a100-multi");
  pool.set_inter_node_fabric(v1::INTER_NODE_FABRIC_INFINIBAND);
  pool.set_inter_node_bandwidth_gb_s_per_gpu(25);
  v1::CreatePoolResponse created;
  ASSERT_TRUE(Create(pool, "req-1", &created).ok());
  EXPECT_EQ(created.pool().inter_node_fabric(),
            v1::INTER_NODE_FABRIC_INFINIBAND);
  EXPECT_EQ(created.pool().inter_node_bandwidth_gb_s_per_gpu(), 25);

  // Only the fabric between nodes changes; NONE with the old bandwidth is a
  // conflict, so both go together.
  v1::UpdatePoolRequest update;
  update.mutable_pool()->set_name("a100-multi");
  update.mutable_pool()->set_inter_node_fabric(v1::INTER_NODE_FABRIC_NONE);
  update.mutable_update_mask()->add_paths("inter_node_fabric");
  v1::UpdatePoolResponse updated;
  const std::string before = PoolsSnapshot();
  grpc::Status status = stub_->UpdatePool(Context().get(), update, &updated);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(ViolatedFields(status),
              ElementsAre("pool.inter_node_bandwidth_gb_s_per_gpu"));
  EXPECT_EQ(PoolsSnapshot(), before);
  update.mutable_update_mask()->add_paths("inter_node_bandwidth_gb_s_per_gpu");
  ASSERT_TRUE(stub_->UpdatePool(Context().get(), update, &updated).ok());
  EXPECT_EQ(updated.pool().inter_node_fabric(), v1::INTER_NODE_FABRIC_NONE);
  EXPECT_EQ(updated.pool().inter_node_bandwidth_gb_s_per_gpu(), 0);
  EXPECT_EQ(updated.pool().node_count(), 2);

  v1::GetPoolRequest get;
  get.set_name("a100-multi");
  v1::GetPoolResponse got;
  ASSERT_TRUE(stub_->GetPool(Context().get(), get, &got).ok());
  EXPECT_EQ(got.pool().inter_node_fabric(), v1::INTER_NODE_FABRIC_NONE);
  v1::ListPoolsResponse listed;
  ASSERT_TRUE(
      stub_->ListPools(Context().get(), v1::ListPoolsRequest(), &listed).ok());
  ASSERT_THAT(listed.pools(), SizeIs(1));
  EXPECT_EQ(listed.pools(0).inter_node_fabric(), v1::INTER_NODE_FABRIC_NONE);

  // A pool created before the field existed reads as never declared.
  ASSERT_TRUE(Create(ValidPool("a100-plain"), "").ok());
  get.set_name("a100-plain");
  ASSERT_TRUE(stub_->GetPool(Context().get(), get, &got).ok());
  EXPECT_EQ(got.pool().inter_node_fabric(), v1::INTER_NODE_FABRIC_UNSPECIFIED);
  EXPECT_EQ(got.pool().inter_node_bandwidth_gb_s_per_gpu(), 0);
}

TEST_F(CatalogServiceTest, UpdateChangesOnlyMaskedFieldsAndNeverTheSku) {
  ASSERT_TRUE(Create(ValidPool("a100-train"), "").ok());
  v1::UpdatePoolRequest request;
  request.mutable_pool()->set_name("a100-train");
  request.mutable_pool()->set_gpu_quota(8);
  request.mutable_pool()->set_node_count(99);  // not in the mask: ignored
  request.mutable_update_mask()->add_paths("gpu_quota");
  v1::UpdatePoolResponse response;
  ASSERT_TRUE(stub_->UpdatePool(Context().get(), request, &response).ok());
  EXPECT_EQ(response.pool().gpu_quota(), 8);
  EXPECT_EQ(response.pool().node_count(), 2);

  const std::string before = PoolsSnapshot();
  request.mutable_update_mask()->add_paths("sku");
  grpc::Status status = stub_->UpdatePool(Context().get(), request, &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(ViolatedFields(status), ElementsAre("update_mask"));
  EXPECT_EQ(PoolsSnapshot(), before);

  request.mutable_pool()->set_name("missing");
  request.mutable_update_mask()->clear_paths();
  request.mutable_update_mask()->add_paths("gpu_quota");
  EXPECT_EQ(stub_->UpdatePool(Context().get(), request, &response).error_code(),
            grpc::StatusCode::NOT_FOUND);
}

TEST_F(CatalogServiceTest, ListPoolsPagesAndRejectsForgedTokens) {
  for (const char* name : {"p-3", "p-1", "p-5", "p-2", "p-4"}) {
    ASSERT_TRUE(Create(ValidPool(name), "").ok());
  }
  std::vector<std::string> names;
  std::string token;
  int pages = 0;
  do {
    v1::ListPoolsRequest request;
    request.set_page_size(2);
    request.set_page_token(token);
    v1::ListPoolsResponse response;
    ASSERT_TRUE(stub_->ListPools(Context().get(), request, &response).ok());
    for (const auto& pool : response.pools()) names.push_back(pool.name());
    token = response.next_page_token();
    ++pages;
  } while (!token.empty());
  EXPECT_THAT(names, ElementsAre("p-1", "p-2", "p-3", "p-4", "p-5"));
  EXPECT_EQ(pages, 3);

  v1::ListPoolsRequest forged;
  forged.set_page_token("not-a-token");
  v1::ListPoolsResponse response;
  grpc::Status status = stub_->ListPools(Context().get(), forged, &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(ViolatedFields(status), ElementsAre("page_token"));

  v1::ListPoolsRequest negative;
  negative.set_page_size(-1);
  EXPECT_EQ(stub_->ListPools(Context().get(), negative, &response).error_code(),
            grpc::StatusCode::INVALID_ARGUMENT);
}

TEST_F(CatalogServiceTest, GetPoolOfUnknownNameIsNotFound) {
  v1::GetPoolRequest request;
  request.set_name("nope");
  v1::GetPoolResponse response;
  EXPECT_EQ(stub_->GetPool(Context().get(), request, &response).error_code(),
            grpc::StatusCode::NOT_FOUND);
}

}  // namespace
}  // namespace placement
