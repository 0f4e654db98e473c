// The recipe fields that decide memory, through the public API on a real
// PostgreSQL: the loss implementation and the sequence packing move
// PlacePlan's predicted memory the way the frameworks' own figures do, the
// reported peak picks the figure a run of the recipe would report, bad
// values are INVALID_ARGUMENT naming the field with nothing stored, and an
// upload keeps which peak it reports and both allocator peaks.
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "placement/v1/placement.grpc.pb.h"
#include "placement/v1/telemetry.grpc.pb.h"
#include "tests/support/api_client.h"
#include "tests/support/fixtures.h"
#include "tests/support/in_process_server.h"

namespace placement {
namespace {

using ::placement::testing::Deadline;
using ::placement::testing::InProcessServer;
using ::placement::testing::PlanFor;
using ::placement::testing::SucceededRun;
using ::placement::testing::TrainingPool;
using ::placement::testing::ViolatedFields;
using ::testing::ElementsAre;

constexpr char kA100[] = "A100-SXM4-80GB";

// Llama-3.1-8B (128k vocabulary) LoRA at 4096 tokens, micro-batch 4: the
// logits are a large share of its memory.
v1::Recipe LongLora() {
  v1::Recipe recipe = SucceededRun("a100", kA100).recipe();
  recipe.set_sequence_length(4096);
  recipe.set_micro_batch_size(4);
  return recipe;
}

class RecipeMemoryFieldsTest : public ::testing::Test {
 protected:
  RecipeMemoryFieldsTest()
      : api_(server_.channel()),
        telemetry_(v1::TelemetryService::NewStub(server_.channel())) {
    api_.CreatePool(TrainingPool("a100", kA100));
  }

  v1::PlacePlanResponse PlanOk(const v1::Recipe& recipe) {
    v1::PlacePlanResponse plan;
    const grpc::Status status = api_.Plan(PlanFor(recipe), &plan);
    EXPECT_TRUE(status.ok()) << status.error_message();
    return plan;
  }

  grpc::Status Upload(const v1::BenchmarkRun& run,
                      v1::UploadBenchmarkRunResponse* response) {
    return api_.Upload(run, response);
  }

  // Everything a plan or an upload could store.
  std::string Stored() {
    return server_.db().QueryValue(
        "SELECT (SELECT count(*) FROM benchmark_runs) || ':' ||"
        " (SELECT count(*) FROM evidence_rollups) || ':' ||"
        " (SELECT count(*) FROM placements)");
  }

  InProcessServer server_;
  testing::ApiClient api_;
  std::unique_ptr<v1::TelemetryService::Stub> telemetry_;
};

TEST_F(RecipeMemoryFieldsTest, ChunkedAndFusedLossesPredictLessThanStandard) {
  v1::Recipe recipe = LongLora();
  recipe.set_loss_implementation(v1::LOSS_IMPLEMENTATION_STANDARD_FP32_UPCAST);
  const v1::MemoryEstimate standard = PlanOk(recipe).predicted_memory();
  recipe.set_loss_implementation(v1::LOSS_IMPLEMENTATION_CHUNKED_CROSS_ENTROPY);
  const v1::MemoryEstimate chunked = PlanOk(recipe).predicted_memory();
  recipe.set_loss_implementation(
      v1::LOSS_IMPLEMENTATION_FUSED_LINEAR_CROSS_ENTROPY);
  const v1::MemoryEstimate fused = PlanOk(recipe).predicted_memory();
  std::cout << "logits GB: standard " << standard.logits_gb() << ", chunked "
            << chunked.logits_gb() << ", fused " << fused.logits_gb()
            << "; total GB: " << standard.total_gb() << ", "
            << chunked.total_gb() << ", " << fused.total_gb() << "\n";
  EXPECT_LT(chunked.logits_gb(), standard.logits_gb());
  EXPECT_LE(fused.logits_gb(), chunked.logits_gb());
  EXPECT_LT(chunked.total_gb(), standard.total_gb());
  EXPECT_LE(fused.total_gb(), chunked.total_gb());
  // Only the loss's working memory moved.
  EXPECT_DOUBLE_EQ(chunked.weights_gb(), standard.weights_gb());
}

TEST_F(RecipeMemoryFieldsTest, PaddedDataPeaksBelowPackedAtTheSameMaximum) {
  // On padded data, sequence_length is the longest batch the data can
  // make, and short samples make most batches far shorter than that.
  v1::Recipe recipe = LongLora();
  recipe.set_sequence_packing(v1::SEQUENCE_PACKING_PACKED);
  const v1::PlacePlanResponse packed = PlanOk(recipe);
  recipe.set_sequence_packing(v1::SEQUENCE_PACKING_PADDED_PER_BATCH);
  recipe.set_mean_tokens_per_sample(300);
  const v1::PlacePlanResponse padded = PlanOk(recipe);
  std::cout << "total GB: packed " << packed.predicted_memory().total_gb()
            << ", padded (mean 300 of 4096) "
            << padded.predicted_memory().total_gb() << "\n";
  EXPECT_LT(padded.predicted_memory().activations_gb(),
            packed.predicted_memory().activations_gb());
  EXPECT_LT(padded.predicted_memory().total_gb(),
            packed.predicted_memory().total_gb());
  // Different settings, different recipe keys; the candidates carry them.
  ASSERT_GT(packed.candidates_size(), 0);
  ASSERT_GT(padded.candidates_size(), 0);
  EXPECT_NE(packed.candidates(0).recipe_key(),
            padded.candidates(0).recipe_key());
  EXPECT_EQ(padded.candidates(0).recipe().sequence_packing(),
            v1::SEQUENCE_PACKING_PADDED_PER_BATCH);
  EXPECT_EQ(padded.candidates(0).recipe().mean_tokens_per_sample(), 300);
}

TEST_F(RecipeMemoryFieldsTest, TheReportedPeakPicksTheFigureNotTheKey) {
  v1::Recipe recipe = LongLora();
  const v1::PlacePlanResponse unset = PlanOk(recipe);
  recipe.set_reported_peak(v1::PEAK_MEMORY_KIND_ALLOCATED);
  const v1::PlacePlanResponse allocated = PlanOk(recipe);
  const v1::MemoryEstimate& m = allocated.predicted_memory();
  EXPECT_DOUBLE_EQ(m.reported_gb(), m.allocated_gb());
  EXPECT_LT(m.allocated_gb(), m.reserved_gb());
  EXPECT_LT(m.reserved_gb(), m.total_gb());
  EXPECT_DOUBLE_EQ(unset.predicted_memory().reported_gb(),
                   unset.predicted_memory().total_gb());
  ASSERT_GT(unset.candidates_size(), 0);
  ASSERT_GT(allocated.candidates_size(), 0);
  EXPECT_EQ(allocated.candidates(0).recipe_key(),
            unset.candidates(0).recipe_key());
}

// One bad value per rule: the field named, nothing stored.
TEST_F(RecipeMemoryFieldsTest, BadPlanValuesAreRefusedNamingTheField) {
  struct Case {
    const char* name;
    std::function<void(v1::Recipe&)> breaks;
    const char* field;
  };
  const std::vector<Case> cases = {
      {"mean_above_the_maximum",
       [](v1::Recipe& r) {
         r.set_sequence_packing(v1::SEQUENCE_PACKING_PADDED_PER_BATCH);
         r.set_mean_tokens_per_sample(5000);
       },
       "recipe.mean_tokens_per_sample"},
      {"negative_mean",
       [](v1::Recipe& r) {
         r.set_sequence_packing(v1::SEQUENCE_PACKING_PADDED_PER_BATCH);
         r.set_mean_tokens_per_sample(-1);
       },
       "recipe.mean_tokens_per_sample"},
      {"mean_on_packed_data",
       [](v1::Recipe& r) {
         r.set_sequence_packing(v1::SEQUENCE_PACKING_PACKED);
         r.set_mean_tokens_per_sample(300);
       },
       "recipe.mean_tokens_per_sample"},
      {"mean_with_packing_unset",
       [](v1::Recipe& r) { r.set_mean_tokens_per_sample(300); },
       "recipe.mean_tokens_per_sample"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    v1::Recipe recipe = LongLora();
    c.breaks(recipe);
    const std::string before = Stored();
    v1::PlacePlanResponse plan;
    const grpc::Status status = api_.Plan(PlanFor(recipe), &plan);
    EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT)
        << status.error_message();
    EXPECT_THAT(ViolatedFields(status), ElementsAre(c.field))
        << status.error_message();
    EXPECT_EQ(Stored(), before);
  }
}

TEST_F(RecipeMemoryFieldsTest, BadRunValuesAreRefusedNamingTheField) {
  struct Case {
    const char* name;
    std::function<void(v1::BenchmarkRun&)> breaks;
    const char* field;
  };
  const std::vector<Case> cases = {
      {"mean_above_the_maximum",
       [](v1::BenchmarkRun& r) {
         r.mutable_recipe()->set_sequence_packing(
             v1::SEQUENCE_PACKING_PADDED_PER_BATCH);
         r.mutable_recipe()->set_mean_tokens_per_sample(2049);
       },
       "run.recipe.mean_tokens_per_sample"},
      {"allocated_above_reserved",
       [](v1::BenchmarkRun& r) {
         r.set_peak_memory_allocated_gb(30);
         r.set_peak_memory_reserved_gb(28);
       },
       "run.peak_memory_allocated_gb"},
      {"negative_reserved",
       [](v1::BenchmarkRun& r) { r.set_peak_memory_reserved_gb(-1); },
       "run.peak_memory_reserved_gb"},
      {"kind_disagrees_with_the_recipe",
       [](v1::BenchmarkRun& r) {
         r.set_peak_memory_kind(v1::PEAK_MEMORY_KIND_ALLOCATED);
         r.mutable_recipe()->set_reported_peak(v1::PEAK_MEMORY_KIND_RESERVED);
       },
       "run.peak_memory_kind"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    v1::BenchmarkRun run = SucceededRun("a100", kA100);
    c.breaks(run);
    const std::string before = Stored();
    v1::UploadBenchmarkRunResponse response;
    const grpc::Status status = Upload(run, &response);
    EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT)
        << status.error_message();
    EXPECT_THAT(ViolatedFields(status), ElementsAre(c.field))
        << status.error_message();
    EXPECT_EQ(Stored(), before);
  }
}

TEST_F(RecipeMemoryFieldsTest, AnUploadKeepsItsPeakKindAndBothPeaks) {
  v1::BenchmarkRun plain = SucceededRun("a100", kA100);
  v1::UploadBenchmarkRunResponse plain_ack;
  ASSERT_TRUE(Upload(plain, &plain_ack).ok());

  v1::BenchmarkRun run = SucceededRun("a100", kA100);
  run.set_peak_memory_kind(v1::PEAK_MEMORY_KIND_RESERVED);
  run.set_peak_memory_gb(31.5);
  run.set_peak_memory_allocated_gb(29.0);
  run.set_peak_memory_reserved_gb(31.5);
  v1::UploadBenchmarkRunResponse ack;
  const grpc::Status status = Upload(run, &ack);
  ASSERT_TRUE(status.ok()) << status.error_message();
  // Which peak a run reports describes the measurement, not the training:
  // the same recipe key as the run that does not say.
  EXPECT_EQ(ack.recipe_key(), plain_ack.recipe_key());

  v1::GetBenchmarkRunRequest get;
  get.set_run_id(run.run_id());
  v1::GetBenchmarkRunResponse stored;
  ASSERT_TRUE(telemetry_->GetBenchmarkRun(Deadline().get(), get, &stored).ok());
  EXPECT_EQ(stored.run().peak_memory_kind(), v1::PEAK_MEMORY_KIND_RESERVED);
  EXPECT_DOUBLE_EQ(stored.run().peak_memory_allocated_gb(), 29.0);
  EXPECT_DOUBLE_EQ(stored.run().peak_memory_reserved_gb(), 31.5);
}

}  // namespace
}  // namespace placement
