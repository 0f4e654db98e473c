// Auth, bounds and hostile input on an in-process server with auth on, over
// loopback gRPC, against a real PostgreSQL.
#include "services/auth/auth.h"

#include <grpcpp/generic/generic_stub.h>

#include <future>
#include <set>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/time/clock.h"
#include "common/uuid.h"
#include "gmock/gmock.h"
#include "google/protobuf/descriptor.h"
#include "gtest/gtest.h"
#include "placement/v1/catalog.grpc.pb.h"
#include "placement/v1/cost.grpc.pb.h"
#include "placement/v1/placement.grpc.pb.h"
#include "placement/v1/pool_state.grpc.pb.h"
#include "placement/v1/telemetry.grpc.pb.h"
#include "storage/session/db_session.h"
#include "storage/stores/token_store.h"
#include "tests/support/fixtures.h"
#include "tests/support/in_process_server.h"

namespace placement {
namespace {

using ::placement::services::MethodRule;
using ::placement::services::Role;
using ::placement::testing::InProcessServer;
using ::placement::testing::NewUuid;
using ::placement::testing::SucceededRun;
using ::placement::testing::TrainingPool;

// Makes a token straight in the database, as `placementd tokens create`
// does, and waits until the server's snapshot has it.
std::string BootstrapToken(InProcessServer& server, Role role) {
  storage::TokenRecord token;
  token.token_id = common::NewUuid();
  token.name = absl::StrCat("test-", services::RoleName(role));
  token.role = services::RoleName(role);
  const std::string secret = services::NewTokenSecret();
  token.secret_hash = services::TokenSecretHash(secret);
  storage::DbSession session(server.db().url());
  EXPECT_TRUE(storage::InsertToken(session, token).ok());
  EXPECT_TRUE(server.server().evidence().ReloadWith(session).ok());
  return secret;
}

std::unique_ptr<grpc::ClientContext> As(const std::string& secret,
                                        int seconds = 10) {
  auto context = testing::Deadline(seconds);
  if (!secret.empty()) {
    context->AddMetadata("authorization", absl::StrCat("Bearer ", secret));
  }
  return context;
}

// Calls `method` with an empty request message, whatever its type.
grpc::Status CallEmpty(grpc::GenericStub& stub, const std::string& method,
                       const std::string& secret) {
  auto context = As(secret);
  grpc::ByteBuffer request, response;
  grpc::Slice empty("");
  request = grpc::ByteBuffer(&empty, 1);
  std::promise<grpc::Status> done;
  stub.UnaryCall(context.get(), method, grpc::StubOptions(), &request,
                 &response, [&done](grpc::Status s) { done.set_value(s); });
  return done.get_future().get();
}

class AuthTest : public ::testing::Test {
 protected:
  AuthTest()
      : server_([](services::ServerOptions& options) {
          options.auth_enabled = true;
        }),
        generic_(server_.channel()) {
    for (Role role :
         {Role::kAgent, Role::kPlanner, Role::kFinance, Role::kAdmin}) {
      secrets_[role] = BootstrapToken(server_, role);
    }
  }

  InProcessServer server_;
  grpc::GenericStub generic_;
  std::map<Role, std::string> secrets_;
};

// The policy table names every RPC of the public API, and nothing else.
TEST_F(AuthTest, EveryRpcOfTheApiIsInThePolicyTable) {
  std::set<std::string> in_api;
  // Make sure every service's descriptor is linked in and registered.
  (void)v1::CatalogService::service_full_name();
  (void)v1::PoolStateService::service_full_name();
  const google::protobuf::DescriptorPool* pool =
      google::protobuf::DescriptorPool::generated_pool();
  for (const char* name :
       {"placement.v1.CatalogService", "placement.v1.TelemetryService",
        "placement.v1.PlacementService", "placement.v1.CostService",
        "placement.v1.PoolStateService"}) {
    const google::protobuf::ServiceDescriptor* service =
        pool->FindServiceByName(name);
    ASSERT_NE(service, nullptr) << name;
    for (int i = 0; i < service->method_count(); ++i) {
      in_api.insert(absl::StrCat("/", service->full_name(), "/",
                                 service->method(i)->name()));
    }
  }
  std::set<std::string> in_table;
  for (const MethodRule& rule : services::MethodRules()) {
    in_table.insert(rule.method);
  }
  EXPECT_EQ(in_table, in_api);
}

// Every role x method pair: allowed ones get past auth (whatever the empty
// request then earns), denied ones get PERMISSION_DENIED, and no token or
// a forged one gets UNAUTHENTICATED.
TEST_F(AuthTest, EveryRoleAndMethodPairIsAllowedOrDeniedByTheTable) {
  for (const MethodRule& rule : services::MethodRules()) {
    SCOPED_TRACE(rule.method);
    EXPECT_EQ(CallEmpty(generic_, rule.method, "").error_code(),
              grpc::StatusCode::UNAUTHENTICATED);
    EXPECT_EQ(CallEmpty(generic_, rule.method, "plc_forged").error_code(),
              grpc::StatusCode::UNAUTHENTICATED);
    for (const auto& [role, secret] : secrets_) {
      SCOPED_TRACE(services::RoleName(role));
      const grpc::StatusCode code =
          CallEmpty(generic_, rule.method, secret).error_code();
      if (rule.roles & static_cast<uint8_t>(role)) {
        EXPECT_NE(code, grpc::StatusCode::UNAUTHENTICATED);
        EXPECT_NE(code, grpc::StatusCode::PERMISSION_DENIED);
      } else {
        EXPECT_EQ(code, grpc::StatusCode::PERMISSION_DENIED);
      }
    }
  }
}

TEST_F(AuthTest, HealthAndReflectionStayOpen) {
  EXPECT_TRUE(CallEmpty(generic_, "/grpc.health.v1.Health/Check", "").ok());
}

TEST_F(AuthTest, RevokedTokenIsRefusedAtOnce) {
  auto catalog = v1::CatalogService::NewStub(server_.channel());
  v1::CreateTokenRequest create;
  create.set_name("agent-rack-7");
  create.set_role(v1::ROLE_AGENT);
  v1::CreateTokenResponse created;
  ASSERT_TRUE(
      catalog->CreateToken(As(secrets_[Role::kAdmin]).get(), create, &created)
          .ok());
  EXPECT_THAT(created.secret(), ::testing::StartsWith("plc_"));
  v1::ListSkusRequest list;
  v1::ListSkusResponse skus;
  ASSERT_TRUE(catalog->ListSkus(As(created.secret()).get(), list, &skus).ok());

  v1::RevokeTokenRequest revoke;
  revoke.set_token_id(created.token().token_id());
  v1::RevokeTokenResponse revoked;
  ASSERT_TRUE(
      catalog->RevokeToken(As(secrets_[Role::kAdmin]).get(), revoke, &revoked)
          .ok());
  EXPECT_EQ(
      catalog->ListSkus(As(created.secret()).get(), list, &skus).error_code(),
      grpc::StatusCode::UNAUTHENTICATED);

  // Listing shows the token, revoked, and never a secret.
  v1::ListTokensRequest tokens_request;
  v1::ListTokensResponse tokens;
  ASSERT_TRUE(catalog
                  ->ListTokens(As(secrets_[Role::kAdmin]).get(), tokens_request,
                               &tokens)
                  .ok());
  bool found = false;
  for (const v1::ApiToken& token : tokens.tokens()) {
    if (token.token_id() == created.token().token_id()) {
      found = true;
      EXPECT_TRUE(token.has_revoke_time());
    }
  }
  EXPECT_TRUE(found);
  EXPECT_EQ(tokens.DebugString().find("plc_"), std::string::npos);
  // Only a hash is stored.
  EXPECT_EQ(server_.db().QueryValue(
                "SELECT count(*) FROM api_tokens WHERE position('plc_' in "
                "encode(secret_hash, 'escape')) > 0"),
            "0");
}

// Token pages are keyed by the last token shown, not by position: a token
// created between two pages neither repeats a token already shown nor hides
// one not shown yet.
TEST_F(AuthTest, TokenPagesHoldStillWhileTokensAreCreated) {
  auto catalog = v1::CatalogService::NewStub(server_.channel());
  auto create = [&](const std::string& name) {
    v1::CreateTokenRequest request;
    request.set_name(name);
    request.set_role(v1::ROLE_AGENT);
    v1::CreateTokenResponse created;
    EXPECT_TRUE(
        catalog
            ->CreateToken(As(secrets_[Role::kAdmin]).get(), request, &created)
            .ok());
    return created.token().token_id();
  };
  for (int i = 0; i < 3; ++i) create(absl::StrCat("agent-", i));
  std::set<std::string> before;
  {
    v1::ListTokensRequest all;
    all.set_page_size(1000);
    v1::ListTokensResponse tokens;
    ASSERT_TRUE(
        catalog->ListTokens(As(secrets_[Role::kAdmin]).get(), all, &tokens)
            .ok());
    for (const v1::ApiToken& token : tokens.tokens()) {
      before.insert(token.token_id());
    }
  }
  ASSERT_GE(before.size(), 7u);  // the four roles' tokens and three more

  std::vector<std::string> seen;
  v1::ListTokensRequest request;
  request.set_page_size(2);
  std::string created_between;
  while (true) {
    v1::ListTokensResponse page;
    ASSERT_TRUE(
        catalog->ListTokens(As(secrets_[Role::kAdmin]).get(), request, &page)
            .ok());
    for (const v1::ApiToken& token : page.tokens()) {
      seen.push_back(token.token_id());
    }
    if (page.next_page_token().empty()) break;
    request.set_page_token(page.next_page_token());
    if (created_between.empty()) created_between = create("agent-late");
  }
  // Newest first: the late token would sit before the cursor, unseen.
  EXPECT_EQ(std::set<std::string>(seen.begin(), seen.end()).size(), seen.size())
      << "a token was listed twice";
  EXPECT_EQ(std::set<std::string>(seen.begin(), seen.end()), before);
}

TEST(BoundsTest, WritesPerTokenAreRateLimited) {
  InProcessServer server([](services::ServerOptions& options) {
    options.auth_enabled = true;
    options.writes_per_second_per_token = 0.5;
    options.write_burst_per_token = 3;
  });
  const std::string admin = BootstrapToken(server, Role::kAdmin);
  auto catalog = v1::CatalogService::NewStub(server.channel());
  int exhausted = 0, allowed = 0;
  for (int i = 0; i < 6; ++i) {
    v1::CreatePoolRequest request;
    *request.mutable_pool() =
        TrainingPool(absl::StrCat("pool-", i), "A100-SXM4-80GB");
    v1::CreatePoolResponse response;
    grpc::Status status =
        catalog->CreatePool(As(admin).get(), request, &response);
    if (status.error_code() == grpc::StatusCode::RESOURCE_EXHAUSTED) {
      ++exhausted;
      EXPECT_THAT(status.error_message(), ::testing::HasSubstr("writes/s"));
    } else {
      EXPECT_TRUE(status.ok()) << status.error_message();
      ++allowed;
    }
  }
  EXPECT_EQ(allowed, 3);  // the burst
  EXPECT_EQ(exhausted, 3);
  // Reads are not limited.
  v1::ListPoolsRequest list;
  v1::ListPoolsResponse pools;
  EXPECT_TRUE(catalog->ListPools(As(admin).get(), list, &pools).ok());
}

TEST(BoundsTest, OversizedMessageIsRefused) {
  InProcessServer server([](services::ServerOptions& options) {
    options.max_message_bytes = 64 * 1024;
  });
  auto telemetry = v1::TelemetryService::NewStub(server.channel());
  v1::UploadBenchmarkRunRequest request;
  *request.mutable_run() = SucceededRun("p", "L40S-PCIE-48GB");
  request.mutable_run()->set_failure_reason(std::string(100 * 1024, 'x'));
  v1::UploadBenchmarkRunResponse response;
  EXPECT_EQ(
      telemetry
          ->UploadBenchmarkRun(testing::Deadline().get(), request, &response)
          .error_code(),
      grpc::StatusCode::RESOURCE_EXHAUSTED);
}

TEST(BoundsTest, SampleStreamsNeedADeadlineAndIdleOnesAreClosed) {
  InProcessServer server([](services::ServerOptions& options) {
    options.stream_idle_timeout = absl::Seconds(1);
  });
  auto telemetry = v1::TelemetryService::NewStub(server.channel());
  {
    grpc::ClientContext no_deadline;
    v1::StreamStepSamplesResponse response;
    auto writer = telemetry->StreamStepSamples(&no_deadline, &response);
    writer->WritesDone();
    grpc::Status status = writer->Finish();
    EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
    EXPECT_THAT(status.error_message(), ::testing::HasSubstr("deadline"));
  }
  {
    auto context = testing::Deadline(30);
    v1::StreamStepSamplesResponse response;
    auto writer = telemetry->StreamStepSamples(context.get(), &response);
    const absl::Time start = absl::Now();
    // Send nothing: the server closes the stream after about a second.
    grpc::Status status = writer->Finish();
    EXPECT_EQ(status.error_code(), grpc::StatusCode::DEADLINE_EXCEEDED);
    EXPECT_THAT(status.error_message(), ::testing::HasSubstr("idle"));
    EXPECT_LT(absl::Now() - start, absl::Seconds(10));
  }
}

TEST(BoundsTest, ConcurrentStreamsPerConnectionAreCapped) {
  InProcessServer server([](services::ServerOptions& options) {
    options.max_concurrent_streams = 2;
  });
  auto telemetry = v1::TelemetryService::NewStub(server.channel());
  // Two open streams take both slots of the connection ...
  std::vector<std::unique_ptr<grpc::ClientContext>> contexts;
  std::vector<v1::StreamStepSamplesResponse> responses(2);
  std::vector<std::unique_ptr<grpc::ClientWriter<v1::StreamStepSamplesRequest>>>
      writers;
  for (int i = 0; i < 2; ++i) {
    contexts.push_back(testing::Deadline(30));
    writers.push_back(
        telemetry->StreamStepSamples(contexts.back().get(), &responses[i]));
  }
  absl::SleepFor(absl::Milliseconds(300));
  // ... so a third call on the same connection waits, here past its deadline.
  v1::GetSampleProgressRequest request;
  request.set_run_id(NewUuid());
  v1::GetSampleProgressResponse progress;
  auto context = std::make_unique<grpc::ClientContext>();
  context->set_deadline(std::chrono::system_clock::now() +
                        std::chrono::milliseconds(700));
  EXPECT_EQ(telemetry->GetSampleProgress(context.get(), request, &progress)
                .error_code(),
            grpc::StatusCode::DEADLINE_EXCEEDED);
  for (auto& writer : writers) {
    writer->WritesDone();
    EXPECT_TRUE(writer->Finish().ok());
  }
  // With the slots free again it goes through.
  EXPECT_TRUE(
      telemetry
          ->GetSampleProgress(testing::Deadline().get(), request, &progress)
          .ok());
}

// SQL injection is impossible by construction (bound parameters only): these
// strings travel through every free-text field and come back verbatim.
TEST(HostileInputTest, FreeTextRoundTripsVerbatim) {
  InProcessServer server;
  auto catalog = v1::CatalogService::NewStub(server.channel());
  auto telemetry = v1::TelemetryService::NewStub(server.channel());
  v1::CreatePoolRequest pool;
  *pool.mutable_pool() = TrainingPool("l40s", "L40S-PCIE-48GB");
  v1::CreatePoolResponse created;
  ASSERT_TRUE(
      catalog->CreatePool(testing::Deadline().get(), pool, &created).ok());
  const std::vector<std::string> hostile = {
      "x'); DROP TABLE benchmark_runs; --",
      "\\\\x00\\' OR '1'='1",
      "\"quoted\"\t\ttabs\nnewline\r\n",
      "\xF0\x9F\x94\xA5 unicode \xC3\xA9\xE2\x80\x94",
      "$1 $2 %s %n {} \\N \\.",
  };
  for (const std::string& text : hostile) {
    SCOPED_TRACE(text);
    v1::BenchmarkRun run = SucceededRun("l40s", "L40S-PCIE-48GB");
    run.set_agent_id(text);
    run.set_failure_reason(text);
    // A team is a key and takes one line (refused below).
    const std::string team =
        absl::StrReplaceAll(text, {{"\n", " "}, {"\r", " "}});
    run.set_team(team);
    run.add_node_names(text);
    v1::EvalResult* eval = run.add_evals();
    eval->set_serving_sku("L40S-PCIE-48GB");
    eval->set_serving_precision(v1::PRECISION_FP8);
    eval->set_metric_name(text);
    v1::UploadBenchmarkRunRequest upload;
    *upload.mutable_run() = run;
    v1::UploadBenchmarkRunResponse ack;
    grpc::Status status =
        telemetry->UploadBenchmarkRun(testing::Deadline().get(), upload, &ack);
    ASSERT_TRUE(status.ok()) << status.error_message();
    v1::GetBenchmarkRunRequest get;
    get.set_run_id(run.run_id());
    v1::GetBenchmarkRunResponse stored;
    ASSERT_TRUE(
        telemetry->GetBenchmarkRun(testing::Deadline().get(), get, &stored)
            .ok());
    EXPECT_EQ(stored.run().SerializeAsString(), run.SerializeAsString());
    EXPECT_EQ(server.db().QueryValue(absl::StrCat(
                  "SELECT team FROM benchmark_runs WHERE run_id = '",
                  run.run_id(), "'")),
              team);
  }
  // Line breaks in a key, and text that reads otherwise than it is stored,
  // are refused naming the field.
  for (const std::string& team :
       {std::string("ml\nplatform"), std::string("ml\xE2\x80\xAEmroftalp")}) {
    v1::UploadBenchmarkRunRequest upload;
    *upload.mutable_run() = SucceededRun("l40s", "L40S-PCIE-48GB");
    upload.mutable_run()->set_team(team);
    v1::UploadBenchmarkRunResponse ack;
    grpc::Status status =
        telemetry->UploadBenchmarkRun(testing::Deadline().get(), upload, &ack);
    EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
    EXPECT_THAT(testing::ViolatedFields(status),
                ::testing::ElementsAre("run.team"));
  }
  EXPECT_EQ(server.db().QueryValue("SELECT count(*) FROM benchmark_runs"),
            std::to_string(hostile.size()));
  EXPECT_EQ(server.db().QueryValue("SELECT count(*) FROM pools"), "1");
}

}  // namespace
}  // namespace placement
