// services/api/telemetry_convert: an upload ready to store keeps its bytes
// as sent, normalizes its recipe, and takes the catalog's SKU id, the
// pool's name and, without a team of its own, the pool's "team" label; a
// stored upload that does not parse is DATA_LOSS; samples keep an absent
// loss absent.
#include "services/api/telemetry_convert.h"

#include "absl/time/time.h"
#include "common/proto_bytes.h"
#include "common/proto_time.h"
#include "gtest/gtest.h"
#include "services/api/recipe_convert.h"
#include "services/api/run_convert.h"

namespace placement::services {
namespace {

v1::BenchmarkRun Upload() {
  v1::BenchmarkRun run;
  run.set_run_id("0190f3c2-7a4b-7c3d-8e5f-123456789abc");
  run.set_agent_id("agent-1");
  run.set_pool("pool-h100");
  run.set_sku("h100-sxm5-80gb");
  run.set_gpu_count(8);
  run.mutable_recipe()->set_model("llama-3.1-8b");
  run.mutable_recipe()->set_method(v1::FINE_TUNE_METHOD_LORA);
  run.mutable_recipe()->set_lora_rank(16);
  run.mutable_recipe()->set_sequence_length(2048);
  *run.mutable_start_time() = common::TimeToProto(absl::FromUnixSeconds(1000));
  *run.mutable_end_time() = common::TimeToProto(absl::FromUnixSeconds(4600));
  run.set_steps_attempted(100);
  run.set_steps_succeeded(100);
  run.set_tokens_per_second(1234.5);
  run.set_exclusive(true);
  run.set_outcome(v1::RUN_OUTCOME_SUCCEEDED);
  return run;
}

// The upload as the handler stores it: converted once, then stored.
storage::RunToStore ToStore(const v1::BenchmarkRun& run, const core::Pool& pool,
                            const std::string& sku) {
  return RunToStoreFromProto(run, UploadedRunFromProto(run), pool, sku);
}

core::Pool Pool() {
  core::Pool pool;
  pool.name = "pool-h100";
  pool.labels = {{"team", "search"}};
  return pool;
}

TEST(RunToStoreFromProtoTest, KeepsTheUploadAsSentAndTheCatalogsNames) {
  const v1::BenchmarkRun in = Upload();
  const storage::RunToStore out = ToStore(in, Pool(), "H100-SXM5-80GB");
  EXPECT_EQ(out.upload, common::DeterministicBytes(in));
  EXPECT_EQ(out.run.sku_id, "H100-SXM5-80GB");
  EXPECT_EQ(out.run.pool_name, "pool-h100");
  EXPECT_EQ(out.agent_id, "agent-1");
  EXPECT_EQ(out.tokens_per_second, 1234.5);
  EXPECT_TRUE(out.exclusive);
  EXPECT_EQ(out.plan_id, "");
  v1::Recipe stored_recipe;
  ASSERT_TRUE(stored_recipe.ParseFromString(out.recipe_proto));
  // The stored recipe is the normalized one: the catalog's model name.
  EXPECT_EQ(RecipeFromProto(stored_recipe), out.recipe);
  EXPECT_EQ(out.recipe.model, "Llama-3.1-8B");
}

TEST(RunToStoreFromProtoTest, TheTeamDefaultsToThePoolsTeamLabel) {
  EXPECT_EQ(ToStore(Upload(), Pool(), "H100").run.team, "search");
  v1::BenchmarkRun own = Upload();
  own.set_team("ranking");
  EXPECT_EQ(ToStore(own, Pool(), "H100").run.team, "ranking");
  core::Pool unlabelled = Pool();
  unlabelled.labels.clear();
  EXPECT_EQ(ToStore(Upload(), unlabelled, "H100").run.team, "");
}

TEST(StoredRunToProtoTest, ReturnsTheUploadWithItsAck) {
  storage::StoredRun stored;
  stored.upload = common::DeterministicBytes(Upload());
  stored.ack.recipe_key = "rk1-0123456789abcdef";
  stored.ack.accept_time = absl::FromUnixMicros(1'700'000'000'000'007);
  v1::GetBenchmarkRunResponse response;
  ASSERT_TRUE(StoredRunToProto(stored, &response).ok());
  EXPECT_EQ(common::DeterministicBytes(response.run()), stored.upload);
  EXPECT_EQ(response.recipe_key(), "rk1-0123456789abcdef");
  EXPECT_EQ(common::TimeFromProto(response.accept_time()),
            stored.ack.accept_time);
}

TEST(StoredRunToProtoTest, BytesThatDoNotParseAreDataLoss) {
  storage::StoredRun stored;
  stored.upload = std::string("\xff\xff\xff\xff", 4);
  v1::GetBenchmarkRunResponse response;
  EXPECT_EQ(StoredRunToProto(stored, &response).code(),
            absl::StatusCode::kDataLoss);
}

TEST(AckToProtoTest, ReportsGpuHoursOfTheStoredMicroseconds) {
  storage::RunAck ack;
  ack.run_id = "0190f3c2-7a4b-7c3d-8e5f-123456789abc";
  ack.recipe_key = "rk1-0123456789abcdef";
  ack.gpu_microseconds = 28'800'000'000;  // 8 GPUs x 1 h
  ack.evidence_version = 42;
  v1::UploadBenchmarkRunResponse response;
  AckToProto(ack, &response);
  EXPECT_EQ(response.gpu_hours(), 8);
  EXPECT_EQ(response.evidence_version(), 42);
  EXPECT_EQ(response.run_id(), "0190f3c2-7a4b-7c3d-8e5f-123456789abc");
  EXPECT_EQ(response.recipe_key(), "rk1-0123456789abcdef");
}

TEST(SampleRowsFromProtoTest, KeepsEverySampleAndAnAbsentLossAbsent) {
  v1::StreamStepSamplesRequest request;
  v1::StepSample* first = request.add_samples();
  first->set_step(0);
  *first->mutable_time() = common::TimeToProto(absl::FromUnixSeconds(5));
  first->set_step_time_seconds(0.5);
  first->set_tokens(4096);
  first->set_loss(0);  // a loss of 0 is a loss
  v1::StepSample* second = request.add_samples();
  second->set_step(1);
  second->set_memory_allocated_gb(61.5);
  second->set_memory_reserved_gb(70);
  const std::vector<storage::StepSampleRow> rows = SampleRowsFromProto(request);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].step, 0);
  EXPECT_EQ(rows[0].time, absl::FromUnixSeconds(5));
  EXPECT_EQ(rows[0].step_time_s, 0.5);
  EXPECT_EQ(rows[0].tokens, 4096);
  EXPECT_EQ(rows[0].loss, 0.0);
  EXPECT_EQ(rows[1].step, 1);
  EXPECT_EQ(rows[1].memory_allocated_gb, 61.5);
  EXPECT_EQ(rows[1].memory_reserved_gb, 70);
  EXPECT_EQ(rows[1].loss, std::nullopt);
}

}  // namespace
}  // namespace placement::services
