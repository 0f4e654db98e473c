#include "clients/placectl/plan_commands.h"

#include <iostream>

#include "absl/flags/flag.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/time.h"
#include "clients/common/channel.h"
#include "clients/common/rpc_errors.h"
#include "clients/common/table.h"
#include "clients/placectl/flags.h"
#include "clients/placectl/json.h"
#include "clients/placectl/plan_flags.h"
#include "clients/placectl/plan_text.h"
#include "placement/v1/placement.grpc.pb.h"

// `plan`'s flags (the recipe, its constraints, serving): plan_flags.cc.
PLACECTL_FLAG(std::string, since, "", "plans accuracy",
              "only outcomes recorded at or after this RFC 3339 time");
PLACECTL_FLAG(std::string, until, "", "plans accuracy",
              "only outcomes recorded before this RFC 3339 time");

namespace placement::placectl {
namespace {

using clients::ContextWithDeadline;
using clients::DescribeError;
using clients::Table;

constexpr char kPlanUsage[] =
    "placectl plan [--recipe FILE.yaml|FILE.json|--recipe=-] [--model M] "
    "[--method full|lora|qlora|head-only]\n"
    "    [--adapter_type lora|dora|loha|vera|ia3|llama-adapter|"
    "llama-adapter-v2]\n"
    "    [--lora_rank R] [--target_modules q,v] [--seq_len N] "
    "[--micro_batch N] [--grad_accum N]\n"
    "    [--precision fp32|bf16|fp16|fp8|int8|nf4] "
    "[--optimizer adamw|adamw-8bit|paged-adamw-8bit|sgd]\n"
    "    [--activation_checkpointing on|off] [--attention sdpa|flash|eager]\n"
    "    [--loss standard-fp32-upcast|chunked-cross-entropy|"
    "fused-linear-cross-entropy]\n"
    "    [--packing packed|padded-per-batch] [--mean_tokens N] "
    "[--framework hf-transformers-peft|torchtune|nemo|litgpt|axolotl|"
    "deepspeed|other]\n"
    "    [--reported_peak allocated|reserved|device-used] [--gpus N] "
    "[--parallelism single|ddp|zero2|zero3|fsdp|tensor|pipeline]\n"
    "    --steps N [--objective cost|time] [--max_gpus N] [--deadline 12h] "
    "[--pools a,b] [--labels k=v,...]\n"
    "    [--serving_sku SKU] [--serving_precision P] [--team T] "
    "[--request_id ID] [--json]\n"
    "JOB GPU-H/1K STEPS is the job's GPU-hours per 1,000 successful steps, "
    "start-up and failures included (their priors when nothing is "
    "measured); a step alone is STEP S x GPUS.";
constexpr char kPlansUsage[] =
    "placectl plans get PLAN_ID [--json] | accuracy [--since RFC3339] "
    "[--until RFC3339] [--json]";

// `plan` answered, but no pool can take the recipe (the plan is still
// printed and recorded). Not 1, so that a scheduler's hook can tell "not
// placed" from "no answer".
constexpr int kExitNoCandidate = 3;

int Usage(const char* text) {
  std::cerr << "usage: " << text << "\n";
  return 2;
}

int Fail(const grpc::Status& status) {
  std::cerr << "placectl: " << DescribeError(status) << "\n";
  return 1;
}

int Get(const std::string& plan_id) {
  auto stub =
      v1::PlacementService::NewStub(clients::MakeChannel(ServerAddress()));
  v1::GetPlanRequest request;
  request.set_plan_id(plan_id);
  v1::GetPlanResponse response;
  grpc::Status status =
      stub->GetPlan(ContextWithDeadline().get(), request, &response);
  if (!status.ok()) return Fail(status);
  if (absl::GetFlag(FLAGS_json)) {
    std::cout << ToJson(response);
    return 0;
  }
  PrintRequest(response.request(), std::cout);
  PrintPlan(response.request(), response.plan(), std::cout);
  return 0;
}

bool ParseTimeFlag(const char* flag, const std::string& text,
                   google::protobuf::Timestamp* out) {
  absl::Time time;
  std::string error;
  if (!absl::ParseTime(absl::RFC3339_full, text, &time, &error)) {
    std::cerr << "placectl: --" << flag
              << ": expected an RFC 3339 time like 2026-01-31T00:00:00Z, got \""
              << text << "\" (" << error << ")\n";
    return false;
  }
  const int64_t seconds = absl::ToUnixSeconds(time);
  out->set_seconds(seconds);
  out->set_nanos(static_cast<int32_t>(
      absl::ToInt64Nanoseconds(time - absl::FromUnixSeconds(seconds))));
  return true;
}

std::string ErrorTriple(double median, double p90, double mean) {
  return absl::StrFormat("%.1f | %.1f | %+.1f", median, p90, mean);
}

int Accuracy() {
  v1::GetPlanAccuracyRequest request;
  if (!absl::GetFlag(FLAGS_since).empty() &&
      !ParseTimeFlag("since", absl::GetFlag(FLAGS_since),
                     request.mutable_start_time())) {
    return 2;
  }
  if (!absl::GetFlag(FLAGS_until).empty() &&
      !ParseTimeFlag("until", absl::GetFlag(FLAGS_until),
                     request.mutable_end_time())) {
    return 2;
  }
  auto stub =
      v1::PlacementService::NewStub(clients::MakeChannel(ServerAddress()));
  v1::GetPlanAccuracyResponse response;
  grpc::Status status =
      stub->GetPlanAccuracy(ContextWithDeadline().get(), request, &response);
  if (!status.ok()) return Fail(status);
  if (absl::GetFlag(FLAGS_json)) {
    std::cout << ToJson(response);
    return 0;
  }
  // The planner's errors (calibrated: evidence, transfers, fleet model)
  // beside the analytic prior's on the same runs.
  Table table({"SKU", "RUNS", "PEAK MEM ERR % (MEDIAN | P90 | MEAN)",
               "RUNS WITH STEPS", "GPU-H/STEP ERR % (MEDIAN | P90 | MEAN)",
               "PRIOR PEAK MEM ERR %", "PRIOR GPU-H/STEP ERR %"},
              {false, true, true, true, true, true, true});
  for (const v1::SkuAccuracy& sku : response.skus()) {
    const v1::ModelAccuracy& prior = sku.prior();
    table.AddRow(
        {sku.sku(), absl::StrCat(sku.runs()),
         ErrorTriple(sku.peak_memory_median_abs_error_pct(),
                     sku.peak_memory_p90_abs_error_pct(),
                     sku.peak_memory_mean_error_pct()),
         absl::StrCat(sku.runs_with_successful_steps()),
         sku.runs_with_successful_steps() > 0
             ? ErrorTriple(sku.gpu_hours_per_step_median_abs_error_pct(),
                           sku.gpu_hours_per_step_p90_abs_error_pct(),
                           sku.gpu_hours_per_step_mean_error_pct())
             : "-",
         prior.runs() > 0
             ? ErrorTriple(prior.peak_memory_median_abs_error_pct(),
                           prior.peak_memory_p90_abs_error_pct(),
                           prior.peak_memory_mean_error_pct())
             : "-",
         prior.runs_with_successful_steps() > 0
             ? ErrorTriple(prior.gpu_hours_per_step_median_abs_error_pct(),
                           prior.gpu_hours_per_step_p90_abs_error_pct(),
                           prior.gpu_hours_per_step_mean_error_pct())
             : "-"});
  }
  table.Print(std::cout);
  if (response.skus().empty()) {
    std::cout << "(no run has carried out a plan"
              << (request.has_start_time() || request.has_end_time()
                      ? " in this window"
                      : "")
              << " yet)\n";
  } else {
    std::cout << "errors are (predicted - observed) / observed; median and "
                 "p90 of the absolute error, signed mean (positive: the "
                 "planner over-predicts); PRIOR: the analytic model alone, "
                 "before evidence and the fleet's calibration\n";
  }
  return 0;
}

}  // namespace

int RunPlan(const std::vector<std::string>& args) {
  if (!args.empty()) return Usage(kPlanUsage);
  v1::PlacePlanRequest request;
  if (!PlanRequestFromFlags(&request)) return 2;

  auto stub =
      v1::PlacementService::NewStub(clients::MakeChannel(ServerAddress()));
  v1::PlacePlanResponse response;
  grpc::Status status =
      stub->PlacePlan(ContextWithDeadline().get(), request, &response);
  if (!status.ok()) return Fail(status);
  const int exit_code = response.candidates().empty() ? kExitNoCandidate : 0;
  if (absl::GetFlag(FLAGS_json)) {
    std::cout << ToJson(response);
    return exit_code;
  }
  PrintPlan(request, response, std::cout);
  return exit_code;
}

int RunPlans(const std::vector<std::string>& args) {
  if (args.size() == 2 && args[0] == "get") return Get(args[1]);
  if (args.size() == 1 && args[0] == "accuracy") return Accuracy();
  return Usage(kPlansUsage);
}

}  // namespace placement::placectl
