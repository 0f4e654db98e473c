// Faults with real processes: placementd killed with SIGKILL in the middle of
// eight agents' streams and uploads, PostgreSQL stopped under placementd, and
// SIGTERM during load. In every case nothing acknowledged is lost and
// nothing is stored twice.
#include <signal.h>

#include <atomic>
#include <set>
#include <thread>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "placement/v1/catalog.grpc.pb.h"
#include "placement/v1/placement.grpc.pb.h"
#include "placement/v1/telemetry.grpc.pb.h"
#include "tests/support/fixtures.h"
#include "tests/support/placementd_process.h"
#include "tests/support/private_cluster.h"
#include "tests/support/test_database.h"

namespace placement {
namespace {

using ::placement::testing::Deadline;
using ::placement::testing::NewUuid;
using ::placement::testing::PlacementdPath;
using ::placement::testing::PlacementdProcess;
using ::placement::testing::PrivateCluster;
using ::placement::testing::RunCommand;
using ::placement::testing::SucceededRun;
using ::placement::testing::TestDatabase;
using ::placement::testing::TrainingPool;

constexpr char kSku[] = "L40S-PCIE-48GB";

std::unique_ptr<PlacementdProcess> Start(const std::string& url) {
  auto process = PlacementdProcess::Start(url);
  EXPECT_TRUE(process.ok()) << process.status();
  if (!process.ok()) return nullptr;
  EXPECT_TRUE((*process)->WaitForHealth(true, absl::Seconds(15)))
      << (*process)->LogTail();
  return *std::move(process);
}

void CreatePool(std::shared_ptr<grpc::Channel> channel) {
  auto catalog = v1::CatalogService::NewStub(channel);
  v1::CreatePoolRequest request;
  *request.mutable_pool() = TrainingPool("l40s", kSku, 4, 8);
  v1::CreatePoolResponse response;
  grpc::Status status =
      catalog->CreatePool(Deadline().get(), request, &response);
  ASSERT_TRUE(status.ok()) << status.error_message();
}

v1::StreamStepSamplesRequest Batch(const std::string& run_id, int64_t first,
                                   int64_t count) {
  v1::StreamStepSamplesRequest request;
  request.set_run_id(run_id);
  const int64_t start = absl::ToUnixSeconds(absl::Now()) - 7200;
  for (int64_t step = first; step < first + count; ++step) {
    v1::StepSample* s = request.add_samples();
    s->set_step(step);
    s->mutable_time()->set_seconds(start + step / 10);
    s->set_step_time_seconds(0.1);
    s->set_memory_allocated_gb(30);
    s->set_memory_reserved_gb(32);
    s->set_tokens(4096);
  }
  return request;
}

// The address the agents should use now (it changes when placementd is
// restarted on a new free port).
class Endpoint {
 public:
  void Set(std::shared_ptr<grpc::Channel> channel) {
    absl::MutexLock lock(&mu_);
    channel_ = std::move(channel);
  }
  std::shared_ptr<grpc::Channel> Get() {
    absl::MutexLock lock(&mu_);
    return channel_;
  }

 private:
  absl::Mutex mu_;
  std::shared_ptr<grpc::Channel> channel_;
};

std::string RollupMismatches(const TestDatabase& db) {
  return db.QueryValue(R"sql(
    WITH raw AS (
      SELECT recipe_key, sku_id, count(*) AS runs, sum(retries) AS retries,
             sum(steps_succeeded) AS steps_succeeded,
             sum(gpu_microseconds) AS gpu_microseconds
      FROM benchmark_runs GROUP BY recipe_key, sku_id)
    SELECT count(*) FROM raw FULL JOIN evidence_rollups e USING (recipe_key, sku_id)
    WHERE raw.runs IS DISTINCT FROM e.runs
       OR raw.retries IS DISTINCT FROM e.retries
       OR raw.steps_succeeded IS DISTINCT FROM e.steps_succeeded
       OR raw.gpu_microseconds IS DISTINCT FROM e.gpu_microseconds)sql");
}

// Long: the agents' loop (stream, resume from what committed, upload
// until acknowledged), the kill in the middle and the audit after it
// share each agent's record of what was acknowledged; apart, each
// piece would take all of it.
TEST(CrashTest, KillNineMidStreamLosesNothingAcknowledged) {
  TestDatabase db;
  db.Migrate();
  std::unique_ptr<PlacementdProcess> placementd = Start(db.url());
  ASSERT_NE(placementd, nullptr);
  CreatePool(placementd->channel());
  Endpoint endpoint;
  endpoint.Set(placementd->channel());

  constexpr int kAgents = 8;
  constexpr int64_t kSteps = 3000;  // per agent, in batches of 150
  constexpr int64_t kBatch = 150;
  struct Agent {
    std::string run_id = NewUuid();
    int64_t acknowledged_through = -1;  // committed, as the server said
    std::set<std::string> acknowledged_runs;
    std::set<std::string> attempted_runs;
    bool done = false;
  };
  std::vector<Agent> agents(kAgents);
  std::atomic<int> killed{0};
  const absl::Time give_up = absl::Now() + absl::Seconds(90);

  std::vector<std::thread> threads;
  for (Agent& agent : agents) {
    threads.emplace_back([&] {
      int64_t next = 0;
      std::string pending_run;  // an upload not yet acknowledged
      while (absl::Now() < give_up) {
        auto channel = endpoint.Get();
        auto telemetry = v1::TelemetryService::NewStub(channel);
        // A few batches a stream; the response acknowledges what committed.
        auto context = Deadline(10);
        v1::StreamStepSamplesResponse response;
        auto writer = telemetry->StreamStepSamples(context.get(), &response);
        for (int i = 0; i < 3 && next + i * kBatch < kSteps; ++i) {
          if (!writer->Write(
                  Batch(agent.run_id, next + i * kBatch,
                        std::min(kBatch, kSteps - next - i * kBatch)))) {
            break;
          }
        }
        writer->WritesDone();
        if (writer->Finish().ok()) {
          agent.acknowledged_through = response.committed_through_step();
          next = agent.acknowledged_through + 1;
        } else {
          // Resume from what the service committed: the tail is re-sent.
          absl::SleepFor(absl::Milliseconds(100));
          v1::GetSampleProgressRequest request;
          request.set_run_id(agent.run_id);
          v1::GetSampleProgressResponse progress;
          if (v1::TelemetryService::NewStub(endpoint.Get())
                  ->GetSampleProgress(Deadline(5).get(), request, &progress)
                  .ok()) {
            next = progress.committed_through_step() + 1;
          }
          continue;
        }
        // And a finished run now and then, retried under the same id
        // until acknowledged.
        if (pending_run.empty()) pending_run = NewUuid();
        v1::UploadBenchmarkRunRequest upload;
        *upload.mutable_run() = SucceededRun("l40s", kSku);
        upload.mutable_run()->set_run_id(pending_run);
        upload.mutable_run()->mutable_start_time()->set_seconds(1'790'000'000);
        upload.mutable_run()->mutable_end_time()->set_seconds(1'790'003'600);
        agent.attempted_runs.insert(pending_run);
        v1::UploadBenchmarkRunResponse ack;
        if (telemetry->UploadBenchmarkRun(Deadline(10).get(), upload, &ack)
                .ok()) {
          agent.acknowledged_runs.insert(pending_run);
          pending_run.clear();
        }
        if (next >= kSteps && pending_run.empty()) {
          agent.done = true;
          return;
        }
      }
    });
  }

  // Kill placementd without warning in the middle, then bring it back.
  absl::SleepFor(absl::Milliseconds(1500));
  EXPECT_EQ(placementd->Stop(SIGKILL, absl::Seconds(10)), 128 + SIGKILL);
  killed = 1;
  absl::SleepFor(absl::Milliseconds(500));
  placementd = Start(db.url());
  ASSERT_NE(placementd, nullptr);
  endpoint.Set(placementd->channel());
  for (std::thread& thread : threads) thread.join();

  int64_t runs_acknowledged = 0;
  std::set<std::string> attempted;
  for (const Agent& agent : agents) {
    SCOPED_TRACE(agent.run_id);
    EXPECT_TRUE(agent.done);
    EXPECT_EQ(agent.acknowledged_through, kSteps - 1);
    // Every sample exactly once: no gap, no duplicate.
    EXPECT_EQ(db.QueryValue(absl::StrCat(
                  "SELECT count(*) || '/' || count(DISTINCT step) || '/' || "
                  "max(step) FROM step_samples WHERE run_id = '",
                  agent.run_id, "'")),
              absl::StrCat(kSteps, "/", kSteps, "/", kSteps - 1));
    for (const std::string& run : agent.acknowledged_runs) {
      EXPECT_EQ(db.QueryValue(absl::StrCat(
                    "SELECT count(*) FROM benchmark_runs WHERE run_id = '", run,
                    "'")),
                "1");
    }
    runs_acknowledged += agent.acknowledged_runs.size();
    attempted.insert(agent.attempted_runs.begin(), agent.attempted_runs.end());
  }
  // Runs stored: the acknowledged ones, plus at most the ones whose
  // acknowledgement died with the process (their retry then got the
  // original one) - never a run twice.
  EXPECT_EQ(db.QueryValue("SELECT count(*) - count(DISTINCT run_id) FROM "
                          "benchmark_runs"),
            "0");
  EXPECT_EQ(db.QueryValue("SELECT count(*) FROM benchmark_runs"),
            std::to_string(runs_acknowledged));
  EXPECT_EQ(RollupMismatches(db), "0");
  std::cout << "kill -9 under " << kAgents << " agents: " << kAgents * kSteps
            << " samples and " << runs_acknowledged
            << " runs acknowledged, all stored exactly once\n";
}

bool HasWarning(const v1::PlacePlanResponse& plan, const std::string& prefix) {
  for (const std::string& w : plan.warnings()) {
    if (absl::StartsWith(w, prefix)) return true;
  }
  return false;
}

TEST(DatabaseFaultTest, PlansKeepComingFromMemoryAndEverythingRecovers) {
  PrivateCluster cluster;
  ASSERT_FALSE(cluster.url().empty());
  std::string output;
  ASSERT_EQ(
      RunCommand(absl::StrCat(PlacementdPath(), " migrate up --database_url='",
                              cluster.url(), "' 2>&1"),
                 &output),
      0)
      << output;
  std::unique_ptr<PlacementdProcess> placementd = Start(cluster.url());
  ASSERT_NE(placementd, nullptr);
  CreatePool(placementd->channel());
  auto placement = v1::PlacementService::NewStub(placementd->channel());
  auto telemetry = v1::TelemetryService::NewStub(placementd->channel());
  v1::PlacePlanRequest request;
  *request.mutable_recipe() = SucceededRun("l40s", kSku).recipe();
  request.set_total_steps(1000);
  v1::PlacePlanResponse plan;
  ASSERT_TRUE(placement->PlacePlan(Deadline().get(), request, &plan).ok());

  ASSERT_EQ(cluster.Run("stop", nullptr, "immediate"), 0);
  EXPECT_TRUE(placementd->WaitForHealth(false, absl::Seconds(10)));
  // Writes fail fast with UNAVAILABLE ...
  v1::UploadBenchmarkRunRequest upload;
  *upload.mutable_run() = SucceededRun("l40s", kSku);
  v1::UploadBenchmarkRunResponse ack;
  absl::Time start = absl::Now();
  EXPECT_EQ(telemetry->UploadBenchmarkRun(Deadline(30).get(), upload, &ack)
                .error_code(),
            grpc::StatusCode::UNAVAILABLE);
  EXPECT_LT(absl::Now() - start, absl::Seconds(10));
  // ... while plans keep coming from memory, saying they were not recorded,
  // and, once the evidence is old, that it is stale.
  plan.Clear();
  start = absl::Now();
  ASSERT_TRUE(placement->PlacePlan(Deadline(30).get(), request, &plan).ok());
  EXPECT_LT(absl::Now() - start, absl::Seconds(10));
  EXPECT_EQ(plan.candidates_size(), 1);
  EXPECT_TRUE(HasWarning(plan, "not_recorded"));
  absl::SleepFor(absl::Seconds(11) - (absl::Now() - start));
  plan.Clear();
  ASSERT_TRUE(placement->PlacePlan(Deadline(30).get(), request, &plan).ok());
  EXPECT_TRUE(HasWarning(plan, "stale_evidence"));

  // PostgreSQL returns: everything recovers without a restart.
  ASSERT_EQ(cluster.Run("start"), 0);
  EXPECT_TRUE(placementd->WaitForHealth(true, absl::Seconds(20)));
  bool recorded = false;
  for (int i = 0; i < 50 && !recorded; ++i) {
    plan.Clear();
    recorded = placement->PlacePlan(Deadline().get(), request, &plan).ok() &&
               !HasWarning(plan, "not_recorded") &&
               !HasWarning(plan, "stale_evidence");
    if (!recorded) absl::SleepFor(absl::Milliseconds(100));
  }
  EXPECT_TRUE(recorded);

  // Connections killed by the server are replaced.
  ASSERT_EQ(
      RunCommand(
          absl::StrCat("psql '", cluster.url(),
                       "' -qtAc \"SELECT count(pg_terminate_backend(pid)) FROM "
                       "pg_stat_activity WHERE datname = 'postgres' AND pid <> "
                       "pg_backend_pid()\" 2>&1"),
          &output),
      0)
      << output;
  bool uploaded = false;
  for (int i = 0; i < 20 && !uploaded; ++i) {
    upload.mutable_run()->set_run_id(NewUuid());
    uploaded =
        telemetry->UploadBenchmarkRun(Deadline().get(), upload, &ack).ok();
  }
  EXPECT_TRUE(uploaded);
  EXPECT_EQ(placementd->Stop(SIGTERM, absl::Seconds(15)), 0);
}

TEST(ShutdownTest, SigtermDuringLoadFinishesInFlightCallsAndLosesNothing) {
  TestDatabase db;
  db.Migrate();
  std::unique_ptr<PlacementdProcess> placementd = Start(db.url());
  ASSERT_NE(placementd, nullptr);
  CreatePool(placementd->channel());
  std::atomic<bool> stop{false};
  absl::Mutex mu;
  std::set<std::string> acknowledged;
  std::atomic<int> refused{0};
  std::vector<std::thread> clients;
  for (int c = 0; c < 4; ++c) {
    clients.emplace_back([&] {
      auto telemetry = v1::TelemetryService::NewStub(placementd->channel());
      while (!stop) {
        v1::UploadBenchmarkRunRequest upload;
        *upload.mutable_run() = SucceededRun("l40s", kSku);
        v1::UploadBenchmarkRunResponse ack;
        grpc::Status status =
            telemetry->UploadBenchmarkRun(Deadline(10).get(), upload, &ack);
        if (status.ok()) {
          absl::MutexLock lock(&mu);
          acknowledged.insert(upload.run().run_id());
        } else {
          ++refused;
          absl::SleepFor(absl::Milliseconds(20));
        }
      }
    });
  }
  absl::SleepFor(absl::Seconds(1));
  const absl::Time sent = absl::Now();
  EXPECT_EQ(placementd->Stop(SIGTERM, absl::Seconds(15)), 0);
  EXPECT_LT(absl::Now() - sent, absl::Seconds(15));
  absl::SleepFor(absl::Milliseconds(300));  // calls after the stop fail
  stop = true;
  for (std::thread& client : clients) client.join();
  EXPECT_GT(refused.load(), 0);
  ASSERT_FALSE(acknowledged.empty());
  for (const std::string& run : acknowledged) {
    EXPECT_EQ(
        db.QueryValue(absl::StrCat(
            "SELECT count(*) FROM benchmark_runs WHERE run_id = '", run, "'")),
        "1");
  }
  std::cout << acknowledged.size()
            << " uploads acknowledged before SIGTERM, all stored\n";
}

}  // namespace
}  // namespace placement
