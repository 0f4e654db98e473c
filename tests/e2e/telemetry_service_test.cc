// TelemetryService over loopback gRPC on a real PostgreSQL: idempotent
// uploads, every validation rule (and that a refused upload changes nothing),
// the rollup under parallel uploads, and sample streams that resume without
// gaps or duplicates.
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "placement/v1/telemetry.grpc.pb.h"
#include "services/api/page_token.h"
#include "tests/support/api_client.h"
#include "tests/support/fixtures.h"
#include "tests/support/in_process_server.h"

namespace placement {
namespace {

using ::placement::testing::ApiClient;
using ::placement::testing::Deadline;
using ::placement::testing::InProcessServer;
using ::placement::testing::NewUuid;
using ::placement::testing::SucceededRun;
using ::placement::testing::TrainingPool;
using ::placement::testing::ViolatedFields;
using ::testing::ElementsAre;

constexpr char kL40s[] = "L40S-PCIE-48GB";
constexpr char kA100[] = "A100-SXM4-80GB";

class TelemetryTest : public ::testing::Test {
 protected:
  TelemetryTest()
      : telemetry_(v1::TelemetryService::NewStub(server_.channel())) {
    for (const v1::Pool& pool : {TrainingPool("l40s-adapters", kL40s, 4, 4),
                                 TrainingPool("a100-train", kA100, 2, 8)}) {
      client_.CreatePool(pool);
    }
  }

  grpc::Status Upload(const v1::BenchmarkRun& run,
                      v1::UploadBenchmarkRunResponse* response = nullptr) {
    return client_.Upload(run, response);
  }

  grpc::Status SampleProgress(const std::string& run_id,
                              v1::GetSampleProgressResponse* progress) {
    v1::GetSampleProgressRequest request;
    request.set_run_id(run_id);
    return telemetry_->GetSampleProgress(Deadline().get(), request, progress);
  }

  // Everything stored about runs and evidence.
  std::string Snapshot() {
    return server_.db().QueryValue(
        "SELECT (SELECT count(*) || md5(coalesce(string_agg(r::text, '|' "
        "ORDER BY run_id), '')) FROM benchmark_runs r) || '/' || "
        "(SELECT count(*) || md5(coalesce(string_agg(e::text, '|' ORDER BY "
        "recipe_key, sku_id), '')) FROM evidence_rollups e)");
  }

  std::string Query(const std::string& sql) {
    return server_.db().QueryValue(sql);
  }

  InProcessServer server_;
  ApiClient client_{server_.channel()};
  std::unique_ptr<v1::TelemetryService::Stub> telemetry_;
};

// Recipe keys across the change of attention and checkpointing to enums.
// What the former booleans said explicitly (true: FLASH, ON) keeps the key
// the previous release gave it (pinned here, computed by that release), so
// stored evidence of those recipes is found under the same key. A former
// false (or unset) now means UNSPECIFIED, which normalizes to SDPA: such a
// recipe gets the key of its SDPA form, the same through the old and the
// new fields (and the same as the previous release's: core's RecipeKeyTest
// pins that text).
TEST_F(TelemetryTest, RecipeKeysOfTheFormerBooleans) {
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
  v1::BenchmarkRun old_wire = SucceededRun("a100-train", kA100);
  old_wire.mutable_recipe()->clear_attention();
  old_wire.mutable_recipe()->clear_activation_checkpointing_mode();
  old_wire.mutable_recipe()->set_activation_checkpointing(true);
  old_wire.mutable_recipe()->set_flash_attention(true);
  v1::UploadBenchmarkRunResponse ack;
  ASSERT_TRUE(Upload(old_wire, &ack).ok());
  EXPECT_EQ(ack.recipe_key(), "rk1-5846856a3626c043");
  v1::BenchmarkRun new_wire = SucceededRun("a100-train", kA100);
  ASSERT_TRUE(Upload(new_wire, &ack).ok());  // ON and FLASH by the enums
  EXPECT_EQ(ack.recipe_key(), "rk1-5846856a3626c043");

  old_wire = SucceededRun("a100-train", kA100);
  old_wire.mutable_recipe()->clear_attention();
  old_wire.mutable_recipe()->set_flash_attention(false);
  ASSERT_TRUE(Upload(old_wire, &ack).ok());
  const std::string unset_key = ack.recipe_key();
  new_wire = SucceededRun("a100-train", kA100);
  new_wire.mutable_recipe()->set_attention(v1::ATTENTION_IMPLEMENTATION_SDPA);
  ASSERT_TRUE(Upload(new_wire, &ack).ok());
  EXPECT_EQ(ack.recipe_key(), unset_key);
  EXPECT_NE(unset_key, "rk1-5846856a3626c043");
  EXPECT_EQ(Query("SELECT string_agg(runs::text, ',' ORDER BY runs) FROM "
                  "evidence_rollups"),
            "2,2");
#pragma GCC diagnostic pop
}

TEST_F(TelemetryTest, RetryOfTheSameRunReturnsTheOriginalAcknowledgement) {
  const v1::BenchmarkRun run = SucceededRun("l40s-adapters", kL40s);
  v1::UploadBenchmarkRunResponse first;
  grpc::Status status = Upload(run, &first);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(first.run_id(), run.run_id());
  EXPECT_EQ(first.gpu_hours(), 1.0);  // one GPU for one hour
  EXPECT_THAT(first.recipe_key(), ::testing::StartsWith("rk1-"));

  const std::string before = Snapshot();
  v1::UploadBenchmarkRunResponse retry;
  ASSERT_TRUE(Upload(run, &retry).ok());
  EXPECT_EQ(retry.SerializeAsString(), first.SerializeAsString());
  EXPECT_EQ(Snapshot(), before);
  EXPECT_EQ(Query("SELECT runs FROM evidence_rollups"), "1");
}

TEST_F(TelemetryTest, SameRunIdWithOtherContentIsAlreadyExists) {
  v1::BenchmarkRun run = SucceededRun("l40s-adapters", kL40s);
  ASSERT_TRUE(Upload(run).ok());
  const std::string before = Snapshot();
  run.set_steps_succeeded(999);
  EXPECT_EQ(Upload(run).error_code(), grpc::StatusCode::ALREADY_EXISTS);
  EXPECT_EQ(Snapshot(), before);
}

TEST_F(TelemetryTest, StoredRunReadsBackExactlyAndListsNewestFirst) {
  std::vector<std::string> ids;
  for (int i = 0; i < 5; ++i) {
    v1::BenchmarkRun run = SucceededRun("l40s-adapters", kL40s);
    ASSERT_TRUE(Upload(run).ok());
    ids.push_back(run.run_id());
    if (i == 0) {
      v1::GetBenchmarkRunRequest request;
      request.set_run_id(run.run_id());
      v1::GetBenchmarkRunResponse response;
      ASSERT_TRUE(
          telemetry_->GetBenchmarkRun(Deadline().get(), request, &response)
              .ok());
      EXPECT_EQ(response.run().SerializeAsString(), run.SerializeAsString());
    }
  }
  std::vector<std::string> listed;
  std::string token;
  do {
    v1::ListBenchmarkRunsRequest request;
    request.set_page_size(2);
    request.set_page_token(token);
    request.set_pool("l40s-adapters");
    v1::ListBenchmarkRunsResponse response;
    ASSERT_TRUE(
        telemetry_->ListBenchmarkRuns(Deadline().get(), request, &response)
            .ok());
    for (const auto& run : response.runs()) listed.push_back(run.run_id());
    token = response.next_page_token();
  } while (!token.empty());
  std::reverse(ids.begin(), ids.end());
  EXPECT_EQ(listed, ids);

  // A token of this service's form whose key is not (time, run id).
  for (const char* key : {"1700000000000000/run-1", "soon/", "42"}) {
    v1::ListBenchmarkRunsRequest request;
    request.set_page_token(services::EncodePageToken(key));
    v1::ListBenchmarkRunsResponse response;
    grpc::Status status =
        telemetry_->ListBenchmarkRuns(Deadline().get(), request, &response);
    EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << key;
    EXPECT_THAT(ViolatedFields(status), ElementsAre("page_token")) << key;
  }
}

// One case per validation rule: the named field, and nothing stored changes.
struct InvalidRun {
  const char* name;
  std::function<void(v1::BenchmarkRun&)> breaks;
  const char* field;
};

void PrintTo(const InvalidRun& c, std::ostream* out) { *out << c.name; }

class InvalidRunTest : public TelemetryTest,
                       public ::testing::WithParamInterface<InvalidRun> {};

TEST_P(InvalidRunTest, IsRefusedNamingTheFieldAndChangesNothing) {
  ASSERT_TRUE(Upload(SucceededRun("l40s-adapters", kL40s)).ok());
  const std::string before = Snapshot();
  v1::BenchmarkRun run = SucceededRun("l40s-adapters", kL40s);
  GetParam().breaks(run);
  grpc::Status status = Upload(run);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT)
      << status.error_message();
  EXPECT_THAT(ViolatedFields(status), ElementsAre(GetParam().field))
      << status.error_message();
  EXPECT_EQ(Snapshot(), before);
}

INSTANTIATE_TEST_SUITE_P(
    EveryRule, InvalidRunTest,
    ::testing::Values(
        InvalidRun{"run_id_not_uuid",
                   [](v1::BenchmarkRun& r) { r.set_run_id("run-1"); },
                   "run.run_id"},
        InvalidRun{"unknown_sku",
                   [](v1::BenchmarkRun& r) { r.set_sku("B200"); }, "run.sku"},
        InvalidRun{"ambiguous_sku",
                   [](v1::BenchmarkRun& r) { r.set_sku("L40S"); }, "run.sku"},
        InvalidRun{"sku_not_the_pools",
                   [](v1::BenchmarkRun& r) { r.set_sku("A100-SXM4-80GB"); },
                   "run.sku"},
        InvalidRun{"unknown_pool",
                   [](v1::BenchmarkRun& r) { r.set_pool("nowhere"); },
                   "run.pool"},
        InvalidRun{"succeeded_over_attempted",
                   [](v1::BenchmarkRun& r) { r.set_steps_succeeded(1001); },
                   "run.steps_succeeded"},
        InvalidRun{"ended_before_started",
                   [](v1::BenchmarkRun& r) {
                     r.mutable_end_time()->set_seconds(
                         r.start_time().seconds() - 1);
                   },
                   "run.end_time"},
        InvalidRun{"ends_in_the_future",
                   [](v1::BenchmarkRun& r) {
                     r.mutable_end_time()->set_seconds(
                         absl::ToUnixSeconds(absl::Now()) + 86400);
                   },
                   "run.end_time"},
        InvalidRun{
            "nan_peak_memory",
            [](v1::BenchmarkRun& r) { r.set_peak_memory_gb(std::nan("")); },
            "run.peak_memory_gb"},
        InvalidRun{"peak_memory_above_the_card_without_offload",
                   [](v1::BenchmarkRun& r) { r.set_peak_memory_gb(60); },
                   "run.peak_memory_gb"},
        InvalidRun{"zero_step_time",
                   [](v1::BenchmarkRun& r) { r.set_step_time_mean_seconds(0); },
                   "run.step_time_mean_seconds"},
        InvalidRun{"steps_longer_than_the_run",
                   [](v1::BenchmarkRun& r) {
                     r.set_step_time_mean_seconds(30);
                     r.set_step_time_p50_seconds(30);
                     r.set_step_time_p95_seconds(31);
                   },
                   "run.step_time_mean_seconds"},
        InvalidRun{"p95_below_p50",
                   [](v1::BenchmarkRun& r) { r.set_step_time_p95_seconds(1); },
                   "run.step_time_p95_seconds"},
        InvalidRun{"negative_retries",
                   [](v1::BenchmarkRun& r) { r.set_retries(-1); },
                   "run.retries"},
        InvalidRun{"outcome_missing",
                   [](v1::BenchmarkRun& r) {
                     r.set_outcome(v1::RUN_OUTCOME_UNSPECIFIED);
                   },
                   "run.outcome"},
        InvalidRun{"recipe_rank_out_of_range",
                   [](v1::BenchmarkRun& r) {
                     r.mutable_recipe()->set_lora_rank(100000);
                   },
                   "run.recipe.lora_rank"},
        InvalidRun{
            "agent_id_too_long",
            [](v1::BenchmarkRun& r) { r.set_agent_id(std::string(129, 'a')); },
            "run.agent_id"},
        InvalidRun{"gpus_beyond_the_pool",
                   [](v1::BenchmarkRun& r) {
                     r.set_gpu_count(32);
                     r.mutable_recipe()->set_gpu_count(32);
                     r.mutable_recipe()->set_parallelism(v1::PARALLELISM_DDP);
                     r.set_interconnect(v1::INTERCONNECT_PCIE);
                     r.set_collectives_opened(true);
                   },
                   "run.gpu_count"},
        InvalidRun{"eval_on_a_family_name",
                   [](v1::BenchmarkRun& r) {
                     v1::EvalResult* eval = r.add_evals();
                     eval->set_serving_sku("H100");
                     eval->set_serving_precision(v1::PRECISION_FP8);
                     eval->set_metric_name("mmlu");
                     eval->set_score(0.61);
                   },
                   "run.evals[0].serving_sku"}),
    [](const ::testing::TestParamInfo<InvalidRun>& info) {
      return std::string(info.param.name);
    });

TEST_F(TelemetryTest, PeakAboveTheCardIsAcceptedWhenOffloadIsReported) {
  v1::BenchmarkRun run = SucceededRun("l40s-adapters", kL40s);
  run.set_peak_memory_gb(60);
  run.set_offload(v1::OFFLOAD_CPU);
  grpc::Status status = Upload(run);
  EXPECT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(Query("SELECT offload_runs FROM evidence_rollups"), "1");
}

TEST_F(TelemetryTest, ParallelUploadsLeaveTheRollupEqualToTheRawRuns) {
  constexpr int kClients = 8;
  constexpr int kRunsPerClient = 25;
  std::vector<std::thread> clients;
  std::atomic<int> failures{0};
  for (int c = 0; c < kClients; ++c) {
    clients.emplace_back([&, c] {
      auto stub = v1::TelemetryService::NewStub(server_.channel());
      for (int i = 0; i < kRunsPerClient; ++i) {
        const bool on_a100 = (c + i) % 2 == 0;
        v1::BenchmarkRun run = on_a100 ? SucceededRun("a100-train", kA100)
                                       : SucceededRun("l40s-adapters", kL40s);
        run.mutable_recipe()->set_sequence_length(1024 << (i % 3));
        run.set_retries(i % 4);
        if (i % 5 == 0) {
          run.set_outcome(v1::RUN_OUTCOME_COLLECTIVE_TIMEOUT);
          run.set_steps_succeeded(400);
        }
        run.set_peak_memory_gb(20 + (c * kRunsPerClient + i) % 20);
        run.mutable_start_time()->set_seconds(run.start_time().seconds() +
                                              i * 7 + c);
        v1::UploadBenchmarkRunRequest request;
        *request.mutable_run() = run;
        v1::UploadBenchmarkRunResponse response;
        if (!stub->UploadBenchmarkRun(Deadline(30).get(), request, &response)
                 .ok()) {
          ++failures;
        }
      }
    });
  }
  for (std::thread& client : clients) client.join();
  ASSERT_EQ(failures.load(), 0);
  EXPECT_EQ(Query("SELECT count(*) FROM benchmark_runs"),
            std::to_string(kClients * kRunsPerClient));
  EXPECT_EQ(Query("SELECT count(*) FROM evidence_rollups"), "6");
  // Every rollup row equals a fresh GROUP BY over the raw runs.
  EXPECT_EQ(Query(R"sql(
    WITH raw AS (
      SELECT recipe_key, sku_id, count(*) AS runs,
             count(*) FILTER (WHERE outcome = 'SUCCEEDED') AS successful_runs,
             count(*) FILTER (WHERE offload <> 'NONE') AS offload_runs,
             sum(retries) AS retries,
             sum(steps_attempted) AS steps_attempted,
             sum(steps_succeeded) AS steps_succeeded,
             sum(gpu_microseconds) AS gpu_microseconds,
             max(peak_memory_gb) AS max_peak_memory_gb
      FROM benchmark_runs GROUP BY recipe_key, sku_id)
    SELECT count(*) FROM raw FULL JOIN evidence_rollups e USING (recipe_key, sku_id)
    WHERE raw.runs IS DISTINCT FROM e.runs
       OR raw.successful_runs IS DISTINCT FROM e.successful_runs
       OR raw.offload_runs IS DISTINCT FROM e.offload_runs
       OR raw.retries IS DISTINCT FROM e.retries
       OR raw.steps_attempted IS DISTINCT FROM e.steps_attempted
       OR raw.steps_succeeded IS DISTINCT FROM e.steps_succeeded
       OR raw.gpu_microseconds IS DISTINCT FROM e.gpu_microseconds
       OR raw.max_peak_memory_gb IS DISTINCT FROM e.max_peak_memory_gb
       OR (SELECT sum(x) FROM unnest(e.peak_memory_hist) x) <> raw.runs)sql"),
            "0");
}

// Samples from `first` to `last` (inclusive) of one run.
v1::StreamStepSamplesRequest Samples(const std::string& run_id, int64_t first,
                                     int64_t last) {
  v1::StreamStepSamplesRequest request;
  request.set_run_id(run_id);
  const int64_t start = absl::ToUnixSeconds(absl::Now()) - 3600;
  for (int64_t step = first; step <= last; ++step) {
    v1::StepSample* s = request.add_samples();
    s->set_step(step);
    s->mutable_time()->set_seconds(start + step);
    s->set_step_time_seconds(0.5 + (step % 7) * 0.01);
    s->set_memory_allocated_gb(30.25);
    s->set_memory_reserved_gb(32);
    s->set_tokens(8192);
    if (step % 2 == 0) s->set_loss(2.0 - step * 1e-4);
  }
  return request;
}

v1::StreamStepSamplesResponse Stream(
    v1::TelemetryService::Stub& stub,
    const std::vector<v1::StreamStepSamplesRequest>& batches,
    grpc::Status* status) {
  auto context = Deadline(30);
  v1::StreamStepSamplesResponse response;
  auto writer = stub.StreamStepSamples(context.get(), &response);
  for (const auto& batch : batches) {
    if (!writer->Write(batch)) break;
  }
  writer->WritesDone();
  *status = writer->Finish();
  return response;
}

TEST_F(TelemetryTest, StreamCommitsEveryBatchAndReportsContiguousProgress) {
  const std::string run_id = NewUuid();
  grpc::Status status;
  v1::StreamStepSamplesResponse response =
      Stream(*telemetry_,
             {Samples(run_id, 0, 99), Samples(run_id, 100, 199),
              Samples(run_id, 200, 299)},
             &status);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(response.committed_through_step(), 299);
  EXPECT_EQ(response.samples_stored(), 300);
  EXPECT_EQ(response.samples_duplicate(), 0);
  EXPECT_EQ(
      Query(absl::StrCat("SELECT count(*) FROM step_samples WHERE run_id = '",
                         run_id, "'")),
      "300");
  // Values are stored exactly (shortest round-trip text).
  EXPECT_EQ(Query(absl::StrCat("SELECT step_time_s::text || '/' || loss::text "
                               "FROM step_samples WHERE run_id = '",
                               run_id, "' AND step = 10")),
            "0.53/1.999");
}

TEST_F(TelemetryTest,
       ResumedStreamAfterADroppedConnectionHasNoGapNorDuplicate) {
  const std::string run_id = NewUuid();
  {
    // The agent's connection drops in the middle of a stream.
    auto context = Deadline(30);
    v1::StreamStepSamplesResponse response;
    auto writer = telemetry_->StreamStepSamples(context.get(), &response);
    ASSERT_TRUE(writer->Write(Samples(run_id, 0, 99)));
    ASSERT_TRUE(writer->Write(Samples(run_id, 100, 199)));
    writer->Write(Samples(run_id, 200, 299));
    context->TryCancel();
    EXPECT_FALSE(writer->Finish().ok());
  }
  // It asks where to resume, and re-sends from a little before (it does not
  // know exactly what was committed).
  v1::GetSampleProgressResponse progress;
  ASSERT_TRUE(SampleProgress(run_id, &progress).ok());
  const int64_t committed = progress.committed_through_step();
  EXPECT_GE(committed, -1);
  EXPECT_LE(committed, 299);
  const int64_t resume = std::max<int64_t>(0, committed - 50);

  grpc::Status status;
  v1::StreamStepSamplesResponse response = Stream(
      *telemetry_, {Samples(run_id, resume, 349), Samples(run_id, 350, 399)},
      &status);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(response.committed_through_step(), 399);
  // At least what was committed when it asked is recognised as re-sent (a
  // batch in flight at the drop may commit after the question); every sample
  // it sent was either stored or recognised, none twice.
  EXPECT_GE(response.samples_duplicate(), committed + 1 - resume);
  EXPECT_EQ(response.samples_duplicate() + response.samples_stored(),
            400 - resume);
  EXPECT_EQ(Query(absl::StrCat("SELECT count(*) || '/' || count(DISTINCT step) "
                               "|| '/' || min(step) || '/' || max(step) FROM "
                               "step_samples WHERE run_id = '",
                               run_id, "'")),
            "400/400/0/399");
}

TEST_F(TelemetryTest,
       StreamCutMidwayHasCommittedWholeMessagesAndARetryStoresEachStepOnce) {
  const std::string run_id = NewUuid();
  constexpr int kMessages = 30;
  constexpr int kPerMessage = 100;  // steps within the hour of Samples()
  {
    // A fast sender: the server gathers the messages that arrive while one
    // transaction is written into the next; the stream is then cut.
    auto context = Deadline(30);
    v1::StreamStepSamplesResponse response;
    auto writer = telemetry_->StreamStepSamples(context.get(), &response);
    for (int m = 0; m < kMessages; ++m) {
      if (!writer->Write(
              Samples(run_id, m * kPerMessage, (m + 1) * kPerMessage - 1))) {
        break;
      }
    }
    context->TryCancel();
    EXPECT_FALSE(writer->Finish().ok());
  }
  // At any moment (transactions still in flight commit later), what is
  // stored is a prefix of whole messages, and each transaction holds whole
  // messages: nothing of a message is half committed.
  const std::string where = absl::StrCat("WHERE run_id = '", run_id, "'");
  const std::string prefix = Query(absl::StrCat(
      "SELECT count(*) || '/' || coalesce(max(step) + 1, 0) || '/' || "
      "count(*) % ",
      kPerMessage, " FROM step_samples ", where));
  const std::vector<std::string> parts = absl::StrSplit(prefix, '/');
  ASSERT_EQ(parts.size(), 3u) << prefix;
  EXPECT_EQ(parts[0], parts[1]) << "stored steps are not 0..n-1: " << prefix;
  EXPECT_EQ(parts[2], "0") << "a message partly stored: " << prefix;
  EXPECT_EQ(Query(absl::StrCat(
                "SELECT count(*) FROM (SELECT count(*) AS n, min(step) AS lo, "
                "max(step) AS hi FROM step_samples ",
                where, " GROUP BY xmin::text) t WHERE n % ", kPerMessage,
                " <> 0 OR lo % ", kPerMessage, " <> 0 OR hi - lo + 1 <> n")),
            "0");

  // The agent re-sends everything: each step ends up stored once, and every
  // sample is either stored now or recognised as stored before.
  std::vector<v1::StreamStepSamplesRequest> all;
  for (int m = 0; m < kMessages; ++m) {
    all.push_back(Samples(run_id, m * kPerMessage, (m + 1) * kPerMessage - 1));
  }
  grpc::Status status;
  v1::StreamStepSamplesResponse response = Stream(*telemetry_, all, &status);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(response.committed_through_step(), kMessages * kPerMessage - 1);
  EXPECT_EQ(response.samples_stored() + response.samples_duplicate(),
            kMessages * kPerMessage);
  EXPECT_EQ(response.samples_conflicting(), 0);
  EXPECT_EQ(
      Query(absl::StrCat("SELECT count(*) || '/' || count(DISTINCT step) "
                         "FROM step_samples ",
                         where)),
      absl::StrCat(kMessages * kPerMessage, "/", kMessages * kPerMessage));
  // The same again stores nothing.
  response = Stream(*telemetry_, all, &status);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(response.samples_stored(), 0);
  EXPECT_EQ(response.samples_duplicate(), kMessages * kPerMessage);
}

TEST_F(TelemetryTest, RefusedMessageAfterGatheredOnesCommitsEveryOneBefore) {
  const std::string run_id = NewUuid();
  std::vector<v1::StreamStepSamplesRequest> batches;
  for (int m = 0; m < 20; ++m) {
    batches.push_back(Samples(run_id, m * 150, (m + 1) * 150 - 1));
  }
  v1::StreamStepSamplesRequest bad = Samples(run_id, 3000, 3099);
  bad.mutable_samples(7)->set_memory_reserved_gb(-1);
  batches.push_back(bad);
  batches.push_back(Samples(run_id, 3100, 3199));  // after the refusal
  grpc::Status status;
  Stream(*telemetry_, batches, &status);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  // The answer comes after every message before the refused one is
  // committed, and nothing of it or after it is stored.
  v1::GetSampleProgressResponse progress;
  ASSERT_TRUE(SampleProgress(run_id, &progress).ok());
  EXPECT_EQ(progress.committed_through_step(), 2999);
  EXPECT_EQ(progress.samples_stored(), 3000);
  EXPECT_EQ(Query(absl::StrCat("SELECT count(*) || '/' || max(step) FROM "
                               "step_samples WHERE run_id = '",
                               run_id, "'")),
            "3000/2999");
}

TEST_F(TelemetryTest, GapsHoldBackTheCommittedStepUntilFilled) {
  const std::string run_id = NewUuid();
  grpc::Status status;
  v1::StreamStepSamplesResponse response = Stream(
      *telemetry_, {Samples(run_id, 0, 9), Samples(run_id, 20, 29)}, &status);
  ASSERT_TRUE(status.ok());
  EXPECT_EQ(response.committed_through_step(), 9);
  response = Stream(*telemetry_, {Samples(run_id, 10, 19)}, &status);
  ASSERT_TRUE(status.ok());
  EXPECT_EQ(response.committed_through_step(), 29);
}

TEST_F(TelemetryTest, InvalidSampleRefusesItsBatchAndStoresNothingOfIt) {
  const std::string run_id = NewUuid();
  v1::StreamStepSamplesRequest bad = Samples(run_id, 100, 109);
  bad.mutable_samples(3)->set_step_time_seconds(-1);
  grpc::Status status;
  Stream(*telemetry_, {Samples(run_id, 0, 99), bad}, &status);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(ViolatedFields(status),
              ElementsAre("samples[3].step_time_seconds"));
  EXPECT_EQ(Query(absl::StrCat("SELECT count(*) FROM step_samples WHERE "
                               "run_id = '",
                               run_id, "'")),
            "100");

  // Every message of a stream is for the same run.
  Stream(*telemetry_, {Samples(run_id, 0, 1), Samples(NewUuid(), 2, 3)},
         &status);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(ViolatedFields(status), ElementsAre("run_id"));
}

}  // namespace
}  // namespace placement
