// The planner's choices end to end (a real placementd process on a real
// PostgreSQL, only the public API): the GPU count and parallelism a recipe
// leaves open, multi-node sharded jobs over the declared inter-node fabric,
// the PCIe rules as the guide words them, fit verdicts with bands, and an
// estimate that never outranks a measurement on its optimistic edge alone.
#include <algorithm>
#include <iostream>

#include "absl/strings/match.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/support/api_client.h"
#include "tests/support/end_to_end_test.h"
#include "tests/support/fixtures.h"

namespace placement {
namespace {

using ::placement::testing::ApiClient;
using ::placement::testing::Candidate;
using ::placement::testing::EndToEndTest;
using ::placement::testing::Lora8b;
using ::placement::testing::PlanFor;
using ::placement::testing::Rejection;
using ::placement::testing::TrainingPool;
using ::testing::AnyOf;
using ::testing::HasSubstr;

constexpr char kL40s[] = "L40S-PCIE-48GB";
constexpr char kA100[] = "A100-SXM4-80GB";
constexpr char kA100Small[] = "A100-SXM4-40GB";
constexpr char kH100[] = "H100-SXM5-80GB";

// The 70B full-weight bf16 AdamW fine-tune, GPU count and parallelism left
// to the planner.
v1::Recipe FullWeight70b() {
  v1::Recipe recipe;
  recipe.set_model("Llama-3.1-70B");
  recipe.set_method(v1::FINE_TUNE_METHOD_FULL);
  recipe.set_precision(v1::PRECISION_BF16);
  // bf16 mixed precision: an fp32 master copy beside the bf16 weights, as
  // AMP and Megatron keep it (16-18 bytes of model state per parameter).
  recipe.set_fp32_master_weights(true);
  recipe.set_optimizer(v1::OPTIMIZER_ADAMW);
  recipe.set_sequence_length(4096);
  recipe.set_micro_batch_size(1);
  return recipe;
}

// Four nodes of 8 A100-80GB: the 70B full fine-tune's ~1.1 TB of model
// states and optimizer temporaries need ~93 GB per GPU over 16 of them
// (DOES_NOT_FIT even at the band's lower edge), ~50 GB over 32.
v1::Pool MultiNodeA100(const std::string& name,
                       v1::InterNodeFabric inter_node) {
  v1::Pool pool = TrainingPool(name, kA100, 4, 8);
  pool.set_inter_node_fabric(inter_node);
  if (inter_node == v1::INTER_NODE_FABRIC_INFINIBAND) {
    pool.set_inter_node_bandwidth_gb_s_per_gpu(25);  // 8 x HDR 200 Gb/s
  }
  return pool;
}

// A layout that splits the model's states over the GPUs (what a 70B full
// fine-tune needs): sharded data parallel, or pipeline stages.
bool ShardsTheModel(v1::Parallelism parallelism) {
  return parallelism == v1::PARALLELISM_FSDP ||
         parallelism == v1::PARALLELISM_ZERO3 ||
         parallelism == v1::PARALLELISM_ZERO2 ||
         parallelism == v1::PARALLELISM_PIPELINE;
}

void Print(const v1::PlacePlanResponse& plan) {
  for (const v1::PlacementCandidate& c : plan.candidates()) {
    std::cout << "candidate " << c.rank() << " " << c.pool() << " x"
              << c.gpu_count() << " "
              << v1::Parallelism_Name(c.recipe().parallelism()) << " (tp "
              << c.recipe().tensor_parallel_degree() << " pp "
              << c.recipe().pipeline_parallel_degree() << " dp "
              << c.recipe().data_parallel_degree() << ") "
              << v1::Fit_Name(c.fit()) << " peak " << c.peak_memory_gb() << " ["
              << c.peak_memory_gb_band().low() << ", "
              << c.peak_memory_gb_band().high() << "] cost "
              << c.expected_cost_micros() << "\n";
  }
  for (const v1::PoolRejection& r : plan.rejections()) {
    std::cout << "rejected " << r.pool() << ": " << r.rule() << ": "
              << r.reason() << "\n";
  }
}

class MultiNodePlanTest : public EndToEndTest {
 protected:
  v1::PlacePlanResponse Plan(const v1::PlacePlanRequest& request) {
    v1::PlacePlanResponse plan;
    const grpc::Status status = client_->Plan(request, &plan);
    EXPECT_TRUE(status.ok()) << status.error_message();
    Print(plan);
    return plan;
  }
};

TEST_F(MultiNodePlanTest, FullWeight70bIsShardedAcrossInfinibandNodes) {
  client_->CreatePool(
      MultiNodeA100("a100-multi", v1::INTER_NODE_FABRIC_INFINIBAND));
  client_->CreatePool(TrainingPool("l40s-train", kL40s, 1, 8));
  client_->CreatePool(TrainingPool("a100-40", kA100Small, 1, 8));
  const v1::PlacePlanResponse plan = Plan(PlanFor(FullWeight70b()));

  const v1::PlacementCandidate* a100 = Candidate(plan, "a100-multi");
  ASSERT_NE(a100, nullptr);
  EXPECT_GE(a100->gpu_count(), 16);
  EXPECT_EQ(a100->recipe().gpu_count(), a100->gpu_count());
  EXPECT_TRUE(ShardsTheModel(a100->recipe().parallelism()))
      << v1::Parallelism_Name(a100->recipe().parallelism());
  // Tensor parallel groups never span nodes.
  EXPECT_LE(std::max(1, a100->recipe().tensor_parallel_degree()), 8);
  EXPECT_THAT(a100->fit(), AnyOf(v1::FIT_FITS, v1::FIT_BORDERLINE));
  // Its own configuration, with its own key, and why it was chosen.
  EXPECT_THAT(a100->recipe_key(), ::testing::StartsWith("rk1-"));
  EXPECT_FALSE(a100->reasons().empty());
  EXPECT_LE(a100->peak_memory_gb_band().low(), a100->peak_memory_gb());
  EXPECT_GE(a100->peak_memory_gb_band().high(), a100->peak_memory_gb());
  EXPECT_GT(a100->step_time_s(), 0);
  EXPECT_LE(a100->step_time_s_band().low(), a100->step_time_s());
  EXPECT_GE(a100->step_time_s_band().high(), a100->step_time_s());
  // Nothing of it is measured. The only candidate, it is measured by the
  // job itself (no bake-off), whatever its fit.
  EXPECT_EQ(a100->basis(), v1::EVIDENCE_BASIS_ESTIMATED);
  EXPECT_FALSE(a100->measure_first());
  EXPECT_FALSE(plan.has_bake_off());

  for (const char* pool : {"l40s-train", "a100-40"}) {
    SCOPED_TRACE(pool);
    EXPECT_EQ(Candidate(plan, pool), nullptr);
    const v1::PoolRejection* rejected = Rejection(plan, pool);
    ASSERT_NE(rejected, nullptr);
    EXPECT_EQ(rejected->rule(), "fit_without_offload") << rejected->reason();
    EXPECT_FALSE(rejected->reason().empty());
  }
}

TEST_F(MultiNodePlanTest, InterNodeFabricNoneKeepsTheJobInOneNode) {
  client_->CreatePool(
      MultiNodeA100("a100-islands", v1::INTER_NODE_FABRIC_NONE));
  // Left open, the planner looks inside one node only, where the job's
  // model states alone do not fit: rejected by the inter-node rule.
  v1::PlacePlanResponse plan = Plan(PlanFor(FullWeight70b()));
  EXPECT_EQ(Candidate(plan, "a100-islands"), nullptr);
  const v1::PoolRejection* open = Rejection(plan, "a100-islands");
  ASSERT_NE(open, nullptr);
  EXPECT_EQ(open->rule(), "inter_node_fabric") << open->reason();
  // Asked for all four nodes, the job is rejected by the inter-node rule.
  v1::Recipe all_nodes = FullWeight70b();
  all_nodes.set_gpu_count(32);
  all_nodes.set_parallelism(v1::PARALLELISM_FSDP);
  plan = Plan(PlanFor(all_nodes));
  EXPECT_EQ(Candidate(plan, "a100-islands"), nullptr);
  const v1::PoolRejection* rejected = Rejection(plan, "a100-islands");
  ASSERT_NE(rejected, nullptr);
  EXPECT_EQ(rejected->rule(), "inter_node_fabric");
  EXPECT_THAT(rejected->reason(), HasSubstr("NONE"));

  // The same nodes over InfiniBand take it.
  client_->CreatePool(
      MultiNodeA100("a100-multi", v1::INTER_NODE_FABRIC_INFINIBAND));
  plan = client_->PlanUntil(PlanFor(all_nodes),
                            [](const v1::PlacePlanResponse& p) {
                              return Candidate(p, "a100-multi") != nullptr;
                            });
  EXPECT_EQ(Candidate(plan, "a100-multi")->gpu_count(), 32);
}

TEST_F(MultiNodePlanTest, TensorParallelAcrossPcieIsRejected) {
  client_->CreatePool(TrainingPool("l40s-train", kL40s, 1, 8));
  v1::Recipe recipe = Lora8b();
  recipe.set_gpu_count(2);
  recipe.set_parallelism(v1::PARALLELISM_TENSOR);
  const v1::PlacePlanResponse plan = Plan(PlanFor(recipe));
  EXPECT_EQ(Candidate(plan, "l40s-train"), nullptr);
  const v1::PoolRejection* rejected = Rejection(plan, "l40s-train");
  ASSERT_NE(rejected, nullptr);
  EXPECT_FALSE(rejected->rule().empty());
  EXPECT_THAT(rejected->reason(), HasSubstr("PCIe"));
}

TEST_F(MultiNodePlanTest, FsdpOverTwoPcieCardsIsACandidateWithItsWarning) {
  client_->CreatePool(TrainingPool("l40s-train", kL40s, 1, 8));
  v1::Recipe recipe = Lora8b();
  recipe.set_gpu_count(2);
  recipe.set_parallelism(v1::PARALLELISM_FSDP);
  const v1::PlacePlanResponse plan = Plan(PlanFor(recipe));
  const v1::PlacementCandidate* l40s = Candidate(plan, "l40s-train");
  ASSERT_NE(l40s, nullptr);
  EXPECT_EQ(l40s->gpu_count(), 2);
  EXPECT_EQ(l40s->recipe().parallelism(), v1::PARALLELISM_FSDP);
  const bool warns_pcie = std::any_of(
      l40s->warnings().begin(), l40s->warnings().end(),
      [](const std::string& w) { return absl::StrContains(w, "PCIe"); });
  EXPECT_TRUE(warns_pcie);
}

// An estimate that wins only at its optimistic edge ranks after the
// measurement: the measured pool's cost is set between the unmeasured
// pool's central estimate and its pessimistic edge.
TEST_F(MultiNodePlanTest, AnUnmeasuredPoolCheaperOnlyByItsEstimateRanksLast) {
  client_->CreatePool(TrainingPool("h100-new", kH100, 1, 8, 2'000'000));
  v1::Recipe recipe = Lora8b();
  recipe.set_gpu_count(1);
  recipe.set_parallelism(v1::PARALLELISM_SINGLE);
  constexpr int64_t kSteps = 10'000;
  const v1::PlacePlanResponse alone = Plan(PlanFor(recipe, kSteps));
  const v1::PlacementCandidate* estimated = Candidate(alone, "h100-new");
  ASSERT_NE(estimated, nullptr);
  ASSERT_EQ(estimated->basis(), v1::EVIDENCE_BASIS_ESTIMATED);
  ASSERT_GT(estimated->step_time_s(), 0);
  const double central_cost = estimated->expected_cost_micros();
  const double pessimistic_cost = central_cost *
                                  estimated->step_time_s_band().high() /
                                  estimated->step_time_s();
  ASSERT_GT(pessimistic_cost, central_cost * 1.05) << "no band to test";

  // Measured at the midpoint: dearer than the estimate, cheaper than its
  // pessimistic edge. GPU-hours = cost / rate.
  constexpr int64_t kRate = 2'000'000;
  client_->CreatePool(TrainingPool("a100-known", kA100, 1, 8, kRate));
  const double target_cost = (central_cost + pessimistic_cost) / 2;
  const double gpu_hours_per_step = target_cost / kRate / kSteps;
  for (int i = 0; i < 3; ++i) {
    client_->UploadRun("a100-known", kA100, recipe, gpu_hours_per_step * 1000,
                       1000, 30);
  }
  const v1::PlacePlanResponse plan = Plan(PlanFor(recipe, kSteps));
  const v1::PlacementCandidate* measured = Candidate(plan, "a100-known");
  const v1::PlacementCandidate* unmeasured = Candidate(plan, "h100-new");
  ASSERT_NE(measured, nullptr);
  ASSERT_NE(unmeasured, nullptr);
  ASSERT_EQ(measured->basis(), v1::EVIDENCE_BASIS_MEASURED);
  // The precondition: cheaper by the estimate, dearer at its pessimistic edge.
  ASSERT_LT(unmeasured->expected_cost_micros(),
            measured->expected_cost_micros());
  ASSERT_GT(pessimistic_cost, measured->expected_cost_micros());
  EXPECT_LT(measured->rank(), unmeasured->rank());
  EXPECT_TRUE(unmeasured->measure_first());
}

}  // namespace
}  // namespace placement
