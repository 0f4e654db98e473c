// Pool state end to end on an in-process server with auth on, over loopback
// gRPC, against a real PostgreSQL: a report that does not add up is refused
// with the field named and changes nothing stored; a plan shows the wait a
// report implies, and says so once the report is stale; an upload that
// carries its submission time measures the pool's wait.

#include <grpcpp/grpcpp.h>

#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "common/proto_time.h"
#include "core/queue/queue_history.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "placement/v1/catalog.grpc.pb.h"
#include "placement/v1/placement.grpc.pb.h"
#include "placement/v1/pool_state.grpc.pb.h"
#include "placement/v1/telemetry.grpc.pb.h"
#include "services/auth/auth.h"
#include "storage/session/db_session.h"
#include "storage/stores/pool_state_store.h"
#include "storage/stores/token_store.h"
#include "tests/support/fixtures.h"
#include "tests/support/in_process_server.h"

namespace placement {
namespace {

using ::placement::services::Role;
using ::placement::testing::InProcessServer;
using ::placement::testing::TrainingPool;
using ::placement::testing::ViolatedFields;
using ::testing::Contains;
using ::testing::HasSubstr;

constexpr char kA100[] = "A100-SXM4-80GB";

std::string Token(InProcessServer& server, Role role) {
  storage::TokenRecord token;
  token.token_id = testing::NewUuid();
  token.name = absl::StrCat("pool-state-", services::RoleName(role));
  token.role = services::RoleName(role);
  const std::string secret = services::NewTokenSecret();
  token.secret_hash = services::TokenSecretHash(secret);
  storage::DbSession session(server.db().url());
  EXPECT_TRUE(storage::InsertToken(session, token).ok());
  EXPECT_TRUE(server.server().evidence().ReloadWith(session).ok());
  return secret;
}

std::unique_ptr<grpc::ClientContext> As(const std::string& secret) {
  auto context = testing::Deadline();
  context->AddMetadata("authorization", absl::StrCat("Bearer ", secret));
  return context;
}

class PoolStateTest : public ::testing::Test {
 protected:
  PoolStateTest()
      : server_([](services::ServerOptions& options) {
          options.auth_enabled = true;
          options.pool_state_max_age = absl::Seconds(2);
        }),
        states_(v1::PoolStateService::NewStub(server_.channel())),
        catalog_(v1::CatalogService::NewStub(server_.channel())),
        placement_(v1::PlacementService::NewStub(server_.channel())),
        telemetry_(v1::TelemetryService::NewStub(server_.channel())),
        admin_(Token(server_, Role::kAdmin)),
        agent_(Token(server_, Role::kAgent)),
        planner_(Token(server_, Role::kPlanner)) {
    v1::CreatePoolRequest create;
    *create.mutable_pool() = TrainingPool("a100", kA100, 1, 8, 2'000'000);
    v1::CreatePoolResponse created;
    EXPECT_TRUE(catalog_->CreatePool(As(admin_).get(), create, &created).ok());
  }

  // One 8-GPU job running for an hour of its two-hour limit, one waiting.
  v1::PoolState Busy(absl::Time observed) {
    v1::PoolState s;
    s.set_pool("a100");
    common::TimeToProto(observed, s.mutable_observe_time());
    s.set_gpus_total(8);
    s.set_gpus_allocated(8);
    v1::PoolJob* running = s.add_running();
    running->set_job_id("101");
    running->set_gpus(8);
    common::TimeToProto(observed - absl::Hours(1),
                        running->mutable_start_time());
    common::TimeToProto(observed - absl::Hours(2),
                        running->mutable_submit_time());
    common::DurationToProto(absl::Hours(2), running->mutable_time_limit());
    v1::PoolJob* waiting = s.add_pending();
    waiting->set_job_id("102");
    waiting->set_gpus(4);
    common::TimeToProto(observed - absl::Minutes(10),
                        waiting->mutable_submit_time());
    common::DurationToProto(absl::Hours(1), waiting->mutable_time_limit());
    return s;
  }

  grpc::Status Report(const std::string& token, const v1::PoolState& state,
                      v1::ReportPoolStateResponse* response) {
    v1::ReportPoolStateRequest request;
    *request.mutable_state() = state;
    return states_->ReportPoolState(As(token).get(), request, response);
  }

  // The pool's row as stored (null when none).
  std::optional<storage::PoolStateRecord> Stored() {
    storage::DbSession session(server_.db().url());
    absl::StatusOr<std::vector<storage::PoolStateRecord>> rows = session.Run(
        [](pqxx::connection_base& c)
            -> absl::StatusOr<std::vector<storage::PoolStateRecord>> {
          pqxx::read_transaction txn(c);
          return storage::ReadPoolStates(txn);
        });
    EXPECT_TRUE(rows.ok()) << rows.status();
    if (!rows.ok() || rows->empty()) return std::nullopt;
    return rows->front();
  }

  v1::PlacePlanResponse Plan() {
    v1::Recipe recipe = testing::Lora8b();
    recipe.set_gpu_count(8);
    recipe.set_parallelism(v1::PARALLELISM_DDP);
    v1::PlacePlanRequest request = testing::PlanFor(recipe);
    v1::PlacePlanResponse plan;
    EXPECT_TRUE(placement_->PlacePlan(As(planner_).get(), request, &plan).ok());
    return plan;
  }

  InProcessServer server_;
  std::unique_ptr<v1::PoolStateService::Stub> states_;
  std::unique_ptr<v1::CatalogService::Stub> catalog_;
  std::unique_ptr<v1::PlacementService::Stub> placement_;
  std::unique_ptr<v1::TelemetryService::Stub> telemetry_;
  std::string admin_;
  std::string agent_;
  std::string planner_;
};

TEST_F(PoolStateTest, AReportThatDoesNotAddUpIsRefusedAndChangesNothing) {
  const absl::Time t0 = absl::Now() - absl::Minutes(1);
  v1::ReportPoolStateResponse ack;
  ASSERT_TRUE(Report(agent_, Busy(t0), &ack).ok());
  EXPECT_FALSE(ack.duplicate());
  EXPECT_GT(ack.evidence_version(), 0);
  const std::optional<storage::PoolStateRecord> before = Stored();
  ASSERT_TRUE(before.has_value());

  struct Case {
    const char* what;
    v1::PoolState state;
    grpc::StatusCode code;
    const char* field;  // the violation named, for INVALID_ARGUMENT
  };
  std::vector<Case> cases;
  v1::PoolState unknown = Busy(t0 + absl::Seconds(1));
  unknown.set_pool("no-such-pool");
  cases.push_back({"an unknown pool", unknown, grpc::NOT_FOUND, ""});
  v1::PoolState more = Busy(t0 + absl::Seconds(1));
  more.set_gpus_total(16);
  more.set_gpus_allocated(16);
  cases.push_back({"more GPUs than the pool has", more, grpc::INVALID_ARGUMENT,
                   "state.gpus_total"});
  cases.push_back({"older than the last report", Busy(t0 - absl::Seconds(1)),
                   grpc::INVALID_ARGUMENT, "state.observe_time"});
  v1::PoolState early = Busy(t0 + absl::Seconds(1));
  common::TimeToProto(t0 + absl::Minutes(1),
                      early.mutable_running(0)->mutable_start_time());
  cases.push_back({"a job started after it was observed", early,
                   grpc::INVALID_ARGUMENT, "state.running[0].start_time"});
  v1::PoolState other = Busy(t0);
  other.mutable_pending(0)->set_gpus(2);
  cases.push_back(
      {"other content at the same time", other, grpc::ALREADY_EXISTS, ""});
  v1::PoolState bad_plan = Busy(t0 + absl::Seconds(1));
  bad_plan.mutable_pending(0)->set_plan_id("not-a-plan");
  cases.push_back({"a plan id that is not one", bad_plan,
                   grpc::INVALID_ARGUMENT, "state.pending[0].plan_id"});
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    v1::ReportPoolStateResponse refused;
    const grpc::Status status = Report(agent_, c.state, &refused);
    EXPECT_EQ(status.error_code(), c.code) << status.error_message();
    if (c.code == grpc::INVALID_ARGUMENT) {
      EXPECT_THAT(ViolatedFields(status), Contains(c.field));
    }
  }
  // A role that may not report.
  v1::ReportPoolStateResponse denied;
  EXPECT_EQ(Report(planner_, Busy(t0 + absl::Seconds(2)), &denied).error_code(),
            grpc::PERMISSION_DENIED);
  // The same report again is answered, and writes nothing.
  v1::ReportPoolStateResponse again;
  ASSERT_TRUE(Report(agent_, Busy(t0), &again).ok());
  EXPECT_TRUE(again.duplicate());

  const std::optional<storage::PoolStateRecord> after = Stored();
  ASSERT_TRUE(after.has_value());
  EXPECT_EQ(after->report, before->report);
  EXPECT_EQ(after->received, before->received);
  EXPECT_EQ(after->history, before->history);
  EXPECT_EQ(after->planned, before->planned);
}

TEST_F(PoolStateTest, APlanShowsTheWaitUntilTheReportIsStale) {
  // Before any report: unknown, never zero.
  v1::PlacePlanResponse plan = Plan();
  ASSERT_EQ(plan.candidates_size(), 1);
  EXPECT_EQ(plan.candidates(0).timing().status(), v1::START_STATUS_NO_STATE);
  EXPECT_FALSE(plan.candidates(0).timing().has_expected_start());

  v1::ReportPoolStateResponse ack;
  ASSERT_TRUE(Report(agent_, Busy(absl::Now()), &ack).ok());
  plan = Plan();
  const v1::CandidateTiming& timing = plan.candidates(0).timing();
  ASSERT_EQ(timing.status(), v1::START_STATUS_KNOWN) << timing.reason();
  // The running job ends within its limit's last hour; then the waiting
  // 4-GPU job (at most an hour) is ahead of an 8-GPU one.
  const absl::Duration p90 =
      common::DurationFromProto(timing.start_band().high());
  EXPECT_GT(p90, absl::Minutes(30));
  EXPECT_LE(p90, absl::Hours(2));
  EXPECT_EQ(timing.jobs_ahead(), 1);
  EXPECT_THAT(timing.reason(), HasSubstr("the time limit alone"));
  EXPECT_GT(common::DurationFromProto(timing.expected_finish()),
            common::DurationFromProto(timing.expected_start()));

  // Past --pool_state_max_age the wait is unknown again, and says why.
  absl::SleepFor(absl::Milliseconds(2100));
  plan = Plan();
  EXPECT_EQ(plan.candidates(0).timing().status(), v1::START_STATUS_STALE);
  EXPECT_THAT(plan.candidates(0).timing().reason(), HasSubstr("stale"));
}

// The pool's calibration checks the plans' own forecasts: the job a plan
// placed, reported with its plan_id, is checked against the forecast the
// plan showed before calibration, from the plan's time; a tenant's job
// that waited and started is not a check (its forecast is another's).
TEST_F(PoolStateTest, APlansForecastIsCheckedAgainstItsJobsStart) {
  const absl::Time t0 = absl::Now();
  v1::ReportPoolStateResponse ack;
  ASSERT_TRUE(Report(agent_, Busy(t0), &ack).ok());
  const v1::PlacePlanResponse plan = Plan();
  const v1::CandidateTiming& timing = plan.candidates(0).timing();
  ASSERT_EQ(timing.status(), v1::START_STATUS_KNOWN) << timing.reason();
  ASSERT_EQ(timing.uncalibrated_start_levels_size(), 21);
  EXPECT_FALSE(timing.calibrated());
  EXPECT_THAT(timing.reason(), HasSubstr("0 of 20 plans' forecasts"));
  // Not calibrated yet: the plan shows the raw forecast.
  EXPECT_NEAR(
      absl::ToDoubleSeconds(common::DurationFromProto(timing.expected_start())),
      absl::ToDoubleSeconds(
          common::DurationFromProto(timing.uncalibrated_start_levels(10))),
      120);

  // The 8-GPU job ends 30 s on, the tenant's waiting job starts then; the
  // plan's job is submitted and waits behind it.
  v1::PoolState second = Busy(t0 + absl::Seconds(60));
  v1::PoolJob ended = second.running(0);
  common::TimeToProto(t0 + absl::Seconds(30), ended.mutable_end_time());
  *second.add_finished() = ended;
  second.clear_running();
  *second.add_running() = second.pending(0);
  common::TimeToProto(t0 + absl::Seconds(30),
                      second.mutable_running(0)->mutable_start_time());
  second.clear_pending();
  v1::PoolJob* placed = second.add_pending();
  placed->set_job_id("103");
  placed->set_gpus(8);
  placed->set_plan_id(plan.plan_id());
  common::TimeToProto(t0, placed->mutable_submit_time());
  second.set_gpus_allocated(4);
  ASSERT_TRUE(Report(agent_, second, &ack).ok());
  std::optional<storage::PoolStateRecord> stored = Stored();
  ASSERT_TRUE(stored.has_value());
  EXPECT_TRUE(stored->history.start_pits.empty());  // the tenant's: none
  // The plan's forecast is kept for its job, from the plan's time.
  ASSERT_EQ(stored->predictions.size(), 1u);
  EXPECT_EQ(stored->predictions[0].job_id, "103");
  EXPECT_LT(absl::AbsDuration(stored->predictions[0].origin - t0),
            absl::Seconds(30));

  // It starts 90 s after the plan: early in a forecast of the 8-GPU job's
  // last hour, so the check is near 0.
  v1::PoolState third = second;
  common::TimeToProto(t0 + absl::Seconds(120), third.mutable_observe_time());
  third.clear_finished();
  third.clear_pending();
  v1::PoolJob tenant = third.running(0);
  common::TimeToProto(t0 + absl::Seconds(90), tenant.mutable_end_time());
  *third.add_finished() = tenant;
  third.clear_running();
  *third.add_running() = second.pending(0);
  common::TimeToProto(t0 + absl::Seconds(90),
                      third.mutable_running(0)->mutable_start_time());
  third.set_gpus_allocated(8);
  ASSERT_TRUE(Report(agent_, third, &ack).ok());
  stored = Stored();
  ASSERT_TRUE(stored.has_value());
  ASSERT_EQ(stored->history.start_pits.size(), 1u);
  EXPECT_LT(stored->history.start_pits[0], 0.2);
  EXPECT_TRUE(stored->predictions.empty());

  v1::GetPoolStateRequest get;
  get.set_pool("a100");
  v1::GetPoolStateResponse got;
  ASSERT_TRUE(states_->GetPoolState(As(planner_).get(), get, &got).ok());
  EXPECT_EQ(got.history().checked_forecasts(), 1);
}

// A row an earlier release wrote with more forecast checks than a pool keeps
// now (it kept 256): read, by the calibration and by GetPoolState alike, as
// its newest 40, and written back so by the next report.
TEST_F(PoolStateTest, ARowWithMoreChecksThanThePoolKeepsIsReadByItsNewest) {
  const absl::Time t0 = absl::Now() - absl::Minutes(5);
  v1::ReportPoolStateResponse ack;
  ASSERT_TRUE(Report(agent_, Busy(t0), &ack).ok());
  std::vector<double> every_check;
  for (int i = 0; i < 256; ++i) every_check.push_back((i + 0.5) / 256);
  storage::DbSession session(server_.db().url());
  ASSERT_TRUE(storage::ReplacePoolState(
                  session, "a100",
                  [&](const storage::PoolStateContext& context) {
                    storage::PoolStateDecision decision;
                    decision.store = *context.previous;
                    decision.store->history.start_pits = every_check;
                    return decision;
                  })
                  .ok());
  const std::vector<double> newest(every_check.end() - core::kMaxHistoryPits,
                                   every_check.end());
  std::optional<storage::PoolStateRecord> stored = Stored();
  ASSERT_TRUE(stored.has_value());
  EXPECT_EQ(stored->history.start_pits, newest);

  ASSERT_TRUE(server_.server().evidence().ReloadWith(session).ok());
  v1::GetPoolStateRequest get;
  get.set_pool("a100");
  v1::GetPoolStateResponse got;
  ASSERT_TRUE(states_->GetPoolState(As(planner_).get(), get, &got).ok());
  EXPECT_EQ(got.history().checked_forecasts(),
            static_cast<int32_t>(core::kMaxHistoryPits));

  // The next report rewrites the row with what the pool keeps.
  ASSERT_TRUE(Report(agent_, Busy(t0 + absl::Seconds(60)), &ack).ok());
  stored = Stored();
  ASSERT_TRUE(stored.has_value());
  EXPECT_EQ(stored->history.start_pits, newest);
}

TEST_F(PoolStateTest, AnUploadWithItsSubmissionTimeMeasuresTheWait) {
  v1::BenchmarkRun run = testing::SucceededRun("a100", kA100);
  const absl::Time start = common::TimeFromProto(run.start_time());
  common::TimeToProto(start - absl::Minutes(25), run.mutable_submit_time());
  v1::UploadBenchmarkRunRequest upload;
  *upload.mutable_run() = run;
  v1::UploadBenchmarkRunResponse uploaded;
  ASSERT_TRUE(
      telemetry_->UploadBenchmarkRun(As(agent_).get(), upload, &uploaded).ok());
  const std::optional<storage::PoolStateRecord> stored = Stored();
  ASSERT_TRUE(stored.has_value());
  EXPECT_EQ(stored->history.waits_s, std::vector<double>{25 * 60});
  EXPECT_FALSE(stored->observed.has_value());  // no report yet

  // Submitted after it started: refused, naming the field.
  v1::BenchmarkRun late = testing::SucceededRun("a100", kA100);
  common::TimeToProto(
      common::TimeFromProto(late.start_time()) + absl::Seconds(1),
      late.mutable_submit_time());
  *upload.mutable_run() = late;
  const grpc::Status refused =
      telemetry_->UploadBenchmarkRun(As(agent_).get(), upload, &uploaded);
  EXPECT_EQ(refused.error_code(), grpc::INVALID_ARGUMENT);
  EXPECT_THAT(ViolatedFields(refused), Contains("run.submit_time"));
}

}  // namespace
}  // namespace placement
