// placement-agent against a real placementd on loopback: a fake training
// command that runs out of memory once and succeeds on retry; a service
// killed mid-run and restarted (nothing lost after flush, no duplicate after
// flushing twice); a job preempted while a sample stream hangs (the run is
// spooled before the agent is killed); exact SKUs only; the bake-off
// commands of a plan; the spool itself; and the bearer token on every call.
#include <grpcpp/grpcpp.h>
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "clients/agent/gpu_probe.h"
#include "clients/agent/recipe_input.h"
#include "clients/agent/spool.h"
#include "clients/agent/uploader.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "placement/v1/catalog.grpc.pb.h"
#include "placement/v1/placement.grpc.pb.h"
#include "placement/v1/telemetry.grpc.pb.h"
#include "tests/support/fixtures.h"
#include "tests/support/placementd_process.h"
#include "tests/support/test_database.h"

namespace placement {
namespace {

using ::placement::testing::Deadline;
using ::placement::testing::NewUuid;
using ::placement::testing::PlacementdProcess;
using ::placement::testing::RunCommand;
using ::placement::testing::TestDatabase;
using ::placement::testing::TrainingPool;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr char kL40s[] = "L40S-PCIE-48GB";
constexpr char kA100[] = "A100-SXM4-80GB";
namespace fs = std::filesystem;

std::string TestData(const std::string& name) {
  return fs::absolute("testdata/" + name).string();
}

// A scratch folder removed at the end.
class TempDir {
 public:
  TempDir() {
    char tmpl[] = "/tmp/placement-agent-test-XXXXXX";
    path_ = mkdtemp(tmpl);
  }
  ~TempDir() { fs::remove_all(path_); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

class AgentTest : public ::testing::Test {
 protected:
  void SetUp() override {
    db_.Migrate();
    StartServer();
    auto catalog = v1::CatalogService::NewStub(server_->channel());
    for (const v1::Pool& pool : {TrainingPool("l40s-adapters", kL40s, 1, 4),
                                 TrainingPool("a100-train", kA100, 1, 8)}) {
      v1::CreatePoolRequest request;
      *request.mutable_pool() = pool;
      v1::CreatePoolResponse response;
      ASSERT_TRUE(
          catalog->CreatePool(Deadline().get(), request, &response).ok());
    }
  }

  // Without auth (PlacementdProcess's default): tokens are not what these
  // tests are about.
  void StartServer() {
    absl::StatusOr<std::unique_ptr<PlacementdProcess>> server =
        PlacementdProcess::Start(db_.url(), {});
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = *std::move(server);
    ASSERT_TRUE(server_->WaitForHealth(true, absl::Seconds(30)))
        << server_->LogTail();
  }

  std::string spool() const { return tmp_.path() + "/spool"; }

  // Runs placement-agent through the shell with `env` before it; returns its
  // exit code and puts stdout + stderr into `*output`.
  // `timeout`: after it, the agent gets SIGTERM (as a job's preemption).
  int Agent(const std::string& args, std::string* output,
            const std::string& env = "", const std::string& server = "",
            const std::string& timeout = "120") {
    const std::string command =
        absl::StrCat("cd ", SourceTestDir(), " && env ", env, " timeout ",
                     timeout, " ", PLACEMENT_AGENT_BINARY,
                     " --server=", server.empty() ? server_->address() : server,
                     " --spool_dir=", spool(),
                     " --nvml_library= --nvidia_smi=/nonexistent/nvidia-smi"
                     " --upload_attempts=2 --backoff_initial=50ms"
                     " --stream_interval=100ms ",
                     args, " 2>&1");
    return RunCommand(command, output);
  }

  static std::string SourceTestDir() { return fs::current_path().string(); }

  std::string RunL40s(const std::string& env, std::string* output, int* code) {
    *code = Agent(
        absl::StrCat("run --pool=l40s-adapters --sku=", kL40s,
                     " --recipe=recipe.yaml -- ", TestData("fake_train.sh")),
        output, env);
    return RunIdFrom(*output);
  }

  static std::string RunIdFrom(const std::string& output) {
    const size_t at = output.find("placement-agent: run ");
    if (at == std::string::npos) return "";
    return output.substr(at + 21, 36);
  }

  v1::GetBenchmarkRunResponse StoredRun(const std::string& run_id) {
    auto telemetry = v1::TelemetryService::NewStub(server_->channel());
    v1::GetBenchmarkRunRequest request;
    request.set_run_id(run_id);
    v1::GetBenchmarkRunResponse response;
    grpc::Status status =
        telemetry->GetBenchmarkRun(Deadline().get(), request, &response);
    EXPECT_TRUE(status.ok()) << status.error_message();
    return response;
  }

  v1::GetSampleProgressResponse Progress(const std::string& run_id) {
    auto telemetry = v1::TelemetryService::NewStub(server_->channel());
    v1::GetSampleProgressRequest request;
    request.set_run_id(run_id);
    v1::GetSampleProgressResponse response;
    EXPECT_TRUE(
        telemetry->GetSampleProgress(Deadline().get(), request, &response)
            .ok());
    return response;
  }

  TestDatabase db_;
  std::unique_ptr<PlacementdProcess> server_;
  TempDir tmp_;
};

TEST_F(AgentTest, OomOnceThenSuccessIsOneRunWithARetryAndEverySample) {
  std::string output;
  int code;
  const std::string run_id =
      RunL40s("FAKE_OOM_ATTEMPTS=1 FAKE_STEPS=5", &output, &code);
  ASSERT_EQ(code, 0) << output;
  ASSERT_EQ(run_id.size(), 36u) << output;
  EXPECT_THAT(output, HasSubstr("attempt 1 OUT_OF_MEMORY"));
  EXPECT_THAT(output, HasSubstr("SUCCEEDED, 1 retry, 5/8 steps succeeded"));
  EXPECT_THAT(output, HasSubstr("uploaded"));
  // The command's own output passes through.
  EXPECT_THAT(output, HasSubstr("loading Llama-3.1-8B (attempt 2"));

  const v1::BenchmarkRun run = StoredRun(run_id).run();
  EXPECT_EQ(run.retries(), 1);
  EXPECT_EQ(run.outcome(), v1::RUN_OUTCOME_SUCCEEDED);
  EXPECT_EQ(run.steps_attempted(), 8);
  EXPECT_EQ(run.steps_succeeded(), 5);
  EXPECT_THAT(run.failure_reason(), HasSubstr("attempt 1: OUT_OF_MEMORY"));
  EXPECT_THAT(run.failure_reason(), HasSubstr("CUDA out of memory"));
  EXPECT_DOUBLE_EQ(run.peak_memory_gb(), 44.5);
  EXPECT_DOUBLE_EQ(run.step_time_mean_seconds(), 0.015);
  EXPECT_EQ(run.sku(), kL40s);
  EXPECT_EQ(run.pool(), "l40s-adapters");
  EXPECT_EQ(run.gpu_count(), 1);
  EXPECT_EQ(run.interconnect(), v1::INTERCONNECT_NONE);
  EXPECT_EQ(run.offload(), v1::OFFLOAD_NONE);
  EXPECT_EQ(run.recipe().model(), "Llama-3.1-8B");
  EXPECT_EQ(run.recipe().lora_rank(), 16);

  const v1::GetSampleProgressResponse progress = Progress(run_id);
  EXPECT_EQ(progress.committed_through_step(), 7);
  EXPECT_EQ(progress.samples_stored(), 8);
  EXPECT_EQ(db_.QueryValue(absl::StrCat(
                "SELECT count(*) FROM step_samples WHERE run_id = '", run_id,
                "' AND memory_allocated_gb = 44.5")),
            "3");
  // Acknowledged: nothing is left in the spool.
  EXPECT_TRUE(agent::ListSpooledRuns(spool()).empty());
}

// Running out of memory before the first step is not retried: the same
// command on the same card allocates the same memory again, and another
// attempt would spend a start-up to learn nothing. One that ran steps first
// still is (above).
TEST_F(AgentTest, OutOfMemoryBeforeTheFirstStepIsNotRetried) {
  std::string output;
  int code;
  RunL40s("FAKE_OOM_AT_START_FROM=1", &output, &code);
  EXPECT_EQ(code, 1) << output;
  EXPECT_THAT(output, HasSubstr("attempt 1 OUT_OF_MEMORY"));
  EXPECT_THAT(output, HasSubstr("before its first step: not retried"));
  EXPECT_THAT(output, Not(HasSubstr("(attempt 2")));
  // No step ran, so there is no step time to report (docs/AGENT.md).
  EXPECT_THAT(output, HasSubstr("no run summary"));

  // Three steps, out of memory (retried), then out of memory at the start.
  output.clear();  // Agent appends
  const std::string run_id =
      RunL40s("FAKE_OOM_ATTEMPTS=1 FAKE_OOM_AT_START_FROM=2", &output, &code);
  EXPECT_EQ(code, 1) << output;
  EXPECT_THAT(output, Not(HasSubstr("(attempt 3")));
  const v1::BenchmarkRun run = StoredRun(run_id).run();
  EXPECT_EQ(run.retries(), 1);
  EXPECT_EQ(run.outcome(), v1::RUN_OUTCOME_OUT_OF_MEMORY);
  EXPECT_EQ(run.steps_attempted(), 3);
}

// Inside a job the Slurm plugin placed, the job's environment names the plan
// (PLACEMENT_PLAN_ID) and the pool (PLACEMENT_POOL, else the partition), so
// the job's command needs neither flag; a flag given still wins.
TEST_F(AgentTest, InsideASlurmJobThePlanAndPoolComeFromTheEnvironment) {
  auto placement = v1::PlacementService::NewStub(server_->channel());
  v1::PlacePlanRequest request;
  absl::StatusOr<v1::Recipe> recipe = agent::ReadRecipeFile("recipe.yaml");
  ASSERT_TRUE(recipe.ok()) << recipe.status();
  *request.mutable_recipe() = *recipe;
  request.set_total_steps(10000);
  v1::PlacePlanResponse plan;
  ASSERT_TRUE(placement->PlacePlan(Deadline().get(), request, &plan).ok());

  const std::string tail = absl::StrCat(
      " --sku=", kL40s, " --recipe=recipe.yaml -- ", TestData("fake_train.sh"));
  const std::string planned =
      absl::StrCat("FAKE_STEPS=3 PLACEMENT_PLAN_ID=", plan.plan_id());
  std::string output;
  ASSERT_EQ(Agent("run" + tail, &output,
                  planned + " SLURM_JOB_PARTITION=l40s-adapters"),
            0)
      << output;
  v1::BenchmarkRun run = StoredRun(RunIdFrom(output)).run();
  EXPECT_EQ(run.pool(), "l40s-adapters");
  EXPECT_EQ(run.plan_id(), plan.plan_id());

  // A partition named otherwise than its pool: PLACEMENT_POOL says which.
  output.clear();  // Agent appends
  ASSERT_EQ(
      Agent("run" + tail, &output,
            planned + " PLACEMENT_POOL=l40s-adapters SLURM_JOB_PARTITION=gpu"),
      0)
      << output;
  EXPECT_EQ(StoredRun(RunIdFrom(output)).run().pool(), "l40s-adapters");

  const std::string other_plan = NewUuid();
  output.clear();
  ASSERT_EQ(Agent(absl::StrCat(
                      "run --pool=l40s-adapters --plan_id=", other_plan, tail),
                  &output, planned + " SLURM_JOB_PARTITION=a100-train"),
            0)
      << output;
  run = StoredRun(RunIdFrom(output)).run();
  EXPECT_EQ(run.pool(), "l40s-adapters");
  EXPECT_EQ(run.plan_id(), other_plan);

  // Neither flag nor environment: still a usage error.
  output.clear();
  EXPECT_EQ(Agent("run" + tail, &output, "FAKE_STEPS=3"), 2);
  EXPECT_THAT(output, HasSubstr("--pool"));
}

TEST_F(AgentTest, EveryAttemptFailingIsRecordedWithTheLastOutcome) {
  std::string output;
  int code;
  const std::string run_id = RunL40s("FAKE_NCCL=1", &output, &code);
  EXPECT_EQ(code, 1) << output;
  const v1::BenchmarkRun run = StoredRun(run_id).run();
  EXPECT_EQ(run.retries(), 2);  // --max_retries defaults to 2
  EXPECT_EQ(run.outcome(), v1::RUN_OUTCOME_COLLECTIVE_TIMEOUT);
  EXPECT_EQ(run.steps_attempted(), 3);
  EXPECT_EQ(run.steps_succeeded(), 0);
  EXPECT_THAT(run.failure_reason(),
              HasSubstr("attempt 3: COLLECTIVE_TIMEOUT (exit code 134"));
}

// The command saves a checkpoint after the second step of each attempt and
// resumes there (tests/agent/testdata/fake_train.sh, FAKE_CHECKPOINT): the
// steps a checkpoint kept count as succeeded, whether the run failed or a
// later attempt finished it.
TEST_F(AgentTest, StepsKeptByACheckpointCountAsSucceeded) {
  std::string output;
  int code;
  std::string run_id =
      RunL40s("FAKE_CHECKPOINT=1 FAKE_OOM_ATTEMPTS=3", &output, &code);
  EXPECT_EQ(code, 1) << output;
  // Checkpoint records pass through like any other output.
  EXPECT_THAT(output, HasSubstr(R"({"checkpoint_step": 6})"));
  EXPECT_THAT(output, HasSubstr("OUT_OF_MEMORY, 2 retries, 6/9 steps"));
  v1::BenchmarkRun run = StoredRun(run_id).run();
  EXPECT_EQ(run.outcome(), v1::RUN_OUTCOME_OUT_OF_MEMORY);
  EXPECT_EQ(run.steps_attempted(), 9);
  EXPECT_EQ(run.steps_succeeded(), 6);  // the last checkpoint's steps 0..5
  // A checkpoint record is no step record: no sample of its own.
  EXPECT_EQ(Progress(run_id).samples_stored(), 9);

  output.clear();  // Agent appends
  run_id = RunL40s("FAKE_CHECKPOINT=1 FAKE_OOM_ATTEMPTS=1 FAKE_STEPS=5",
                   &output, &code);
  ASSERT_EQ(code, 0) << output;
  run = StoredRun(run_id).run();
  EXPECT_EQ(run.outcome(), v1::RUN_OUTCOME_SUCCEEDED);
  EXPECT_EQ(run.steps_attempted(), 6);  // 0, 1, 2 (lost), then 2, 3, 4
  EXPECT_EQ(run.steps_succeeded(), 5);  // the training's steps 0..4
}

TEST_F(AgentTest, ServiceKilledMidRunLosesNothingAfterFlush) {
  const std::string midway = tmp_.path() + "/midway";
  const std::string go = tmp_.path() + "/go";
  std::string output;
  int code = -1;
  std::thread agent([&] {
    RunL40s(absl::StrCat("FAKE_STEPS=20 FAKE_PAUSE_AT=10 FAKE_MIDWAY=", midway,
                         " FAKE_GO=", go),
            &output, &code);
  });
  // Half-way, the first ten samples reach the service while the command
  // runs.
  std::string run_id;
  const absl::Time deadline = absl::Now() + absl::Seconds(30);
  while (absl::Now() < deadline) {
    const auto runs = agent::ListSpooledRuns(spool());
    if (!runs.empty() && fs::exists(midway) &&
        Progress(runs[0]).committed_through_step() == 9) {
      run_id = runs[0];
      break;
    }
    absl::SleepFor(absl::Milliseconds(50));
  }
  EXPECT_EQ(run_id.size(), 36u);
  // The service dies; the training goes on.
  EXPECT_EQ(server_->Stop(SIGKILL, absl::Seconds(10)), 128 + SIGKILL);
  std::ofstream(go).put('\n');
  agent.join();
  ASSERT_EQ(code, 3) << output;
  EXPECT_THAT(output, HasSubstr("spooled in"));
  EXPECT_THAT(output, HasSubstr("SUCCEEDED, 0 retries, 20/20 steps"));
  ASSERT_EQ(agent::ListSpooledRuns(spool()).size(), 1u);

  // A copy of the spool as it was, to flush a second time later.
  const std::string copy = tmp_.path() + "/spool-copy";
  fs::copy(spool(), copy, fs::copy_options::recursive);

  StartServer();
  ASSERT_EQ(Agent("flush", &output), 0) << output;
  EXPECT_THAT(output, HasSubstr("uploaded 1, left in the spool 0"));
  EXPECT_TRUE(agent::ListSpooledRuns(spool()).empty());
  const v1::GetBenchmarkRunResponse stored = StoredRun(run_id);
  EXPECT_EQ(stored.run().steps_attempted(), 20);
  EXPECT_EQ(Progress(run_id).committed_through_step(), 19);
  EXPECT_EQ(Progress(run_id).samples_stored(), 20);

  // Flushing the same spooled run again (as if the first acknowledgement
  // had been lost) stores nothing new and is acknowledged as the original.
  fs::remove_all(spool());
  fs::copy(copy, spool(), fs::copy_options::recursive);
  ASSERT_EQ(Agent("flush", &output), 0) << output;
  EXPECT_THAT(output, HasSubstr("uploaded 1"));
  EXPECT_EQ(StoredRun(run_id).accept_time().SerializeAsString(),
            stored.accept_time().SerializeAsString());
  EXPECT_EQ(db_.QueryValue("SELECT count(*) FROM benchmark_runs"), "1");
  EXPECT_EQ(
      db_.QueryValue(absl::StrCat(
          "SELECT count(*) FROM step_samples WHERE run_id = '", run_id, "'")),
      "20");
  ASSERT_EQ(Agent("flush", &output), 0) << output;
  EXPECT_THAT(output, HasSubstr("uploaded 0, left in the spool 0"));
}

// Slurm's preemption or scancel sends SIGTERM to the job: the agent passes
// it on to the command and records the attempt as PREEMPTED, uploaded, with
// no retry and nothing left in the spool.
TEST_F(AgentTest, SigtermToTheAgentRecordsAPreemptedRun) {
  std::string output;
  const int code = Agent(
      absl::StrCat("run --pool=l40s-adapters --sku=", kL40s,
                   " --recipe=recipe.yaml -- ", TestData("fake_train.sh")),
      &output,
      absl::StrCat("FAKE_STEPS=20 FAKE_PAUSE_AT=4 FAKE_MIDWAY=", tmp_.path(),
                   "/midway FAKE_GO=", tmp_.path(), "/never"),
      "", "3");
  EXPECT_EQ(code, 124) << output;  // timeout's code: it sent the SIGTERM
  EXPECT_THAT(output, HasSubstr("PREEMPTED"));
  EXPECT_THAT(output, HasSubstr("uploaded"));
  const std::string run_id = RunIdFrom(output);
  ASSERT_EQ(run_id.size(), 36u) << output;
  const v1::BenchmarkRun run = StoredRun(run_id).run();
  EXPECT_EQ(run.outcome(), v1::RUN_OUTCOME_PREEMPTED);
  EXPECT_EQ(run.retries(), 0);
  EXPECT_EQ(run.steps_attempted(), 4);
  EXPECT_THAT(run.failure_reason(), HasSubstr("SIGTERM"));
  EXPECT_TRUE(agent::ListSpooledRuns(spool()).empty());
}

// A service that takes a sample stream and never answers it (a real gRPC
// peer on loopback): it names the SKU and the pool as placementd would,
// says nothing of the run is stored, then reads every message of the
// stream and holds the call until the caller goes away.
class HungStreamService final : public v1::TelemetryService::Service,
                                public v1::CatalogService::Service {
 public:
  HungStreamService() {
    grpc::ServerBuilder builder;
    builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(),
                             &port_);
    builder.RegisterService(static_cast<v1::TelemetryService::Service*>(this));
    builder.RegisterService(static_cast<v1::CatalogService::Service*>(this));
    server_ = builder.BuildAndStart();
  }
  ~HungStreamService() override {
    server_->Shutdown(std::chrono::system_clock::now());  // cancels the hang
  }

  std::string address() const { return absl::StrCat("127.0.0.1:", port_); }
  int streams_held() const { return streams_held_; }

  grpc::Status GetSku(grpc::ServerContext*, const v1::GetSkuRequest* request,
                      v1::GetSkuResponse* response) override {
    response->mutable_sku()->set_name(request->name());
    response->mutable_sku()->set_memory_gb(48);
    return grpc::Status::OK;
  }
  grpc::Status GetPool(grpc::ServerContext*, const v1::GetPoolRequest* request,
                       v1::GetPoolResponse* response) override {
    response->mutable_pool()->set_name(request->name());
    response->mutable_pool()->set_sku(kL40s);
    return grpc::Status::OK;
  }
  grpc::Status GetSampleProgress(
      grpc::ServerContext*, const v1::GetSampleProgressRequest* request,
      v1::GetSampleProgressResponse* response) override {
    response->set_run_id(request->run_id());
    response->set_committed_through_step(-1);
    return grpc::Status::OK;
  }
  grpc::Status StreamStepSamples(
      grpc::ServerContext* context,
      grpc::ServerReader<v1::StreamStepSamplesRequest>* reader,
      v1::StreamStepSamplesResponse*) override {
    ++streams_held_;
    v1::StreamStepSamplesRequest message;
    while (reader->Read(&message)) {
    }
    while (!context->IsCancelled()) absl::SleepFor(absl::Milliseconds(20));
    return grpc::Status(grpc::StatusCode::CANCELLED, "the caller went away");
  }

 private:
  int port_ = 0;
  std::unique_ptr<grpc::Server> server_;
  std::atomic<int> streams_held_{0};
};

// Slurm preempts a job with SIGTERM and kills it KillWait (30 s by default)
// later with SIGKILL. The agent is told to stop while its sample stream
// hangs on a service that never answers, and its uploads may outlast the
// kill (--upload_after_stop longer than KillWait): the SIGKILL lands while
// the agent waits on the network, and the PREEMPTED run must already be in
// the spool, whole, for the next start to upload.
TEST_F(AgentTest, KilledWhileASampleStreamHangsThePreemptedRunIsSpooled) {
  HungStreamService hung;
  std::string output;
  const int code = Agent(
      absl::StrCat(
          "--upload_after_stop=60s run --pool=l40s-adapters --sku=", kL40s,
          " --recipe=recipe.yaml -- ", TestData("fake_train.sh")),
      &output,
      absl::StrCat("FAKE_STEPS=20 FAKE_PAUSE_AT=4 FAKE_MIDWAY=", tmp_.path(),
                   "/midway FAKE_GO=", tmp_.path(), "/never"),
      hung.address(), "--signal=TERM --kill-after=30s 1.5s");
  EXPECT_EQ(code, 128 + SIGKILL) << output;  // KillWait ran out
  EXPECT_GE(hung.streams_held(), 1) << output;
  const std::vector<std::string> runs = agent::ListSpooledRuns(spool());
  ASSERT_EQ(runs.size(), 1u) << output;
  {
    absl::StatusOr<std::unique_ptr<agent::SpoolRun>> spooled =
        agent::SpoolRun::Open(spool(), runs[0]);
    ASSERT_TRUE(spooled.ok()) << spooled.status();
    absl::StatusOr<absl::optional<v1::BenchmarkRun>> summary =
        (*spooled)->ReadRun();
    ASSERT_TRUE(summary.ok()) << summary.status();
    ASSERT_TRUE(summary->has_value()) << "no summary in the spool\n" << output;
    EXPECT_EQ((*summary)->outcome(), v1::RUN_OUTCOME_PREEMPTED);
  }

  // The next start uploads it, samples and all.
  ASSERT_EQ(Agent("flush", &output), 0) << output;
  EXPECT_THAT(output, HasSubstr("uploaded 1, left in the spool 0"));
  const v1::BenchmarkRun run = StoredRun(runs[0]).run();
  EXPECT_EQ(run.outcome(), v1::RUN_OUTCOME_PREEMPTED);
  EXPECT_EQ(run.steps_attempted(), 4);
  EXPECT_EQ(Progress(runs[0]).committed_through_step(), 3);
}

// The same preemption with the uploads bounded well inside KillWait (as by
// default): the agent leaves the run in the spool and exits 3 on its own
// instead of waiting for the kill.
TEST_F(AgentTest, AStoppedAgentGivesUpOnAHungUploadBeforeTheKill) {
  HungStreamService hung;
  std::string output;
  const int code = Agent(
      absl::StrCat(
          "--upload_after_stop=2s run --pool=l40s-adapters --sku=", kL40s,
          " --recipe=recipe.yaml -- ", TestData("fake_train.sh")),
      &output,
      absl::StrCat("FAKE_STEPS=20 FAKE_PAUSE_AT=4 FAKE_MIDWAY=", tmp_.path(),
                   "/midway FAKE_GO=", tmp_.path(), "/never"),
      hung.address(), "--signal=TERM --kill-after=30s 1.5s");
  // timeout's code for a command that exited after its SIGTERM (the kill
  // would be 137); the agent's own is 3: spooled, not uploaded.
  EXPECT_EQ(code, 124) << output;
  EXPECT_THAT(output, HasSubstr("PREEMPTED"));
  EXPECT_THAT(output, HasSubstr("placement-agent flush uploads it"));
  EXPECT_EQ(agent::ListSpooledRuns(spool()).size(), 1u);
}

// A token the service does not take (here: one that may read the catalog
// but not upload) keeps the run in the spool, and `run` says so and fails;
// nothing moves to rejected/.
TEST_F(AgentTest, AnUploadRefusedForTheTokenKeepsTheRunAndFails) {
  const std::string token_file = tmp_.path() + "/token";
  ASSERT_EQ(RunCommand(absl::StrCat(PLACEMENTD_BINARY,
                                    " tokens create --role planner --name p "
                                    "--database_url '",
                                    db_.url(), "' > ", token_file)),
            0);
  server_.reset();
  absl::StatusOr<std::unique_ptr<PlacementdProcess>> server =
      PlacementdProcess::Start(db_.url(), {"--auth=true"});
  ASSERT_TRUE(server.ok()) << server.status();
  server_ = *std::move(server);
  ASSERT_TRUE(server_->WaitForHealth(true, absl::Seconds(30)));

  std::string output;
  const int code = Agent(
      absl::StrCat("--token_file=", token_file,
                   " run --pool=l40s-adapters --sku=", kL40s,
                   " --recipe=recipe.yaml -- ", TestData("fake_train.sh")),
      &output, "FAKE_STEPS=3");
  EXPECT_EQ(code, 4) << output;
  EXPECT_THAT(output, HasSubstr("PERMISSION_DENIED"));
  EXPECT_THAT(output, HasSubstr("NOT uploaded"));
  EXPECT_THAT(output, ::testing::Not(HasSubstr("GB, uploaded")));
  EXPECT_EQ(agent::ListSpooledRuns(spool()).size(), 1u);
  EXPECT_FALSE(fs::exists(spool() + "/rejected"));
  EXPECT_EQ(db_.QueryValue("SELECT count(*) FROM benchmark_runs"), "0");
}

TEST_F(AgentTest, UnreachableServiceAtStartStillRecordsIntoTheSpool) {
  std::string output;
  const int code = Agent(
      absl::StrCat("run --pool=l40s-adapters --sku=", kL40s,
                   " --recipe=recipe.yaml -- ", TestData("fake_train.sh")),
      &output, "", "127.0.0.1:1");
  EXPECT_EQ(code, 3) << output;
  EXPECT_THAT(output, HasSubstr("unreachable"));
  ASSERT_EQ(agent::ListSpooledRuns(spool()).size(), 1u);
  ASSERT_EQ(Agent("flush", &output), 0) << output;
  EXPECT_EQ(db_.QueryValue("SELECT count(*) FROM benchmark_runs"), "1");
}

TEST_F(AgentTest, GuessedOrContradictedSkusAreRefused) {
  std::string output;
  const std::string tail =
      absl::StrCat(" --recipe=recipe.yaml -- ", TestData("fake_train.sh"));
  // A family is not a SKU.
  EXPECT_EQ(Agent("run --pool=l40s-adapters --sku=A100" + tail, &output), 2);
  EXPECT_THAT(output, HasSubstr("A100-SXM4-80GB"));
  // Wrong case is not the exact name either.
  EXPECT_EQ(
      Agent("run --pool=l40s-adapters --sku=l40s-pcie-48gb" + tail, &output),
      2);
  EXPECT_THAT(output, HasSubstr("did you mean L40S-PCIE-48GB"));
  // No GPU, no --sku: nothing to name the node by.
  EXPECT_EQ(Agent("run --pool=l40s-adapters" + tail, &output), 2);
  EXPECT_THAT(output, HasSubstr("refusing to record evidence under a guessed"));
  // A pool of other cards.
  EXPECT_EQ(
      Agent(absl::StrCat("run --pool=a100-train --sku=", kL40s, tail), &output),
      2);
  EXPECT_THAT(output, HasSubstr("pool 'a100-train' has A100-SXM4-80GB"));
  // Detection that contradicts the operator.
  EXPECT_EQ(Agent(absl::StrCat("run --pool=l40s-adapters --sku=", kL40s,
                               " --nvidia_smi=", TestData("fake_nvidia_smi.sh"),
                               tail),
                  &output, "FAKE_SMI_NODE=testdata/h200-8gpu"),
            2);
  EXPECT_THAT(output, HasSubstr("contradicts detection"));
  EXPECT_EQ(db_.QueryValue("SELECT count(*) FROM benchmark_runs"), "0");
  EXPECT_TRUE(agent::ListSpooledRuns(spool()).empty());
}

TEST_F(AgentTest, DetectedSkuNeedsNoFlag) {
  std::string output;
  ASSERT_EQ(Agent(absl::StrCat("--nvidia_smi=", TestData("fake_nvidia_smi.sh"),
                               " detect"),
                  &output, "FAKE_SMI_NODE=testdata/h200-8gpu"),
            0)
      << output;
  EXPECT_THAT(output, HasSubstr("sku:     H200-SXM-141GB"));
  EXPECT_THAT(output, HasSubstr("gpus:    8"));
  EXPECT_THAT(output, HasSubstr("nvlink:  active"));
  EXPECT_EQ(Agent(absl::StrCat("--nvidia_smi=", TestData("fake_nvidia_smi.sh"),
                               " --json detect"),
                  &output, "FAKE_SMI_NODE=testdata/rtx6000-ada-1gpu"),
            1);
  EXPECT_THAT(output, HasSubstr("\"named\": false"));
  EXPECT_THAT(output, HasSubstr("NVIDIA RTX 6000 Ada Generation"));
  // No driver on this machine: what is missing, in words, and what to do.
  EXPECT_EQ(Agent("detect", &output), 1);
  EXPECT_THAT(output, HasSubstr("NVML could not be loaded"));
  EXPECT_THAT(output, HasSubstr("nvidia-smi is not installed"));
  EXPECT_THAT(output, HasSubstr("install the NVIDIA driver"));

  ASSERT_EQ(Agent(absl::StrCat("run --pool=l40s-adapters --nvidia_smi=",
                               TestData("fake_nvidia_smi.sh"),
                               " --recipe=recipe.yaml -- ",
                               TestData("fake_train.sh")),
                  &output, "FAKE_SMI_NODE=testdata/l40s-4gpu"),
            0)
      << output;
  EXPECT_EQ(StoredRun(RunIdFrom(output)).run().sku(), kL40s);
}

TEST_F(AgentTest, BakeOffPrintsACommandPerCandidatePool) {
  auto placement = v1::PlacementService::NewStub(server_->channel());
  v1::PlacePlanRequest request;
  absl::StatusOr<v1::Recipe> recipe = agent::ReadRecipeFile("recipe.yaml");
  ASSERT_TRUE(recipe.ok()) << recipe.status();
  *request.mutable_recipe() = *recipe;
  request.set_total_steps(10000);
  v1::PlacePlanResponse plan;
  ASSERT_TRUE(placement->PlacePlan(Deadline().get(), request, &plan).ok());
  ASSERT_TRUE(plan.has_bake_off());
  ASSERT_FALSE(plan.bake_off().runs().empty());

  std::string output;
  ASSERT_EQ(Agent("bakeoff " + plan.plan_id(), &output), 0) << output;
  for (const v1::BakeOffRun& run : plan.bake_off().runs()) {
    // The first choice is measured by the job itself, not by a bake-off.
    EXPECT_NE(run.pool(), plan.candidates(0).pool());
    const std::string file = absl::StrCat("bakeoff-", run.pool(), ".json");
    // A short run: the command runs the steps the plan asks, no more.
    ASSERT_GT(run.steps(), 0);
    EXPECT_LT(run.steps(), request.total_steps());
    EXPECT_THAT(output,
                HasSubstr(absl::StrCat("\nPLACEMENT_MAX_STEPS=", run.steps(),
                                       " placement-agent run --server ",
                                       server_->address(), " --pool ",
                                       run.pool(), " --recipe ", file,
                                       " --plan_id ", plan.plan_id(), " -- ")));
    EXPECT_THAT(output, HasSubstr(absl::StrCat("# why: ", run.reason())));
    // The recipe printed for the pool reads back as the plan's recipe.
    const std::string open = absl::StrCat("cat > ", file, " <<'EOF'\n");
    const size_t begin = output.find(open);
    ASSERT_NE(begin, std::string::npos);
    const size_t end = output.find("\nEOF\n", begin);
    absl::StatusOr<v1::Recipe> printed = agent::ParseRecipeText(
        output.substr(begin + open.size(), end - begin - open.size()), file);
    ASSERT_TRUE(printed.ok()) << printed.status();
    EXPECT_EQ(printed->model(), plan.bake_off().recipe().model());
    EXPECT_EQ(printed->gpu_count(), run.gpu_count());
  }
  EXPECT_EQ(Agent("bakeoff " + NewUuid(), &output), 1);
  EXPECT_THAT(output, HasSubstr("NOT_FOUND"));
}

TEST(SpoolTest, AppendReadTornTailAndSummaryOnce) {
  TempDir tmp;
  const std::string run_id = NewUuid();
  auto run = agent::SpoolRun::Create(tmp.path() + "/a/b", run_id);
  ASSERT_TRUE(run.ok()) << run.status();
  EXPECT_TRUE(absl::IsAlreadyExists(
      agent::SpoolRun::Create(tmp.path() + "/a/b", run_id).status()));
  // Locked while its recorder holds it.
  EXPECT_TRUE(absl::IsUnavailable(
      agent::SpoolRun::Open(tmp.path() + "/a/b", run_id).status()));
  std::vector<v1::StepSample> samples(3);
  for (int i = 0; i < 3; ++i) {
    samples[i].set_step(i);
    samples[i].set_step_time_seconds(0.5);
    samples[i].mutable_time()->set_seconds(1'750'000'000 + i);
  }
  ASSERT_TRUE((*run)->AppendSamples(samples).ok());
  {
    std::ofstream torn((*run)->dir() + "/samples.jsonl", std::ios::app);
    torn << "{\"step\": \"3\", \"step_ti";
  }
  auto read = (*run)->ReadSamples();
  ASSERT_TRUE(read.ok()) << read.status();
  ASSERT_EQ(read->size(), 3u);
  EXPECT_EQ((*read)[2].SerializeAsString(), samples[2].SerializeAsString());

  v1::BenchmarkRun summary;
  summary.set_run_id(run_id);
  summary.set_steps_attempted(3);
  ASSERT_TRUE((*run)->WriteRun(summary).ok());
  EXPECT_TRUE(absl::IsAlreadyExists((*run)->WriteRun(summary)));
  auto back = (*run)->ReadRun();
  ASSERT_TRUE(back.ok() && back->has_value());
  EXPECT_EQ((*back)->SerializeAsString(), summary.SerializeAsString());
  EXPECT_EQ(agent::ListSpooledRuns(tmp.path() + "/a/b"),
            std::vector<std::string>{run_id});
  run->reset();
  auto reopened = agent::SpoolRun::Open(tmp.path() + "/a/b", run_id);
  ASSERT_TRUE(reopened.ok());
  ASSERT_TRUE((*reopened)->Remove().ok());
  EXPECT_TRUE(agent::ListSpooledRuns(tmp.path() + "/a/b").empty());
}

TEST(ConnectionTest, TokenResolutionOrder) {
  TempDir tmp;
  const std::string file = tmp.path() + "/token";
  std::ofstream(file) << "from-file\n";
  const std::string home = tmp.path() + "/home";
  fs::create_directories(home + "/.config/placement");
  std::ofstream(home + "/.config/placement/token") << "from-home\n";
  setenv("HOME", home.c_str(), 1);
  unsetenv("PLACEMENT_TOKEN");
  unsetenv("PLACEMENT_TOKEN_FILE");
  EXPECT_EQ(*agent::ResolveToken(""), "from-home");
  setenv("PLACEMENT_TOKEN_FILE", file.c_str(), 1);
  EXPECT_EQ(*agent::ResolveToken(""), "from-file");
  setenv("PLACEMENT_TOKEN", "from-env", 1);
  EXPECT_EQ(*agent::ResolveToken(""), "from-env");
  EXPECT_EQ(*agent::ResolveToken(file), "from-file");
  EXPECT_TRUE(
      absl::IsNotFound(agent::ResolveToken(tmp.path() + "/no").status()));
  unsetenv("PLACEMENT_TOKEN");
  unsetenv("PLACEMENT_TOKEN_FILE");
  fs::remove(home + "/.config/placement/token");
  EXPECT_EQ(*agent::ResolveToken(""), "");
}

// Records the authorization header of every GetSampleProgress call.
class RecordingTelemetry : public v1::TelemetryService::Service {
 public:
  grpc::Status GetSampleProgress(
      grpc::ServerContext* context, const v1::GetSampleProgressRequest* request,
      v1::GetSampleProgressResponse* response) override {
    auto it = context->client_metadata().find("authorization");
    std::lock_guard<std::mutex> lock(mu_);
    seen_.push_back(it == context->client_metadata().end()
                        ? "(none)"
                        : std::string(it->second.data(), it->second.size()));
    response->set_run_id(request->run_id());
    response->set_committed_through_step(0);
    return grpc::Status::OK;
  }
  std::vector<std::string> seen() {
    std::lock_guard<std::mutex> lock(mu_);
    return seen_;
  }

 private:
  std::mutex mu_;
  std::vector<std::string> seen_;
};

TEST(ConnectionTest, BearerTokenOnEveryCallWhenConfigured) {
  RecordingTelemetry service;
  int port = 0;
  grpc::ServerBuilder builder;
  builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(),
                           &port);
  builder.RegisterService(&service);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  ASSERT_NE(port, 0);
  const std::string address = absl::StrCat("127.0.0.1:", port);
  std::vector<v1::StepSample> one(1);
  for (const std::string& token : {std::string("s3cret"), std::string()}) {
    absl::StatusOr<agent::Connection> connection =
        agent::Connection::Make(address, token, "");
    ASSERT_TRUE(connection.ok());
    agent::Uploader uploader(*connection, agent::Backoff{});
    int64_t committed = -2;
    ASSERT_TRUE(uploader.SyncSamples(NewUuid(), one, false, &committed).ok());
    EXPECT_EQ(committed, 0);
  }
  EXPECT_EQ(service.seen(),
            (std::vector<std::string>{"Bearer s3cret", "(none)"}));
  server->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(2));
}

TEST(ConnectionTest, UnreadableCaFileIsAnError) {
  EXPECT_TRUE(absl::IsInvalidArgument(
      agent::Connection::Make("127.0.0.1:1", "", "/nonexistent/ca.pem")
          .status()));
}

}  // namespace
}  // namespace placement
