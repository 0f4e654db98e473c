// Teams through the public API (docs/SECURITY.md, Teams), on an in-process
// server with auth on and a real PostgreSQL: every RPC called by a token
// bound to team "a" on what belongs to team "a" (own) and on what belongs to
// team "b" (other), and by an unbound token of the same role on team "b"'s,
// with the code each must get. A token of one team can neither read nor
// change what belongs to another; a plan's bake-off counts only its team's
// runs; a standard applies to its team's plans only.
#include <grpcpp/grpcpp.h>

#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/proto_bytes.h"
#include "common/proto_time.h"
#include "common/uuid.h"
#include "core/plan/standard.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "placement/v1/catalog.grpc.pb.h"
#include "placement/v1/cost.grpc.pb.h"
#include "placement/v1/placement.grpc.pb.h"
#include "placement/v1/pool_state.grpc.pb.h"
#include "placement/v1/telemetry.grpc.pb.h"
#include "services/api/recipe_convert.h"
#include "services/auth/auth.h"
#include "storage/session/db_session.h"
#include "storage/stores/standard_store.h"
#include "storage/stores/token_store.h"
#include "tests/support/fixtures.h"
#include "tests/support/in_process_server.h"

namespace placement {
namespace {

using ::grpc::StatusCode;
using ::placement::testing::InProcessServer;
using ::placement::testing::NewUuid;
using ::placement::testing::SucceededRun;
using ::placement::testing::TrainingPool;
using ::testing::HasSubstr;
using ::testing::UnorderedElementsAre;

constexpr char kL40s[] = "L40S-PCIE-48GB";
constexpr char kA100[] = "A100-SXM4-80GB";
constexpr char kH100[] = "H100-SXM5-80GB";
constexpr StatusCode kOk = StatusCode::OK;
constexpr StatusCode kDenied = StatusCode::PERMISSION_DENIED;

std::unique_ptr<grpc::ClientContext> As(const std::string& secret) {
  auto context = testing::Deadline(10);
  context->AddMetadata("authorization", absl::StrCat("Bearer ", secret));
  return context;
}

// What one team owns, made by unbound tokens before the matrix runs.
struct Owned {
  std::string team;
  std::string plan_id;
  std::string run_id;       // named the plan, streamed samples, an eval
  std::string standard_id;  // active throughout
  std::string retirable_standard_id;
};

// One RPC of the matrix: the role that calls it, the codes for (bound to
// "a", on "a"'s), (bound to "a", on "b"'s) and (unbound, on "b"'s), and the
// call on `owned`'s things.
struct Row {
  std::string rpc;
  v1::Role role;
  StatusCode own;
  StatusCode other;
  StatusCode unbound;
  std::function<grpc::Status(const std::string& secret, const Owned& owned)>
      call;
};

class TeamsTest : public ::testing::Test {
 protected:
  TeamsTest()
      : server_([](services::ServerOptions& options) {
          options.auth_enabled = true;
        }),
        catalog_(v1::CatalogService::NewStub(server_.channel())),
        telemetry_(v1::TelemetryService::NewStub(server_.channel())),
        placement_(v1::PlacementService::NewStub(server_.channel())),
        cost_(v1::CostService::NewStub(server_.channel())),
        states_(v1::PoolStateService::NewStub(server_.channel())) {
    admin_ = BootstrapAdmin();
    for (v1::Role role :
         {v1::ROLE_AGENT, v1::ROLE_PLANNER, v1::ROLE_FINANCE, v1::ROLE_ADMIN}) {
      bound_a_[role] = Token(role, {"a"});
      unbound_[role] = Token(role, {});
    }
    for (const auto& [name, sku, rate] : {std::tuple{"l40s", kL40s, 1'000'000},
                                          {"a100", kA100, 1'100'000},
                                          {"h100", kH100, 3'000'000}}) {
      v1::CreatePoolRequest create;
      *create.mutable_pool() = TrainingPool(name, sku, 1, 8, rate);
      v1::CreatePoolResponse created;
      EXPECT_TRUE(
          catalog_->CreatePool(As(admin_).get(), create, &created).ok());
    }
  }

  // The first admin, made in the database as `placementd tokens create`.
  std::string BootstrapAdmin() {
    storage::TokenRecord token;
    token.token_id = common::NewUuid();
    token.name = "bootstrap";
    token.role = "ADMIN";
    const std::string secret = services::NewTokenSecret();
    token.secret_hash = services::TokenSecretHash(secret);
    storage::DbSession session(server_.db().url());
    EXPECT_TRUE(storage::InsertToken(session, token).ok());
    EXPECT_TRUE(server_.server().evidence().ReloadWith(session).ok());
    return secret;
  }

  // A token made through CreateToken, bound to `teams` (none: unbound).
  std::string Token(v1::Role role, const std::vector<std::string>& teams) {
    v1::CreateTokenRequest request;
    request.set_name(absl::StrCat(v1::Role_Name(role), "-", teams.size()));
    request.set_role(role);
    for (const std::string& team : teams) request.add_teams(team);
    v1::CreateTokenResponse response;
    const grpc::Status status =
        catalog_->CreateToken(As(admin_).get(), request, &response);
    EXPECT_TRUE(status.ok()) << status.error_message();
    EXPECT_EQ(std::vector<std::string>(response.token().teams().begin(),
                                       response.token().teams().end()),
              teams);
    return response.secret();
  }

  static v1::PlacePlanRequest PlanRequest(const std::string& team) {
    v1::Recipe recipe = testing::Lora8b();
    recipe.set_gpu_count(1);
    recipe.set_parallelism(v1::PARALLELISM_SINGLE);
    v1::PlacePlanRequest request = testing::PlanFor(recipe, 200'000);
    request.set_team(team);
    return request;
  }

  grpc::Status Plan(const std::string& secret, const std::string& team,
                    v1::PlacePlanResponse* plan) {
    return placement_->PlacePlan(As(secret).get(), PlanRequest(team), plan);
  }

  // A run of `plan`'s configuration on `pool`, charged to `team`.
  static v1::BenchmarkRun RunOf(const v1::PlacePlanResponse& plan,
                                const std::string& pool,
                                const std::string& team) {
    const v1::PlacementCandidate* candidate = testing::Candidate(plan, pool);
    EXPECT_NE(candidate, nullptr) << pool;
    v1::BenchmarkRun run = SucceededRun(pool, candidate->sku());
    *run.mutable_recipe() = candidate->recipe();
    run.set_team(team);
    return run;
  }

  grpc::Status Upload(const std::string& secret, const v1::BenchmarkRun& run) {
    v1::UploadBenchmarkRunRequest request;
    *request.mutable_run() = run;
    v1::UploadBenchmarkRunResponse ack;
    return telemetry_->UploadBenchmarkRun(As(secret).get(), request, &ack);
  }

  grpc::Status Stream(const std::string& secret, const std::string& run_id,
                      const std::string& team, int64_t step) {
    auto context = As(secret);
    v1::StreamStepSamplesResponse response;
    auto writer = telemetry_->StreamStepSamples(context.get(), &response);
    v1::StreamStepSamplesRequest batch;
    batch.set_run_id(run_id);
    batch.set_team(team);
    v1::StepSample* sample = batch.add_samples();
    sample->set_step(step);
    sample->mutable_time()->set_seconds(absl::ToUnixSeconds(absl::Now()));
    sample->set_step_time_seconds(0.5);
    writer->Write(batch);
    writer->WritesDone();
    return writer->Finish();
  }

  // A standard inserted as WriteStandard stores it (the proof of a bake-off
  // is another test's), for `team` ("": fleet-wide), on `pool`, for the
  // class of `recipe`.
  std::string InsertStandard(const std::string& team, const std::string& pool,
                             const v1::Recipe& recipe) {
    storage::StandardRecord record;
    core::Standard& s = record.standard;
    s.standard_id = common::NewTimeOrderedUuid(absl::Now());
    s.request_id = NewUuid();
    s.pool_name = pool;
    s.sku_id = pool == "a100" ? kA100 : kL40s;
    s.plan_id = NewUuid();
    s.written_by = "ops (ADMIN)";
    s.team = team;
    s.reason = "won the bake-off";
    s.cost_micros_per_successful_step_band = {900, 1100};
    s.failure_rate_per_hour_band = {0.001, 0.02};
    const core::Recipe recipe_class =
        core::DefaultRecipeClass(services::RecipeFromProto(recipe));
    record.recipe_class_proto =
        common::DeterministicBytes(services::RecipeToProto(recipe_class));
    record.model = recipe_class.model;
    record.fingerprint = "00";
    storage::DbSession session(server_.db().url());
    EXPECT_TRUE(storage::InsertStandard(session, record).ok());
    EXPECT_TRUE(server_.server().evidence().ReloadWith(session).ok());
    return s.standard_id;
  }

  // Team `team`'s plan (with a bake-off), its run naming it (with an eval
  // and samples), and its standards, made with unbound tokens.
  Owned Own(const std::string& team) {
    Owned owned;
    owned.team = team;
    v1::PlacePlanResponse plan;
    EXPECT_TRUE(Plan(unbound_[v1::ROLE_PLANNER], team, &plan).ok());
    EXPECT_EQ(plan.candidates_size(), 3);
    EXPECT_TRUE(plan.has_bake_off());
    owned.plan_id = plan.plan_id();
    plan_ = plan;
    v1::BenchmarkRun run = RunOf(plan, "l40s", team);
    run.set_plan_id(plan.plan_id());
    v1::EvalResult* eval = run.add_evals();
    eval->set_serving_sku(kL40s);
    eval->set_serving_precision(v1::PRECISION_FP8);
    eval->set_metric_name("mmlu");
    eval->set_score(0.6);
    owned.run_id = run.run_id();
    EXPECT_TRUE(Stream(unbound_[v1::ROLE_AGENT], run.run_id(), team, 0).ok());
    EXPECT_TRUE(Upload(unbound_[v1::ROLE_AGENT], run).ok());
    // Of another class than the plans': they never apply to them.
    owned.standard_id = InsertStandard(team, "a100", testing::Qlora70b());
    owned.retirable_standard_id =
        InsertStandard(team, "a100", testing::Qlora70b());
    return owned;
  }

  // The matrix, by service (the tables are below the fixture).
  std::vector<Row> CatalogRows();
  std::vector<Row> TelemetryRows();
  std::vector<Row> PlacementRows();
  std::vector<Row> PoolStateRows();
  void ExpectListsKeepToTheCallersTeams(const Owned& a, const Owned& b,
                                        const std::string& fleet_standard);

  InProcessServer server_;
  std::unique_ptr<v1::CatalogService::Stub> catalog_;
  std::unique_ptr<v1::TelemetryService::Stub> telemetry_;
  std::unique_ptr<v1::PlacementService::Stub> placement_;
  std::unique_ptr<v1::CostService::Stub> cost_;
  std::unique_ptr<v1::PoolStateService::Stub> states_;
  std::string admin_;
  std::map<v1::Role, std::string> bound_a_;
  std::map<v1::Role, std::string> unbound_;
  v1::PlacePlanResponse plan_;  // the last plan Own() made
  int made_ = 0;                // fresh names for what the calls create
};

// Long: a table, one row per RPC.
// Pools, SKUs and eval criteria are the fleet's: every team reads them,
// only unbound admins change them.
std::vector<Row> TeamsTest::CatalogRows() {
  return {
      {"CatalogService/ListSkus", v1::ROLE_PLANNER, kOk, kOk, kOk,
       [&](const std::string& s, const Owned&) {
         v1::ListSkusResponse r;
         return catalog_->ListSkus(As(s).get(), {}, &r);
       }},
      {"CatalogService/GetSku", v1::ROLE_PLANNER, kOk, kOk, kOk,
       [&](const std::string& s, const Owned&) {
         v1::GetSkuRequest q;
         q.set_name(kA100);
         v1::GetSkuResponse r;
         return catalog_->GetSku(As(s).get(), q, &r);
       }},
      {"CatalogService/ListPools", v1::ROLE_AGENT, kOk, kOk, kOk,
       [&](const std::string& s, const Owned&) {
         v1::ListPoolsResponse r;
         return catalog_->ListPools(As(s).get(), {}, &r);
       }},
      {"CatalogService/GetPool", v1::ROLE_PLANNER, kOk, kOk, kOk,
       [&](const std::string& s, const Owned&) {
         v1::GetPoolRequest q;
         q.set_name("l40s");
         v1::GetPoolResponse r;
         return catalog_->GetPool(As(s).get(), q, &r);
       }},
      {"CatalogService/CreatePool", v1::ROLE_ADMIN, kDenied, kDenied, kOk,
       [&](const std::string& s, const Owned&) {
         v1::CreatePoolRequest q;
         *q.mutable_pool() =
             TrainingPool(absl::StrCat("extra-", ++made_), kL40s, 1, 8);
         v1::CreatePoolResponse r;
         return catalog_->CreatePool(As(s).get(), q, &r);
       }},
      {"CatalogService/UpdatePool", v1::ROLE_ADMIN, kDenied, kDenied, kOk,
       [&](const std::string& s, const Owned&) {
         v1::UpdatePoolRequest q;
         q.mutable_pool()->set_name("h100");
         q.mutable_pool()->set_gpu_quota(4);
         q.mutable_update_mask()->add_paths("gpu_quota");
         v1::UpdatePoolResponse r;
         return catalog_->UpdatePool(As(s).get(), q, &r);
       }},
      {"CatalogService/CreateToken", v1::ROLE_ADMIN, kDenied, kDenied, kOk,
       [&](const std::string& s, const Owned& owned) {
         v1::CreateTokenRequest q;
         q.set_name("made-in-the-matrix");
         q.set_role(v1::ROLE_AGENT);
         q.add_teams(owned.team);
         v1::CreateTokenResponse r;
         return catalog_->CreateToken(As(s).get(), q, &r);
       }},
      {"CatalogService/RevokeToken", v1::ROLE_ADMIN, kDenied, kDenied, kOk,
       [&](const std::string& s, const Owned& owned) {
         v1::CreateTokenRequest create;
         create.set_name("to-revoke");
         create.set_role(v1::ROLE_AGENT);
         create.add_teams(owned.team);
         v1::CreateTokenResponse created;
         EXPECT_TRUE(
             catalog_->CreateToken(As(admin_).get(), create, &created).ok());
         v1::RevokeTokenRequest q;
         q.set_token_id(created.token().token_id());
         v1::RevokeTokenResponse r;
         return catalog_->RevokeToken(As(s).get(), q, &r);
       }},
      {"CatalogService/ListTokens", v1::ROLE_ADMIN, kDenied, kDenied, kOk,
       [&](const std::string& s, const Owned&) {
         v1::ListTokensResponse r;
         return catalog_->ListTokens(As(s).get(), {}, &r);
       }},
      {"CatalogService/SetEvalCriterion", v1::ROLE_ADMIN, kDenied, kDenied, kOk,
       [&](const std::string& s, const Owned&) {
         v1::SetEvalCriterionRequest q;
         q.mutable_criterion()->set_name(absl::StrCat("c-", ++made_));
         q.mutable_criterion()->set_pool("a100");
         q.mutable_criterion()->set_metric_name("mmlu");
         q.mutable_criterion()->set_min_score(0.5);
         v1::SetEvalCriterionResponse r;
         return catalog_->SetEvalCriterion(As(s).get(), q, &r);
       }},
      {"CatalogService/DeleteEvalCriterion", v1::ROLE_ADMIN, kDenied, kDenied,
       kOk,
       [&](const std::string& s, const Owned&) {
         v1::DeleteEvalCriterionRequest q;
         q.set_name("c-1");
         v1::DeleteEvalCriterionResponse r;
         return catalog_->DeleteEvalCriterion(As(s).get(), q, &r);
       }},
      {"CatalogService/ListEvalCriteria", v1::ROLE_AGENT, kOk, kOk, kOk,
       [&](const std::string& s, const Owned&) {
         v1::ListEvalCriteriaResponse r;
         return catalog_->ListEvalCriteria(As(s).get(), {}, &r);
       }},
  };
}

// Runs: uploaded for, and read by, their team.
std::vector<Row> TeamsTest::TelemetryRows() {
  return {
      {"TelemetryService/UploadBenchmarkRun", v1::ROLE_AGENT, kOk, kDenied, kOk,
       [&](const std::string& s, const Owned& owned) {
         return Upload(s, RunOf(plan_, "a100", owned.team));
       }},
      {"TelemetryService/StreamStepSamples", v1::ROLE_AGENT, kOk, kDenied, kOk,
       [&](const std::string& s, const Owned& owned) {
         return Stream(s, owned.run_id, "", ++made_);
       }},
      {"TelemetryService/GetSampleProgress", v1::ROLE_AGENT, kOk, kDenied, kOk,
       [&](const std::string& s, const Owned& owned) {
         v1::GetSampleProgressRequest q;
         q.set_run_id(owned.run_id);
         v1::GetSampleProgressResponse r;
         return telemetry_->GetSampleProgress(As(s).get(), q, &r);
       }},
      {"TelemetryService/GetBenchmarkRun", v1::ROLE_PLANNER, kOk, kDenied, kOk,
       [&](const std::string& s, const Owned& owned) {
         v1::GetBenchmarkRunRequest q;
         q.set_run_id(owned.run_id);
         v1::GetBenchmarkRunResponse r;
         return telemetry_->GetBenchmarkRun(As(s).get(), q, &r);
       }},
      // Lists answer, leaving out other teams' rows (checked below).
      {"TelemetryService/ListBenchmarkRuns", v1::ROLE_PLANNER, kOk, kOk, kOk,
       [&](const std::string& s, const Owned&) {
         v1::ListBenchmarkRunsResponse r;
         return telemetry_->ListBenchmarkRuns(As(s).get(), {}, &r);
       }},
      {"TelemetryService/ListEvalResults", v1::ROLE_AGENT, kOk, kOk, kOk,
       [&](const std::string& s, const Owned&) {
         v1::ListEvalResultsResponse r;
         return telemetry_->ListEvalResults(As(s).get(), {}, &r);
       }},
  };
}

// Plans, bake-offs and standards: their team's; cost, its teams'.
// A pool's queue is the fleet's: reported by an unbound token only (a
// team's token could describe a queue other teams wait in), read by all.
std::vector<Row> TeamsTest::PoolStateRows() {
  return {
      {"PoolStateService/ReportPoolState", v1::ROLE_AGENT, kDenied, kDenied,
       kOk,
       [&](const std::string& s, const Owned&) {
         v1::ReportPoolStateRequest q;
         v1::PoolState* state = q.mutable_state();
         state->set_pool("l40s");
         // A new observation each call: none is a duplicate of another.
         common::TimeToProto(absl::Now() + absl::Milliseconds(++made_),
                             state->mutable_observe_time());
         state->set_gpus_total(8);
         state->set_gpus_allocated(0);
         v1::ReportPoolStateResponse r;
         return states_->ReportPoolState(As(s).get(), q, &r);
       }},
      {"PoolStateService/GetPoolState", v1::ROLE_PLANNER, kOk, kOk, kOk,
       [&](const std::string& s, const Owned&) {
         v1::GetPoolStateRequest q;
         q.set_pool("l40s");
         q.add_gpu_counts(1);
         v1::GetPoolStateResponse r;
         return states_->GetPoolState(As(s).get(), q, &r);
       }},
  };
}

std::vector<Row> TeamsTest::PlacementRows() {
  return {
      {"PlacementService/PlacePlan", v1::ROLE_PLANNER, kOk, kDenied, kOk,
       [&](const std::string& s, const Owned& owned) {
         v1::PlacePlanResponse r;
         return Plan(s, owned.team, &r);
       }},
      {"PlacementService/GetPlan", v1::ROLE_AGENT, kOk, kDenied, kOk,
       [&](const std::string& s, const Owned& owned) {
         v1::GetPlanRequest q;
         q.set_plan_id(owned.plan_id);
         v1::GetPlanResponse r;
         return placement_->GetPlan(As(s).get(), q, &r);
       }},
      {"PlacementService/GetPlanAccuracy", v1::ROLE_FINANCE, kOk, kOk, kOk,
       [&](const std::string& s, const Owned&) {
         v1::GetPlanAccuracyResponse r;
         return placement_->GetPlanAccuracy(As(s).get(), {}, &r);
       }},
      {"PlacementService/GetBakeOffStatus", v1::ROLE_PLANNER, kOk, kDenied, kOk,
       [&](const std::string& s, const Owned& owned) {
         v1::GetBakeOffStatusRequest q;
         q.set_plan_id(owned.plan_id);
         v1::GetBakeOffStatusResponse r;
         return placement_->GetBakeOffStatus(As(s).get(), q, &r);
       }},
      // Past the team check, the plan's bake-off is not done yet.
      {"PlacementService/WriteStandard", v1::ROLE_ADMIN,
       StatusCode::FAILED_PRECONDITION, kDenied,
       StatusCode::FAILED_PRECONDITION,
       [&](const std::string& s, const Owned& owned) {
         v1::WriteStandardRequest q;
         q.set_request_id(absl::StrCat("w-", ++made_));
         q.set_plan_id(owned.plan_id);
         q.set_pool("l40s");
         q.set_reason("cheapest");
         q.set_team(owned.team);
         v1::WriteStandardResponse r;
         return placement_->WriteStandard(As(s).get(), q, &r);
       }},
      {"PlacementService/GetStandard", v1::ROLE_FINANCE, kOk, kDenied, kOk,
       [&](const std::string& s, const Owned& owned) {
         v1::GetStandardRequest q;
         q.set_standard_id(owned.standard_id);
         v1::GetStandardResponse r;
         return placement_->GetStandard(As(s).get(), q, &r);
       }},
      {"PlacementService/ListStandards", v1::ROLE_AGENT, kOk, kOk, kOk,
       [&](const std::string& s, const Owned&) {
         v1::ListStandardsResponse r;
         return placement_->ListStandards(As(s).get(), {}, &r);
       }},
      {"PlacementService/RetireStandard", v1::ROLE_ADMIN, kOk, kDenied, kOk,
       [&](const std::string& s, const Owned& owned) {
         v1::RetireStandardRequest q;
         q.set_standard_id(owned.retirable_standard_id);
         q.set_reason("superseded");
         v1::RetireStandardResponse r;
         return placement_->RetireStandard(As(s).get(), q, &r);
       }},
      // Cost: the filter's teams must be the caller's.
      {"CostService/GetCostReport", v1::ROLE_FINANCE, kOk, kDenied, kOk,
       [&](const std::string& s, const Owned& owned) {
         v1::GetCostReportRequest q;
         const int64_t today = absl::ToUnixSeconds(absl::Now()) / 86400;
         q.mutable_start_time()->set_seconds((today - 2) * 86400);
         q.mutable_end_time()->set_seconds((today + 1) * 86400);
         q.mutable_filter()->add_teams(owned.team);
         v1::GetCostReportResponse r;
         return cost_->GetCostReport(As(s).get(), q, &r);
       }},
  };
}

// Lists and reports: a token of team a sees team a's rows (and the fleet's
// standards); an unbound one every team's. `fleet_standard` was written
// with no team.
void TeamsTest::ExpectListsKeepToTheCallersTeams(
    const Owned& a, const Owned& b, const std::string& fleet_standard) {
  auto run_teams = [&](const std::string& secret) {
    v1::ListBenchmarkRunsResponse runs;
    EXPECT_TRUE(
        telemetry_->ListBenchmarkRuns(As(secret).get(), {}, &runs).ok());
    std::multiset<std::string> ids;
    for (const v1::BenchmarkRunSummary& run : runs.runs()) {
      ids.insert(run.run_id() == a.run_id   ? "a"
                 : run.run_id() == b.run_id ? "b"
                                            : "new");
    }
    return ids;
  };
  EXPECT_THAT(run_teams(bound_a_[v1::ROLE_PLANNER]),
              UnorderedElementsAre("a", "new"));
  EXPECT_THAT(run_teams(unbound_[v1::ROLE_PLANNER]),
              UnorderedElementsAre("a", "b", "new", "new"));
  v1::ListEvalResultsResponse evals;
  ASSERT_TRUE(
      telemetry_
          ->ListEvalResults(As(bound_a_[v1::ROLE_AGENT]).get(), {}, &evals)
          .ok());
  ASSERT_EQ(evals.evals_size(), 1);
  EXPECT_EQ(evals.evals(0).run_id(), a.run_id);
  v1::ListStandardsResponse standards;
  ASSERT_TRUE(
      placement_
          ->ListStandards(As(bound_a_[v1::ROLE_AGENT]).get(), {}, &standards)
          .ok());
  std::set<std::string> listed;
  for (const v1::Standard& s : standards.standards()) {
    listed.insert(s.standard_id());
  }
  EXPECT_EQ(listed, (std::set<std::string>{a.standard_id, fleet_standard}));
  // A fleet-wide standard is read by every team, retired by none of them.
  v1::GetStandardRequest get_fleet;
  get_fleet.set_standard_id(fleet_standard);
  v1::GetStandardResponse got;
  EXPECT_TRUE(
      placement_
          ->GetStandard(As(bound_a_[v1::ROLE_PLANNER]).get(), get_fleet, &got)
          .ok());
  v1::RetireStandardRequest retire_fleet;
  retire_fleet.set_standard_id(fleet_standard);
  retire_fleet.set_reason("mine now");
  v1::RetireStandardResponse retired;
  EXPECT_EQ(placement_
                ->RetireStandard(As(bound_a_[v1::ROLE_ADMIN]).get(),
                                 retire_fleet, &retired)
                .error_code(),
            kDenied);
  // Accuracy counts the outcomes of the caller's teams' plans only.
  v1::GetPlanAccuracyResponse accuracy;
  ASSERT_TRUE(
      placement_
          ->GetPlanAccuracy(As(bound_a_[v1::ROLE_FINANCE]).get(), {}, &accuracy)
          .ok());
  ASSERT_EQ(accuracy.skus_size(), 1);
  EXPECT_EQ(accuracy.skus(0).runs(), 1);
  ASSERT_TRUE(
      placement_
          ->GetPlanAccuracy(As(unbound_[v1::ROLE_FINANCE]).get(), {}, &accuracy)
          .ok());
  EXPECT_EQ(accuracy.skus(0).runs(), 2);
  // Cost without a filter: the caller's teams.
  v1::GetCostReportRequest cost;
  const int64_t today = absl::ToUnixSeconds(absl::Now()) / 86400;
  cost.mutable_start_time()->set_seconds((today - 2) * 86400);
  cost.mutable_end_time()->set_seconds((today + 1) * 86400);
  cost.add_group_by(v1::COST_DIMENSION_TEAM);
  v1::GetCostReportResponse report;
  ASSERT_TRUE(
      cost_->GetCostReport(As(bound_a_[v1::ROLE_FINANCE]).get(), cost, &report)
          .ok());
  ASSERT_EQ(report.rows_size(), 1);
  EXPECT_EQ(report.rows(0).team(), "a");
}

TEST_F(TeamsTest, EveryRpcForOwnTeamOtherTeamAndUnbound) {
  const Owned a = Own("a");
  const Owned b = Own("b");
  const std::string fleet_standard =
      InsertStandard("", "a100", testing::Qlora70b());
  std::vector<Row> rows = CatalogRows();
  for (std::vector<Row> more :
       {TelemetryRows(), PlacementRows(), PoolStateRows()}) {
    rows.insert(rows.end(), more.begin(), more.end());
  }

  std::set<std::string> in_matrix;
  for (const Row& row : rows) {
    SCOPED_TRACE(row.rpc);
    in_matrix.insert(absl::StrCat("/placement.v1.", row.rpc));
    const grpc::Status own = row.call(bound_a_[row.role], a);
    EXPECT_EQ(own.error_code(), row.own) << own.error_message();
    const grpc::Status other = row.call(bound_a_[row.role], b);
    EXPECT_EQ(other.error_code(), row.other) << other.error_message();
    if (row.other == kDenied) {
      // Named: the other team, or (fleet-wide) the token's own.
      EXPECT_THAT(other.error_message(),
                  ::testing::AnyOf(HasSubstr("team 'b'"), HasSubstr("team a")));
    }
    const grpc::Status unbound = row.call(unbound_[row.role], b);
    EXPECT_EQ(unbound.error_code(), row.unbound) << unbound.error_message();
  }
  std::set<std::string> in_table;
  for (const services::MethodRule& rule : services::MethodRules()) {
    in_table.insert(rule.method);
  }
  EXPECT_EQ(in_matrix, in_table) << "every RPC of the API is in the matrix";

  // Nothing of team b was changed by the refused calls: its run stream has
  // the sample of its own stream and the unbound caller's only, its
  // standard is active, and the runs of team b are the setup's and the
  // unbound caller's.
  v1::GetSampleProgressRequest progress_request;
  progress_request.set_run_id(b.run_id);
  v1::GetSampleProgressResponse progress;
  ASSERT_TRUE(telemetry_
                  ->GetSampleProgress(As(unbound_[v1::ROLE_AGENT]).get(),
                                      progress_request, &progress)
                  .ok());
  EXPECT_EQ(progress.samples_stored(), 2);
  EXPECT_EQ(server_.db().QueryValue(
                "SELECT count(*) FROM benchmark_runs WHERE team = 'b'"),
            "2");
  EXPECT_EQ(
      server_.db().QueryValue(absl::StrCat(
          "SELECT retired_at IS NULL FROM standards WHERE standard_id = '",
          b.standard_id, "'")),
      "t");

  ExpectListsKeepToTheCallersTeams(a, b, fleet_standard);
}

// Which runs a team's bake-off counts, who may name its plan, and which
// standards its plans take.
TEST_F(TeamsTest, BakeOffsAndStandardsAreTheirTeams) {
  v1::PlacePlanResponse plan;
  ASSERT_TRUE(Plan(bound_a_[v1::ROLE_PLANNER], "", &plan).ok());
  ASSERT_TRUE(plan.has_bake_off());
  const v1::BakeOffRun& proposed = plan.bake_off().runs(0);
  // The plan is team a's: the bound token's only team.
  v1::GetPlanRequest get;
  get.set_plan_id(plan.plan_id());
  v1::GetPlanResponse got;
  ASSERT_TRUE(
      placement_->GetPlan(As(unbound_[v1::ROLE_PLANNER]).get(), get, &got)
          .ok());
  EXPECT_EQ(got.request().team(), "a");

  // A token of team b may not name team a's plan ...
  const std::string agent_b = Token(v1::ROLE_AGENT, {"b"});
  v1::BenchmarkRun named = RunOf(plan, proposed.pool(), "");
  named.set_plan_id(plan.plan_id());
  const grpc::Status refused = Upload(agent_b, named);
  EXPECT_EQ(refused.error_code(), kDenied);
  EXPECT_THAT(refused.error_message(), HasSubstr("team 'a'"));
  // ... and its run of the plan's configuration, not naming it, does not
  // count toward it; team a's does.
  ASSERT_TRUE(Upload(agent_b, RunOf(plan, proposed.pool(), "")).ok());
  auto uploads_counted = [&] {
    v1::GetBakeOffStatusRequest request;
    request.set_plan_id(plan.plan_id());
    v1::GetBakeOffStatusResponse status;
    EXPECT_TRUE(placement_
                    ->GetBakeOffStatus(As(bound_a_[v1::ROLE_PLANNER]).get(),
                                       request, &status)
                    .ok());
    for (const v1::BakeOffRunStatus& run : status.runs()) {
      if (run.run().pool() == proposed.pool()) return run.uploads_size();
    }
    return -1;
  };
  EXPECT_EQ(uploads_counted(), 0);
  ASSERT_TRUE(
      Upload(bound_a_[v1::ROLE_AGENT], RunOf(plan, proposed.pool(), "")).ok());
  EXPECT_EQ(uploads_counted(), 1);

  // A standard of team b on the a100 does not move team a's plans; team b's
  // it does, and a fleet-wide one every team's.
  InsertStandard("b", "a100", PlanRequest("").recipe());
  v1::PlacePlanResponse for_a;
  ASSERT_TRUE(Plan(bound_a_[v1::ROLE_PLANNER], "", &for_a).ok());
  EXPECT_FALSE(for_a.has_standard());
  v1::PlacePlanResponse for_b;
  ASSERT_TRUE(Plan(unbound_[v1::ROLE_PLANNER], "b", &for_b).ok());
  ASSERT_TRUE(for_b.has_standard());
  EXPECT_TRUE(for_b.standard().applied());
  EXPECT_EQ(for_b.candidates(0).pool(), "a100");
  InsertStandard("", "h100", PlanRequest("").recipe());
  ASSERT_TRUE(Plan(bound_a_[v1::ROLE_PLANNER], "", &for_a).ok());
  ASSERT_TRUE(for_a.has_standard());
  EXPECT_EQ(for_a.standard().pool(), "h100");

  // A token bound to two teams names one; a fleet-wide standard is an
  // unbound admin's to write.
  const std::string planner_ab = Token(v1::ROLE_PLANNER, {"a", "b"});
  v1::PlacePlanResponse unnamed;
  const grpc::Status which = Plan(planner_ab, "", &unnamed);
  EXPECT_EQ(which.error_code(), kDenied);
  EXPECT_THAT(which.error_message(), HasSubstr("teams a, b"));
  ASSERT_TRUE(Plan(planner_ab, "b", &unnamed).ok());
  v1::WriteStandardRequest fleet_wide;
  fleet_wide.set_request_id("fleet");
  fleet_wide.set_plan_id(plan.plan_id());
  fleet_wide.set_pool("l40s");
  fleet_wide.set_reason("for everyone");
  v1::WriteStandardResponse written;
  EXPECT_EQ(placement_
                ->WriteStandard(As(Token(v1::ROLE_ADMIN, {"a", "b"})).get(),
                                fleet_wide, &written)
                .error_code(),
            kDenied);
}

}  // namespace
}  // namespace placement
