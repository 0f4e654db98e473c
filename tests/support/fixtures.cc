#include "tests/support/fixtures.h"

#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "common/uuid.h"
#include "google/rpc/error_details.pb.h"
#include "google/rpc/status.pb.h"

namespace placement::testing {

std::unique_ptr<grpc::ClientContext> Deadline(int seconds) {
  auto context = std::make_unique<grpc::ClientContext>();
  context->set_deadline(std::chrono::system_clock::now() +
                        std::chrono::seconds(seconds));
  return context;
}

std::vector<std::string> ViolatedFields(const grpc::Status& status) {
  std::vector<std::string> fields;
  google::rpc::Status rich;
  if (!rich.ParseFromString(status.error_details())) return fields;
  for (const auto& detail : rich.details()) {
    google::rpc::BadRequest bad_request;
    if (detail.UnpackTo(&bad_request)) {
      for (const auto& v : bad_request.field_violations()) {
        fields.push_back(v.field());
      }
    }
  }
  return fields;
}

std::vector<std::string> PreconditionTypes(const grpc::Status& status) {
  std::vector<std::string> types;
  google::rpc::Status rich;
  if (!rich.ParseFromString(status.error_details())) return types;
  for (const auto& detail : rich.details()) {
    google::rpc::PreconditionFailure failure;
    if (detail.UnpackTo(&failure)) {
      for (const auto& v : failure.violations()) types.push_back(v.type());
    }
  }
  return types;
}

std::string NewUuid() { return common::NewUuid(); }

v1::Pool TrainingPool(const std::string& name, const std::string& sku,
                      int nodes, int gpus_per_node, int64_t rate_micros) {
  v1::Pool pool;
  pool.set_name(name);
  pool.set_sku(sku);
  pool.set_node_count(nodes);
  pool.set_gpus_per_node(gpus_per_node);
  const bool pcie_only = sku.rfind("L40S", 0) == 0 ||
                         sku.rfind("L4-", 0) == 0 || sku.rfind("A10-", 0) == 0;
  pool.set_fabric(pcie_only ? v1::FABRIC_PCIE : v1::FABRIC_NVLINK);
  pool.set_purpose(v1::POOL_PURPOSE_TRAINING);
  pool.set_exclusive(true);
  pool.set_gpu_quota(nodes * gpus_per_node);
  pool.set_internal_rate_micros_per_gpu_hour(rate_micros);
  (*pool.mutable_labels())["team"] = "ml-platform";
  return pool;
}

v1::BenchmarkRun SucceededRun(const std::string& pool, const std::string& sku) {
  v1::BenchmarkRun run;
  run.set_run_id(NewUuid());
  run.set_agent_id("agent-node-07");
  run.set_pool(pool);
  run.set_sku(sku);
  run.add_node_names("node-07");
  run.set_gpu_count(1);
  v1::Recipe* recipe = run.mutable_recipe();
  recipe->set_model("Llama-3.1-8B");
  recipe->set_method(v1::FINE_TUNE_METHOD_LORA);
  recipe->set_lora_rank(16);
  // (Adding std::strings sidesteps a GCC 12 -Wrestrict false positive on the
  // const char* overload.)
  for (std::string module : {"q", "v"}) {
    recipe->add_target_modules(std::move(module));
  }
  recipe->set_sequence_length(2048);
  recipe->set_micro_batch_size(4);
  recipe->set_gradient_accumulation_steps(8);
  recipe->set_precision(v1::PRECISION_BF16);
  recipe->set_optimizer(v1::OPTIMIZER_ADAMW);
  recipe->set_activation_checkpointing_mode(v1::ACTIVATION_CHECKPOINTING_ON);
  recipe->set_attention(v1::ATTENTION_IMPLEMENTATION_FLASH);
  recipe->set_gpu_count(1);
  recipe->set_parallelism(v1::PARALLELISM_SINGLE);
  const int64_t end = absl::ToUnixSeconds(absl::Now()) - 3600;
  run.mutable_start_time()->set_seconds(end - 3600);
  run.mutable_end_time()->set_seconds(end);
  run.set_steps_attempted(1000);
  run.set_steps_succeeded(1000);
  run.set_step_time_mean_seconds(3.2);
  run.set_step_time_p50_seconds(3.1);
  run.set_step_time_p95_seconds(3.6);
  run.set_tokens_per_second(2560);
  run.set_peak_memory_gb(31.5);
  run.set_offload(v1::OFFLOAD_NONE);
  run.set_interconnect(v1::INTERCONNECT_NONE);
  run.set_outcome(v1::RUN_OUTCOME_SUCCEEDED);
  run.set_exclusive(true);
  return run;
}

v1::Recipe Lora8b() {
  v1::Recipe r;
  r.set_model("Llama-3.1-8B");
  r.set_method(v1::FINE_TUNE_METHOD_LORA);
  r.set_lora_rank(16);
  r.add_target_modules(std::string("all-linear"));
  r.set_sequence_length(2048);
  r.set_micro_batch_size(2);
  r.set_activation_checkpointing_mode(v1::ACTIVATION_CHECKPOINTING_ON);
  r.set_attention(v1::ATTENTION_IMPLEMENTATION_FLASH);
  return r;
}

v1::Recipe Qlora70b() {
  v1::Recipe r;
  r.set_model("Llama-3.1-70B");
  r.set_method(v1::FINE_TUNE_METHOD_QLORA);
  r.set_lora_rank(16);
  r.set_double_quantization(true);
  r.set_sequence_length(1024);
  r.set_activation_checkpointing_mode(v1::ACTIVATION_CHECKPOINTING_ON);
  r.set_attention(v1::ATTENTION_IMPLEMENTATION_FLASH);
  return r;
}

v1::PlacePlanRequest PlanFor(const v1::Recipe& recipe, int64_t total_steps) {
  v1::PlacePlanRequest request;
  *request.mutable_recipe() = recipe;
  request.set_total_steps(total_steps);
  request.set_team("ml-platform");
  return request;
}

const v1::PlacementCandidate* Candidate(const v1::PlacePlanResponse& plan,
                                        const std::string& pool) {
  for (const auto& c : plan.candidates()) {
    if (c.pool() == pool) return &c;
  }
  return nullptr;
}

const v1::PoolRejection* Rejection(const v1::PlacePlanResponse& plan,
                                   const std::string& pool) {
  for (const auto& r : plan.rejections()) {
    if (r.pool() == pool) return &r;
  }
  return nullptr;
}

std::function<bool(const v1::PlacePlanResponse&)> Measured(
    const std::string& pool, int runs) {
  return [pool, runs](const v1::PlacePlanResponse& plan) {
    const v1::PlacementCandidate* c = Candidate(plan, pool);
    return c != nullptr && c->basis() == v1::EVIDENCE_BASIS_MEASURED &&
           c->evidence_runs() == runs;
  };
}

}  // namespace placement::testing
