// Sample retention (storage/stores/sample_retention.h, docs/RELIABILITY.md
// "Sample retention") over loopback gRPC on a real PostgreSQL: dropping an old
// month's step_samples partition leaves the cost report and a plan exactly
// as they were, GetSampleProgress and ListBenchmarkRuns say which runs'
// samples were dropped, a partition that still received a sample within the
// retention is kept, and a retention of zero drops nothing. placementd's
// partition maintainer applies it and counts it in /metrics.
#include "storage/stores/sample_retention.h"

#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "placement/v1/cost.grpc.pb.h"
#include "placement/v1/placement.grpc.pb.h"
#include "placement/v1/telemetry.grpc.pb.h"
#include "storage/session/db_session.h"
#include "tests/support/api_client.h"
#include "tests/support/fixtures.h"
#include "tests/support/in_process_server.h"
#include "tests/support/metrics_scrape.h"

namespace placement {
namespace {

using ::placement::testing::ApiClient;
using ::placement::testing::Deadline;
using ::placement::testing::InProcessServer;
using ::placement::testing::NewUuid;
using ::placement::testing::PlanFor;
using ::placement::testing::SucceededRun;
using ::placement::testing::TrainingPool;

constexpr char kL40s[] = "L40S-PCIE-48GB";
constexpr char kPool[] = "l40s-adapters";
constexpr absl::Duration kDay = absl::Hours(24);
constexpr absl::Duration kRetention = absl::Hours(24 * 60);

void SetTime(absl::Time t, google::protobuf::Timestamp* out) {
  out->set_seconds(absl::ToUnixSeconds(t));
}

// `count` samples of one run, one a second from `start`.
v1::StreamStepSamplesRequest Samples(const std::string& run_id,
                                     absl::Time start, int count) {
  v1::StreamStepSamplesRequest request;
  request.set_run_id(run_id);
  for (int step = 0; step < count; ++step) {
    v1::StepSample* s = request.add_samples();
    s->set_step(step);
    SetTime(start + absl::Seconds(step), s->mutable_time());
    s->set_step_time_seconds(3.2);
    s->set_memory_allocated_gb(30.25);
    s->set_memory_reserved_gb(32);
    s->set_tokens(8192);
  }
  return request;
}

// The value of the unlabelled series `name` in a /metrics text; -1 when it
// is not there.
double MetricValue(const std::string& metrics, const std::string& name) {
  const std::string line = "\n" + name + " ";
  const size_t at = metrics.find(line);
  if (at == std::string::npos) return -1;
  return std::strtod(metrics.c_str() + at + line.size(), nullptr);
}

class SampleRetentionTest : public ::testing::Test {
 protected:
  SampleRetentionTest()
      : telemetry_(v1::TelemetryService::NewStub(server_.channel())),
        placement_(v1::PlacementService::NewStub(server_.channel())),
        cost_(v1::CostService::NewStub(server_.channel())) {
    ApiClient(server_.channel()).CreatePool(TrainingPool(kPool, kL40s, 4, 4));
  }

  // A run that ended at `end`, uploaded, with `samples` samples streamed
  // from an hour before, filed in the month of that time (whose partition
  // is created here: placementd creates them from last month on only).
  std::string RunWithSamples(absl::Time end, int samples) {
    const absl::Time start = end - absl::Hours(1);
    server_.db().Execute(
        absl::StrCat("SELECT placement_ensure_sample_partitions(to_timestamp(",
                     absl::ToUnixSeconds(start), "), 1)"));
    v1::BenchmarkRun run = SucceededRun(kPool, kL40s);
    SetTime(start, run.mutable_start_time());
    SetTime(end, run.mutable_end_time());
    v1::UploadBenchmarkRunRequest upload;
    *upload.mutable_run() = run;
    v1::UploadBenchmarkRunResponse uploaded;
    grpc::Status status =
        telemetry_->UploadBenchmarkRun(Deadline().get(), upload, &uploaded);
    EXPECT_TRUE(status.ok()) << status.error_message();

    auto context = Deadline(30);
    v1::StreamStepSamplesResponse streamed;
    auto writer = telemetry_->StreamStepSamples(context.get(), &streamed);
    EXPECT_TRUE(writer->Write(Samples(run.run_id(), start, samples)));
    writer->WritesDone();
    status = writer->Finish();
    EXPECT_TRUE(status.ok()) << status.error_message();
    EXPECT_EQ(streamed.samples_stored(), samples);
    return run.run_id();
  }

  // As if the run's last sample had been stored `age` ago.
  void AgeStream(const std::string& run_id, absl::Duration age) {
    server_.db().Execute(absl::StrCat(
        "UPDATE sample_streams SET updated_at = now() - make_interval(secs => ",
        absl::ToInt64Seconds(age), ") WHERE run_id = '", run_id, "'"));
  }

  std::string PartitionOf(const std::string& run_id) {
    return server_.db().QueryValue(absl::StrCat(
        "SELECT tableoid::regclass::text FROM step_samples WHERE run_id = '",
        run_id, "' LIMIT 1"));
  }

  bool TableExists(const std::string& name) {
    return server_.db().QueryValue(absl::StrCat("SELECT to_regclass('", name,
                                                "') IS NOT NULL")) == "t";
  }

  int64_t SamplesOf(const std::string& run_id) {
    return std::stoll(server_.db().QueryValue(absl::StrCat(
        "SELECT count(*) FROM step_samples WHERE run_id = '", run_id, "'")));
  }

  absl::StatusOr<storage::SampleRetentionPass> Drop(absl::Duration retention) {
    storage::DbSession session(server_.db().url());
    return storage::DropExpiredSamplePartitions(session, retention);
  }

  v1::GetSampleProgressResponse Progress(const std::string& run_id) {
    v1::GetSampleProgressRequest request;
    request.set_run_id(run_id);
    v1::GetSampleProgressResponse response;
    grpc::Status status =
        telemetry_->GetSampleProgress(Deadline().get(), request, &response);
    EXPECT_TRUE(status.ok()) << status.error_message();
    return response;
  }

  // Every listed run's summary, by run id.
  std::map<std::string, v1::BenchmarkRunSummary> Listed() {
    v1::ListBenchmarkRunsRequest request;
    request.set_page_size(1000);
    v1::ListBenchmarkRunsResponse response;
    grpc::Status status =
        telemetry_->ListBenchmarkRuns(Deadline().get(), request, &response);
    EXPECT_TRUE(status.ok()) << status.error_message();
    std::map<std::string, v1::BenchmarkRunSummary> runs;
    for (const v1::BenchmarkRunSummary& run : response.runs()) {
      runs[run.run_id()] = run;
    }
    return runs;
  }

  // The cost report over every day of the test's runs, by SKU, pool, day
  // and outcome, as bytes.
  std::string CostReport() {
    const absl::Time today =
        absl::FromUnixSeconds(absl::ToUnixSeconds(absl::Now()) / 86400 * 86400);
    v1::GetCostReportRequest request;
    SetTime(today - kDay * 200, request.mutable_start_time());
    SetTime(today + kDay, request.mutable_end_time());
    for (v1::CostDimension d :
         {v1::COST_DIMENSION_SKU, v1::COST_DIMENSION_POOL,
          v1::COST_DIMENSION_DAY, v1::COST_DIMENSION_OUTCOME}) {
      request.add_group_by(d);
    }
    request.set_page_size(1000);
    v1::GetCostReportResponse response;
    grpc::Status status =
        cost_->GetCostReport(Deadline().get(), request, &response);
    EXPECT_TRUE(status.ok()) << status.error_message();
    EXPECT_GT(response.rows_size(), 0);
    return response.SerializeAsString();
  }

  // A plan of the uploaded runs' recipe, once they are its evidence,
  // without what differs between any two plans (its id and times).
  std::string Plan() {
    v1::PlacePlanResponse plan;
    for (int i = 0; i < 100; ++i) {
      plan.Clear();
      grpc::Status status = placement_->PlacePlan(
          Deadline().get(), PlanFor(SucceededRun(kPool, kL40s).recipe()),
          &plan);
      EXPECT_TRUE(status.ok()) << status.error_message();
      if (plan.candidates_size() > 0 &&
          plan.candidates(0).basis() == v1::EVIDENCE_BASIS_MEASURED) {
        break;
      }
      absl::SleepFor(absl::Milliseconds(50));
    }
    EXPECT_EQ(plan.candidates(0).basis(), v1::EVIDENCE_BASIS_MEASURED);
    plan.clear_plan_id();
    plan.clear_create_time();
    plan.clear_evidence_time();
    return plan.SerializeAsString();
  }

  InProcessServer server_;
  std::unique_ptr<v1::TelemetryService::Stub> telemetry_;
  std::unique_ptr<v1::PlacementService::Stub> placement_;
  std::unique_ptr<v1::CostService::Stub> cost_;
};

TEST_F(SampleRetentionTest, DropsOnlyOldIdleMonthsAndKeepsRunsCostAndPlans) {
  const absl::Time now = absl::Now();
  // 150 and 100 days ago: two months, both ended over 60 days ago.
  const std::string old_run = RunWithSamples(now - kDay * 150, 50);
  const std::string resumed_run = RunWithSamples(now - kDay * 100, 40);
  const std::string recent_run = RunWithSamples(now - absl::Hours(2), 30);
  AgeStream(old_run, kDay * 149);
  // resumed_run's stream stored its samples just now: a sample inside the
  // retention keeps its month.
  const std::string old_partition = PartitionOf(old_run);
  const std::string kept_partition = PartitionOf(resumed_run);
  const std::string recent_partition = PartitionOf(recent_run);
  ASSERT_NE(old_partition, kept_partition);
  ASSERT_NE(old_partition, "step_samples_default");

  const std::string cost_before = CostReport();
  const std::string plan_before = Plan();
  const std::string runs_before = server_.db().QueryValue(
      "SELECT md5(string_agg(r::text, '|' ORDER BY run_id)) "
      "FROM benchmark_runs r");

  absl::StatusOr<storage::SampleRetentionPass> pass = Drop(kRetention);
  ASSERT_TRUE(pass.ok()) << pass.status();
  EXPECT_EQ(pass->dropped, std::vector<std::string>{old_partition});
  EXPECT_EQ(pass->runs_marked, 1);
  EXPECT_EQ(pass->kept_recent, 1);
  EXPECT_FALSE(pass->locked_elsewhere);
  EXPECT_FALSE(TableExists(old_partition));
  EXPECT_TRUE(TableExists(kept_partition));
  EXPECT_TRUE(TableExists(recent_partition));
  EXPECT_TRUE(TableExists("step_samples_default"));
  EXPECT_EQ(SamplesOf(old_run), 0);
  EXPECT_EQ(SamplesOf(resumed_run), 40);
  EXPECT_EQ(SamplesOf(recent_run), 30);

  // The runs, their cost and what they taught the planner are untouched.
  EXPECT_EQ(server_.db().QueryValue(
                "SELECT md5(string_agg(r::text, '|' ORDER BY run_id)) "
                "FROM benchmark_runs r"),
            runs_before);
  EXPECT_EQ(CostReport(), cost_before);
  EXPECT_EQ(Plan(), plan_before);

  // The progress still says what was stored, and that it was dropped.
  const v1::GetSampleProgressResponse dropped = Progress(old_run);
  EXPECT_EQ(dropped.committed_through_step(), 49);
  EXPECT_EQ(dropped.samples_stored(), 50);
  ASSERT_TRUE(dropped.has_samples_dropped_time());
  EXPECT_LE(std::abs(dropped.samples_dropped_time().seconds() -
                     absl::ToUnixSeconds(absl::Now())),
            600);
  EXPECT_FALSE(Progress(resumed_run).has_samples_dropped_time());
  EXPECT_FALSE(Progress(recent_run).has_samples_dropped_time());

  std::map<std::string, v1::BenchmarkRunSummary> listed = Listed();
  ASSERT_EQ(listed.size(), 3u);
  EXPECT_EQ(listed[old_run].samples_dropped_time().seconds(),
            dropped.samples_dropped_time().seconds());
  EXPECT_FALSE(listed[resumed_run].has_samples_dropped_time());
  EXPECT_FALSE(listed[recent_run].has_samples_dropped_time());

  // Once the resumed run's stream is idle past the retention, its month
  // goes too; a second pass finds nothing more.
  AgeStream(resumed_run, kDay * 99);
  pass = Drop(kRetention);
  ASSERT_TRUE(pass.ok()) << pass.status();
  EXPECT_EQ(pass->dropped, std::vector<std::string>{kept_partition});
  EXPECT_TRUE(Listed()[resumed_run].has_samples_dropped_time());
  pass = Drop(kRetention);
  ASSERT_TRUE(pass.ok()) << pass.status();
  EXPECT_TRUE(pass->dropped.empty());
  EXPECT_EQ(CostReport(), cost_before);
  EXPECT_EQ(Plan(), plan_before);
}

TEST_F(SampleRetentionTest, ZeroRetentionDropsNothing) {
  const std::string old_run = RunWithSamples(absl::Now() - kDay * 150, 20);
  AgeStream(old_run, kDay * 149);
  const std::string partition = PartitionOf(old_run);
  const std::string partitions_before = server_.db().QueryValue(
      "SELECT string_agg(inhrelid::regclass::text, ',' ORDER BY 1) "
      "FROM pg_inherits WHERE inhparent = 'step_samples'::regclass");

  absl::StatusOr<storage::SampleRetentionPass> pass =
      Drop(absl::ZeroDuration());
  ASSERT_TRUE(pass.ok()) << pass.status();
  EXPECT_TRUE(pass->dropped.empty());
  EXPECT_TRUE(TableExists(partition));
  EXPECT_EQ(SamplesOf(old_run), 20);
  EXPECT_EQ(server_.db().QueryValue(
                "SELECT string_agg(inhrelid::regclass::text, ',' ORDER BY 1) "
                "FROM pg_inherits WHERE inhparent = 'step_samples'::regclass"),
            partitions_before);
  EXPECT_FALSE(Progress(old_run).has_samples_dropped_time());
  EXPECT_FALSE(Listed()[old_run].has_samples_dropped_time());
}

TEST_F(SampleRetentionTest, AnotherReplicaHoldingTheLockMakesThePassSkip) {
  const std::string old_run = RunWithSamples(absl::Now() - kDay * 150, 20);
  AgeStream(old_run, kDay * 149);
  const std::string partition = PartitionOf(old_run);
  storage::DbSession other(server_.db().url());
  absl::Status held = other.Run([](pqxx::connection_base& c) -> absl::Status {
    pqxx::nontransaction txn(c);
    txn.exec("SELECT pg_advisory_lock(x'73616d706c726574'::bigint)");
    return absl::OkStatus();
  });
  ASSERT_TRUE(held.ok()) << held;

  absl::StatusOr<storage::SampleRetentionPass> pass = Drop(kRetention);
  ASSERT_TRUE(pass.ok()) << pass.status();
  EXPECT_TRUE(pass->locked_elsewhere);
  EXPECT_TRUE(pass->dropped.empty());
  EXPECT_TRUE(TableExists(partition));
  EXPECT_FALSE(Progress(old_run).has_samples_dropped_time());
}

// On schema 17 (a binary serving before `migrate up` to 0018, whose window
// starts at 17) the progress and the run listing still answer, with no
// dropped time, and a retention pass drops nothing: it has nowhere to record
// the runs it would drop.
TEST_F(SampleRetentionTest, OnSchema17ReadsAnswerAndNothingIsDropped) {
  const std::string old_run = RunWithSamples(absl::Now() - kDay * 150, 20);
  AgeStream(old_run, kDay * 149);
  const std::string partition = PartitionOf(old_run);
  server_.db().Execute(
      "ALTER TABLE sample_streams DROP COLUMN samples_dropped_at");

  const v1::GetSampleProgressResponse progress = Progress(old_run);
  EXPECT_EQ(progress.samples_stored(), 20);
  EXPECT_FALSE(progress.has_samples_dropped_time());
  EXPECT_FALSE(Listed()[old_run].has_samples_dropped_time());
  EXPECT_FALSE(Drop(kRetention).ok());
  EXPECT_TRUE(TableExists(partition));
  EXPECT_EQ(SamplesOf(old_run), 20);
}

// placementd applies the flag: its maintainer drops an idle old month on
// its next pass and counts it in /metrics, with the samples kept.
TEST(SampleRetentionServerTest, TheMaintainerDropsAndCounts) {
  InProcessServer server([](services::ServerOptions& options) {
    options.metrics_address = "127.0.0.1:0";
    options.sample_retention = kRetention;
    options.partition_maintenance_interval = absl::Milliseconds(100);
  });
  server.db().Execute(
      "SELECT placement_ensure_sample_partitions(now() - interval '150 days', "
      "1)");
  const std::string partition = server.db().QueryValue(
      "SELECT 'step_samples_' || to_char((now() - interval '150 days') AT "
      "TIME ZONE 'UTC', 'YYYY_MM')");
  std::string metrics;
  for (int i = 0; i < 200; ++i) {
    metrics = testing::ScrapeMetrics(server.server().metrics_port());
    if (MetricValue(metrics,
                    "placement_step_sample_partitions_dropped_total") == 1) {
      break;
    }
    absl::SleepFor(absl::Milliseconds(50));
  }
  EXPECT_EQ(
      MetricValue(metrics, "placement_step_sample_partitions_dropped_total"), 1)
      << metrics;
  EXPECT_EQ(server.db().QueryValue(
                absl::StrCat("SELECT to_regclass('", partition, "') IS NULL")),
            "t");
  // The partitions left (last month on, and the default) take some space.
  EXPECT_GT(MetricValue(metrics, "placement_step_samples_bytes"), 0);
  EXPECT_GE(MetricValue(metrics, "placement_step_samples_rows"), 0);
  EXPECT_GE(MetricValue(metrics, "placement_step_sample_partitions"), 5);
}

}  // namespace
}  // namespace placement
