// placementd as a process: health that follows the database, data that
// survives a restart, graceful shutdown, and a /metrics exposition that
// promtool accepts.
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "core/models/memory_model.h"
#include "gmock/gmock.h"
#include "grpc/health/v1/health.grpc.pb.h"
#include "gtest/gtest.h"
#include "placement/v1/catalog.grpc.pb.h"
#include "tests/support/api_client.h"
#include "tests/support/fixtures.h"
#include "tests/support/placementd_process.h"
#include "tests/support/private_cluster.h"
#include "tests/support/test_database.h"

namespace placement {
namespace {

using ::placement::testing::PlacementdProcess;
using ::placement::testing::PrivateCluster;
using ::placement::testing::RunCommand;
using ::placement::testing::SourceDir;
using ::placement::testing::TestDatabase;
using ::testing::HasSubstr;

std::unique_ptr<grpc::ClientContext> Context(int seconds = 10) {
  auto context = std::make_unique<grpc::ClientContext>();
  context->set_deadline(std::chrono::system_clock::now() +
                        std::chrono::seconds(seconds));
  return context;
}

std::unique_ptr<PlacementdProcess> StartPlacementd(const std::string& url) {
  absl::StatusOr<std::unique_ptr<PlacementdProcess>> process =
      PlacementdProcess::Start(url);
  EXPECT_TRUE(process.ok()) << process.status();
  return process.ok() ? *std::move(process) : nullptr;
}

v1::Pool L40sPool() {
  v1::Pool pool;
  pool.set_name("l40s-adapters");
  pool.set_sku("L40S-PCIE-48GB");
  pool.set_node_count(4);
  pool.set_gpus_per_node(4);
  pool.set_fabric(v1::FABRIC_PCIE);
  pool.set_purpose(v1::POOL_PURPOSE_TRAINING);
  pool.set_exclusive(true);
  pool.set_gpu_quota(8);
  pool.set_internal_rate_micros_per_gpu_hour(1'100'000);
  return pool;
}

TEST(PlacementdTest, NotServingUntilTheSchemaIsCurrent) {
  TestDatabase db;  // not migrated
  auto placementd = StartPlacementd(db.url());
  ASSERT_NE(placementd, nullptr);
  EXPECT_TRUE(placementd->WaitForHealth(false, absl::Seconds(5)));
  std::string output;
  ASSERT_EQ(RunCommand(absl::StrCat(testing::PlacementdPath(),
                                    " migrate up --database_url='", db.url(),
                                    "' 2>&1"),
                       &output),
            0)
      << output;
  EXPECT_TRUE(placementd->WaitForHealth(true, absl::Seconds(10)))
      << placementd->LogTail();
}

TEST(PlacementdTest, PoolsSurviveARestartAndShutdownIsClean) {
  TestDatabase db;
  db.Migrate();
  auto placementd = StartPlacementd(db.url());
  ASSERT_NE(placementd, nullptr);
  ASSERT_TRUE(placementd->WaitForHealth(true, absl::Seconds(10)));
  {
    auto stub = v1::CatalogService::NewStub(placementd->channel());
    v1::CreatePoolRequest request;
    *request.mutable_pool() = L40sPool();
    request.set_request_id("create-l40s");
    v1::CreatePoolResponse response;
    grpc::Status status = stub->CreatePool(Context().get(), request, &response);
    ASSERT_TRUE(status.ok()) << status.error_message();
  }
  EXPECT_EQ(placementd->Stop(SIGTERM, absl::Seconds(15)), 0)
      << placementd->LogTail();

  placementd = StartPlacementd(db.url());
  ASSERT_NE(placementd, nullptr);
  ASSERT_TRUE(placementd->WaitForHealth(true, absl::Seconds(10)));
  auto stub = v1::CatalogService::NewStub(placementd->channel());
  v1::GetPoolRequest request;
  request.set_name("l40s-adapters");
  v1::GetPoolResponse response;
  ASSERT_TRUE(stub->GetPool(Context().get(), request, &response).ok());
  EXPECT_EQ(response.pool().sku(), "L40S-PCIE-48GB");
  EXPECT_EQ(response.pool().gpu_quota(), 8);
  EXPECT_EQ(placementd->Stop(SIGINT, absl::Seconds(15)), 0);
}

TEST(PlacementdTest, HealthFollowsTheDatabaseWithoutARestart) {
  PrivateCluster cluster;
  ASSERT_FALSE(cluster.url().empty());
  std::string output;
  ASSERT_EQ(RunCommand(absl::StrCat(testing::PlacementdPath(),
                                    " migrate up --database_url='",
                                    cluster.url(), "' 2>&1"),
                       &output),
            0)
      << output;
  auto placementd = StartPlacementd(cluster.url());
  ASSERT_NE(placementd, nullptr);
  ASSERT_TRUE(placementd->WaitForHealth(true, absl::Seconds(10)));
  // Each served service answers by its name too (per-service probes), and
  // follows the database as the server does.
  const std::vector<std::string> services = {
      "placement.v1.PlacementService", "placement.v1.CatalogService",
      "placement.v1.TelemetryService", "placement.v1.CostService"};
  for (const std::string& service : services) {
    EXPECT_TRUE(placementd->WaitForHealth(true, absl::Seconds(5), service))
        << service;
  }
  {
    auto health = grpc::health::v1::Health::NewStub(placementd->channel());
    grpc::health::v1::HealthCheckRequest unknown;
    unknown.set_service("placement.v1.NoSuchService");
    grpc::health::v1::HealthCheckResponse answer;
    EXPECT_EQ(health->Check(Context().get(), unknown, &answer).error_code(),
              grpc::StatusCode::NOT_FOUND);
  }
  auto stub = v1::CatalogService::NewStub(placementd->channel());
  v1::ListSkusRequest request;
  v1::ListSkusResponse response;
  ASSERT_TRUE(stub->ListSkus(Context().get(), request, &response).ok());

  for (const char* mode : {"fast", "immediate"}) {
    SCOPED_TRACE(mode);
    ASSERT_EQ(cluster.Run("stop", nullptr, mode), 0);
    EXPECT_TRUE(placementd->WaitForHealth(false, absl::Seconds(10)))
        << placementd->LogTail();
    for (const std::string& service : services) {
      EXPECT_TRUE(placementd->WaitForHealth(false, absl::Seconds(5), service))
          << service;
    }
    // Calls fail fast with UNAVAILABLE: they neither hang nor crash.
    const absl::Time start = absl::Now();
    grpc::Status status = stub->ListSkus(Context(20).get(), request, &response);
    EXPECT_EQ(status.error_code(), grpc::StatusCode::UNAVAILABLE)
        << status.error_message();
    EXPECT_LT(absl::Now() - start, absl::Seconds(15));

    std::string url;
    ASSERT_EQ(cluster.Run("start", &url), 0);
    EXPECT_EQ(absl::StripTrailingAsciiWhitespace(url), cluster.url());
    EXPECT_TRUE(placementd->WaitForHealth(true, absl::Seconds(15)))
        << placementd->LogTail();
    for (const std::string& service : services) {
      EXPECT_TRUE(placementd->WaitForHealth(true, absl::Seconds(5), service))
          << service;
    }
    // The workers reconnect by themselves (a retry may meet a connection
    // that broke while the server was away).
    bool recovered = false;
    for (int attempt = 0; attempt < 20 && !recovered; ++attempt) {
      v1::ListSkusResponse again;
      recovered = stub->ListSkus(Context().get(), request, &again).ok() &&
                  again.skus_size() == 11;
      if (!recovered) absl::SleepFor(absl::Milliseconds(100));
    }
    EXPECT_TRUE(recovered);
  }
  EXPECT_EQ(placementd->Stop(SIGTERM, absl::Seconds(15)), 0);
}

TEST(PlacementdTest, MetricsExpositionPassesPromtool) {
  TestDatabase db;
  db.Migrate();
  auto placementd = StartPlacementd(db.url());
  ASSERT_NE(placementd, nullptr);
  ASSERT_TRUE(placementd->WaitForHealth(true, absl::Seconds(10)));
  auto stub = v1::CatalogService::NewStub(placementd->channel());
  for (int i = 0; i < 3; ++i) {
    v1::ListSkusRequest request;
    v1::ListSkusResponse response;
    ASSERT_TRUE(stub->ListSkus(Context().get(), request, &response).ok());
  }
  v1::GetSkuRequest ambiguous;
  ambiguous.set_name("A100");
  v1::GetSkuResponse ignored;
  EXPECT_FALSE(stub->GetSku(Context().get(), ambiguous, &ignored).ok());

  std::string metrics;
  const std::string fetch = absl::StrCat(
      "curl -sf http://127.0.0.1:", placementd->metrics_port(), "/metrics");
  ASSERT_EQ(RunCommand(fetch, &metrics), 0);
  EXPECT_THAT(metrics,
              HasSubstr("grpc_server_handled_total{grpc_code=\"OK\","
                        "grpc_method=\"ListSkus\",grpc_service=\"placement.v1."
                        "CatalogService\",grpc_type=\"unary\"} 3"));
  EXPECT_THAT(
      metrics,
      HasSubstr("grpc_server_handled_total{grpc_code=\"InvalidArgument\","
                "grpc_method=\"GetSku\""));
  EXPECT_THAT(metrics, HasSubstr("grpc_server_started_total{"));
  EXPECT_THAT(metrics, HasSubstr("grpc_server_handling_seconds_bucket{"));
  EXPECT_THAT(metrics, HasSubstr("placement_build_info{"));
  EXPECT_THAT(metrics, HasSubstr("placement_db_connections_open "));

  std::string promtool;
  ASSERT_EQ(RunCommand(absl::StrCat(fetch, " | promtool check metrics 2>&1"),
                       &promtool),
            0)
      << promtool;
  EXPECT_EQ(promtool, "") << "promtool findings:\n" << promtool;
}

// --model_constants_file: a server started from other constants predicts
// with them (here the CUDA context re-measured at 3.5 GB: every prior peak
// holds the difference), and a file that does not parse stops the start,
// naming the file, the line and the constant.
TEST(PlacementdTest, StartsFromAModelConstantsFileAndRefusesABadOne) {
  TestDatabase db;
  db.Migrate();
  char dir_template[] = "/tmp/placementd-constants.XXXXXX";
  ASSERT_NE(mkdtemp(dir_template), nullptr);
  const std::string dir = dir_template;
  const std::string good = dir + "/good", bad = dir + "/bad";
  std::ofstream(good) << "placement-model-constants 1\n"
                         "# the context as measured on this fleet's cards\n"
                         "memory.cuda_context_gb 3.5\n";
  std::ofstream(bad) << "placement-model-constants 1\n"
                        "memory.cuda_context_gb -1\n";

  std::string output;
  EXPECT_EQ(
      RunCommand(
          absl::StrCat(testing::PlacementdPath(), " --database_url='", db.url(),
                       "' --auth=false --listen=127.0.0.1:0"
                       " --metrics_listen= --model_constants_file=",
                       bad, " 2>&1"),
          &output),
      2)
      << output;
  EXPECT_THAT(output, HasSubstr(absl::StrCat("--model_constants_file ", bad,
                                             ": line 2: memory.cuda_context_gb"
                                             " = -1 must be >= 0")));
  EXPECT_NE(
      RunCommand(
          absl::StrCat(testing::PlacementdPath(), " --database_url='", db.url(),
                       "' --auth=false --listen=127.0.0.1:0"
                       " --metrics_listen= --model_constants_file=",
                       dir, "/missing 2>&1"),
          &output),
      0);
  EXPECT_THAT(output, HasSubstr("cannot be opened"));

  // The same plan from the shipped constants and from the file's.
  auto prior_peak = [&](const std::vector<std::string>& args) {
    auto process = PlacementdProcess::Start(db.url(), args);
    EXPECT_TRUE(process.ok()) << process.status();
    if (!process.ok()) return 0.0;
    EXPECT_TRUE((*process)->WaitForHealth(true, absl::Seconds(10)))
        << (*process)->LogTail();
    testing::ApiClient client((*process)->channel());
    const v1::PlacePlanResponse plan =
        client.PlanUntil(testing::PlanFor(testing::Lora8b()),
                         [](const v1::PlacePlanResponse& p) {
                           return testing::Candidate(p, "a100") != nullptr;
                         });
    const v1::PlacementCandidate* a100 = testing::Candidate(plan, "a100");
    EXPECT_NE(a100, nullptr);
    EXPECT_EQ((*process)->Stop(SIGTERM, absl::Seconds(15)), 0);
    return a100 == nullptr ? 0.0 : a100->prior_peak_memory_gb();
  };
  {
    auto process = StartPlacementd(db.url());
    ASSERT_NE(process, nullptr);
    ASSERT_TRUE(process->WaitForHealth(true, absl::Seconds(10)));
    testing::ApiClient(process->channel())
        .CreatePool(testing::TrainingPool("a100", "A100-SXM4-80GB", 1, 8));
    EXPECT_EQ(process->Stop(SIGTERM, absl::Seconds(15)), 0);
  }
  const double shipped = prior_peak({});
  const double from_file =
      prior_peak({absl::StrCat("--model_constants_file=", good)});
  ASSERT_GT(shipped, 0);
  EXPECT_NEAR(from_file - shipped,
              3.5 - core::ShippedMemoryModelConstants().cuda_context_gb, 0.01);
  std::remove(good.c_str());
  std::remove(bad.c_str());
  rmdir(dir.c_str());
}

}  // namespace
}  // namespace placement
