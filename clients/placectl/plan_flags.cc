#include "clients/placectl/plan_flags.h"

#include <cmath>
#include <iostream>
#include <string>
#include <utility>
#include <vector>

#include "absl/flags/declare.h"
#include "absl/flags/flag.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/time/time.h"
#include "clients/placectl/flags.h"
#include "clients/placectl/recipe_file.h"
#include "common/proto_time.h"

// The recipe (see recipe.proto); each flag given overrides --recipe's file.
PLACECTL_FLAG(std::string, recipe, "", "plan",
              "a YAML or JSON file (--recipe=- for stdin) holding a "
              "PlacePlanRequest; recipe flags given too override its fields");
PLACECTL_FLAG(std::string, model, "", "plan",
              "catalog model, e.g. Llama-3.1-8B (or custom in --recipe)");
PLACECTL_FLAG(std::string, method, "", "plan",
              "full, lora, qlora or head-only");
PLACECTL_FLAG(std::string, adapter_type, "", "plan",
              "LoRA/QLoRA adapter: lora (default), dora, loha, vera, ia3, "
              "llama-adapter or llama-adapter-v2");
PLACECTL_FLAG(int, lora_rank, 0, "plan",
              "LoRA/QLoRA rank (lora, dora, loha and vera)");
PLACECTL_FLAG(std::string, target_modules, "", "plan",
              "LoRA target modules, comma-separated (q,k,v,o,gate,up,down or "
              "all-linear)");
PLACECTL_FLAG(int, seq_len, 0, "plan", "sequence length in tokens");
PLACECTL_FLAG(int, micro_batch, 0, "plan", "micro-batch size per GPU");
PLACECTL_FLAG(int, grad_accum, 0, "plan", "gradient accumulation steps");
PLACECTL_FLAG(std::string, precision, "", "plan",
              "base weight precision: fp32, bf16, fp16, fp8, int8 or nf4");
PLACECTL_FLAG(std::string, optimizer, "", "plan",
              "adamw, adamw-8bit, paged-adamw-8bit or sgd");
PLACECTL_FLAG(std::string, activation_checkpointing, "", "plan",
              "on or off (default: the planner may turn it on to fit)");
PLACECTL_FLAG(std::string, attention, "", "plan",
              "sdpa, flash or eager (default: SDPA / flash where the SKU "
              "supports it)");
PLACECTL_FLAG(std::string, loss, "", "plan",
              "loss implementation: standard-fp32-upcast, "
              "chunked-cross-entropy or fused-linear-cross-entropy (default: "
              "the framework's)");
PLACECTL_FLAG(std::string, packing, "", "plan",
              "packed (samples concatenated to --seq_len, the default) or "
              "padded-per-batch (--seq_len is the longest batch)");
PLACECTL_FLAG(int, mean_tokens, 0, "plan",
              "padded-per-batch only: mean padded tokens per sample, "
              "1..--seq_len");
PLACECTL_FLAG(std::string, framework, "", "plan",
              "training framework: hf-transformers-peft, torchtune, nemo, "
              "litgpt, axolotl, deepspeed or other (default: other)");
PLACECTL_FLAG(std::string, reported_peak, "", "plan",
              "which peak your runs report: allocated, reserved or "
              "device-used (default); sets the predicted reported figure");
PLACECTL_FLAG(bool, checkpointing, false, "plan",
              "same as --activation_checkpointing=on (deprecated)");
PLACECTL_FLAG(bool, flash_attention, false, "plan",
              "same as --attention=flash (deprecated)");
PLACECTL_FLAG(int, gpus, 0, "plan", "GPU count");
PLACECTL_FLAG(std::string, parallelism, "", "plan",
              "single, ddp, zero2, zero3, fsdp, tensor or pipeline");
PLACECTL_FLAG(int64_t, steps, 0, "plan",
              "optimizer steps the job must complete");
PLACECTL_FLAG(std::string, objective, "", "plan",
              "cost (lowest expected cost, the default), time, deadline "
              "(the cheapest that finishes, wait included, within --deadline "
              "at p90) or delay (cost + --delay_cost per hour to finish)");
PLACECTL_FLAG(double, delay_cost, 0, "plan",
              "with --objective delay: what an hour of later finish is "
              "worth, in the pools' currency, e.g. 25");
PLACECTL_FLAG(int, max_gpus, 0, "plan", "at most this many GPUs (0: no limit)");
PLACECTL_FLAG(std::string, deadline, "", "plan",
              "the job must finish within this wall time, e.g. 12h (the run "
              "alone; with --objective deadline, its wait too)");
PLACECTL_FLAG(std::string, pools, "", "plan",
              "only these pools, comma-separated (default: any)");
PLACECTL_FLAG(std::string, serving_sku, "", "plan",
              "the exact SKU the fine-tuned model will be served on");
PLACECTL_FLAG(std::string, serving_precision, "", "plan",
              "the serving precision (default: the training precision)");
PLACECTL_FLAG(std::string, team, "", "plan", "the team the job is for");

// Defined with `pools create` (catalog_commands.cc); for a plan they mean:
ABSL_DECLARE_FLAG(std::string, labels);
ABSL_DECLARE_FLAG(std::string, request_id);
PLACECTL_FLAG_ALSO(labels, "plan",
                   "labels a pool must carry, comma-separated key=value");
PLACECTL_FLAG_ALSO(request_id, "plan",
                   "the caller's id for this request, recorded with the plan");

namespace placement::placectl {
namespace {

// Reads an enum flag into `set`; false (after saying why) when unknown.
template <typename Setter>
bool EnumFlag(const char* flag, const std::string& text,
              const google::protobuf::EnumDescriptor* type, Setter set) {
  if (!FlagGiven(flag)) return true;
  absl::StatusOr<int> value = ParseEnumText(*type, text);
  if (!value.ok()) {
    if (type == v1::Objective_descriptor()) {
      // The documented names; lowest-cost, shortest-time,
      // finish-by-deadline and cost-of-delay work too.
      std::cerr << "placectl: --" << flag
                << ": expected cost, time, deadline or delay, got \"" << text
                << "\"\n";
    } else {
      std::cerr << "placectl: --" << flag << ": " << value.status().message()
                << "\n";
    }
    return false;
  }
  set(*value);
  return true;
}

std::vector<std::string> CommaList(const std::string& text) {
  std::vector<std::string> items;
  for (absl::string_view item :
       absl::StrSplit(text, ',', absl::SkipWhitespace())) {
    items.emplace_back(absl::StripAsciiWhitespace(item));
  }
  return items;
}

// The flags that set a number, a name or a list of the recipe; none can be
// malformed past what absl parsed.
void ApplyRecipeValueFlags(v1::Recipe* recipe) {
  if (FlagGiven("model")) recipe->set_model(absl::GetFlag(FLAGS_model));
  if (FlagGiven("lora_rank"))
    recipe->set_lora_rank(absl::GetFlag(FLAGS_lora_rank));
  if (FlagGiven("target_modules")) {
    recipe->clear_target_modules();
    for (std::string& module : CommaList(absl::GetFlag(FLAGS_target_modules))) {
      recipe->add_target_modules(std::move(module));
    }
  }
  if (FlagGiven("seq_len"))
    recipe->set_sequence_length(absl::GetFlag(FLAGS_seq_len));
  if (FlagGiven("micro_batch")) {
    recipe->set_micro_batch_size(absl::GetFlag(FLAGS_micro_batch));
  }
  if (FlagGiven("grad_accum")) {
    recipe->set_gradient_accumulation_steps(absl::GetFlag(FLAGS_grad_accum));
  }
  if (FlagGiven("mean_tokens")) {
    recipe->set_mean_tokens_per_sample(absl::GetFlag(FLAGS_mean_tokens));
  }
  if (FlagGiven("gpus")) recipe->set_gpu_count(absl::GetFlag(FLAGS_gpus));
}

// --checkpointing and --flash_attention, applied before the enum flags so
// that --activation_checkpointing and --attention win when both are given.
void ApplyDeprecatedFlags(v1::Recipe* recipe) {
  if (FlagGiven("checkpointing")) {
    recipe->set_activation_checkpointing_mode(
        absl::GetFlag(FLAGS_checkpointing) ? v1::ACTIVATION_CHECKPOINTING_ON
                                           : v1::ACTIVATION_CHECKPOINTING_OFF);
  }
  if (FlagGiven("flash_attention")) {
    recipe->set_attention(absl::GetFlag(FLAGS_flash_attention)
                              ? v1::ATTENTION_IMPLEMENTATION_FLASH
                              : v1::ATTENTION_IMPLEMENTATION_UNSPECIFIED);
  }
}

// An enum flag of the plan: its name, its value, the enum it names a value
// of and the request field it sets.
struct EnumPlanFlag {
  const char* name;
  const absl::Flag<std::string>* flag;
  const google::protobuf::EnumDescriptor* (*type)();
  void (*set)(v1::PlacePlanRequest* request, int value);
};

// In the order they are checked: the first malformed one is the one named.
const EnumPlanFlag kEnumPlanFlags[] = {
    {"method", &FLAGS_method, v1::FineTuneMethod_descriptor,
     [](v1::PlacePlanRequest* r, int v) {
       r->mutable_recipe()->set_method(static_cast<v1::FineTuneMethod>(v));
     }},
    {"precision", &FLAGS_precision, v1::Precision_descriptor,
     [](v1::PlacePlanRequest* r, int v) {
       r->mutable_recipe()->set_precision(static_cast<v1::Precision>(v));
     }},
    {"optimizer", &FLAGS_optimizer, v1::Optimizer_descriptor,
     [](v1::PlacePlanRequest* r, int v) {
       r->mutable_recipe()->set_optimizer(static_cast<v1::Optimizer>(v));
     }},
    {"parallelism", &FLAGS_parallelism, v1::Parallelism_descriptor,
     [](v1::PlacePlanRequest* r, int v) {
       r->mutable_recipe()->set_parallelism(static_cast<v1::Parallelism>(v));
     }},
    {"objective", &FLAGS_objective, v1::Objective_descriptor,
     [](v1::PlacePlanRequest* r, int v) {
       r->mutable_constraints()->set_objective(static_cast<v1::Objective>(v));
     }},
    {"serving_precision", &FLAGS_serving_precision, v1::Precision_descriptor,
     [](v1::PlacePlanRequest* r, int v) {
       r->mutable_serving()->set_precision(static_cast<v1::Precision>(v));
     }},
    {"activation_checkpointing", &FLAGS_activation_checkpointing,
     v1::ActivationCheckpointing_descriptor,
     [](v1::PlacePlanRequest* r, int v) {
       r->mutable_recipe()->set_activation_checkpointing_mode(
           static_cast<v1::ActivationCheckpointing>(v));
     }},
    {"attention", &FLAGS_attention, v1::AttentionImplementation_descriptor,
     [](v1::PlacePlanRequest* r, int v) {
       r->mutable_recipe()->set_attention(
           static_cast<v1::AttentionImplementation>(v));
     }},
    {"loss", &FLAGS_loss, v1::LossImplementation_descriptor,
     [](v1::PlacePlanRequest* r, int v) {
       r->mutable_recipe()->set_loss_implementation(
           static_cast<v1::LossImplementation>(v));
     }},
    {"packing", &FLAGS_packing, v1::SequencePacking_descriptor,
     [](v1::PlacePlanRequest* r, int v) {
       r->mutable_recipe()->set_sequence_packing(
           static_cast<v1::SequencePacking>(v));
     }},
    {"framework", &FLAGS_framework, v1::TrainingFramework_descriptor,
     [](v1::PlacePlanRequest* r, int v) {
       r->mutable_recipe()->set_training_framework(
           static_cast<v1::TrainingFramework>(v));
     }},
    {"reported_peak", &FLAGS_reported_peak, v1::PeakMemoryKind_descriptor,
     [](v1::PlacePlanRequest* r, int v) {
       r->mutable_recipe()->set_reported_peak(
           static_cast<v1::PeakMemoryKind>(v));
     }},
    {"adapter_type", &FLAGS_adapter_type, v1::AdapterType_descriptor,
     [](v1::PlacePlanRequest* r, int v) {
       r->mutable_recipe()->set_adapter_type(static_cast<v1::AdapterType>(v));
     }},
};

bool ApplyEnumFlags(v1::PlacePlanRequest* request) {
  for (const EnumPlanFlag& f : kEnumPlanFlags) {
    if (!EnumFlag(f.name, absl::GetFlag(*f.flag), f.type(),
                  [&](int v) { f.set(request, v); })) {
      return false;
    }
  }
  return true;
}

// --deadline: a positive duration; false (after saying why) otherwise.
bool ApplyDeadlineFlag(v1::PlanConstraints* constraints) {
  absl::Duration deadline;
  if (!absl::ParseDuration(absl::GetFlag(FLAGS_deadline), &deadline) ||
      deadline <= absl::ZeroDuration()) {
    std::cerr << "placectl: --deadline: expected a duration like 12h or "
                 "90m, got \""
              << absl::GetFlag(FLAGS_deadline) << "\"\n";
    return false;
  }
  common::DurationToProto(deadline, constraints->mutable_deadline());
  return true;
}

// --labels: key=value pairs, each with a key; false (after saying why)
// otherwise.
bool ApplyLabelsFlag(v1::PlanConstraints* constraints) {
  constraints->clear_required_labels();
  for (const std::string& pair : CommaList(absl::GetFlag(FLAGS_labels))) {
    std::pair<std::string, std::string> kv =
        absl::StrSplit(pair, absl::MaxSplits('=', 1));
    if (kv.first.empty() || pair.find('=') == std::string::npos) {
      std::cerr << "placectl: --labels: expected key=value, got \"" << pair
                << "\"\n";
      return false;
    }
    (*constraints->mutable_required_labels())[kv.first] = kv.second;
  }
  return true;
}

bool ApplyConstraintFlags(v1::PlanConstraints* constraints) {
  if (FlagGiven("max_gpus"))
    constraints->set_max_gpus(absl::GetFlag(FLAGS_max_gpus));
  if (FlagGiven("deadline") && !ApplyDeadlineFlag(constraints)) return false;
  if (FlagGiven("delay_cost")) {
    const double per_hour = absl::GetFlag(FLAGS_delay_cost);
    if (!(per_hour > 0) || per_hour > 1e5) {
      std::cerr << "placectl: --delay_cost: expected money per hour above 0 "
                   "(and at most 100000), got "
                << per_hour << "\n";
      return false;
    }
    constraints->set_delay_cost_micros_per_hour(
        static_cast<int64_t>(std::llround(per_hour * 1e6)));
  }
  if (FlagGiven("pools")) {
    constraints->clear_allowed_pools();
    for (std::string& pool : CommaList(absl::GetFlag(FLAGS_pools))) {
      constraints->add_allowed_pools(std::move(pool));
    }
  }
  if (FlagGiven("labels") && !ApplyLabelsFlag(constraints)) return false;
  return true;
}

// What the request carries beside the recipe and its constraints.
void ApplyRequestFlags(v1::PlacePlanRequest* request) {
  if (FlagGiven("steps")) request->set_total_steps(absl::GetFlag(FLAGS_steps));
  if (FlagGiven("serving_sku")) {
    request->mutable_serving()->set_sku(absl::GetFlag(FLAGS_serving_sku));
  }
  if (FlagGiven("team")) request->set_team(absl::GetFlag(FLAGS_team));
  if (FlagGiven("request_id")) {
    request->set_request_id(absl::GetFlag(FLAGS_request_id));
  }
}

// Applies every plan flag given on the command line to `request`. Returns
// false (after printing why) on a malformed flag: the enum flags are
// checked first, then --deadline, then --labels.
bool ApplyPlanFlags(v1::PlacePlanRequest* request) {
  ApplyRecipeValueFlags(request->mutable_recipe());
  ApplyDeprecatedFlags(request->mutable_recipe());
  if (!ApplyEnumFlags(request)) return false;
  if (!ApplyConstraintFlags(request->mutable_constraints())) return false;
  ApplyRequestFlags(request);
  return true;
}

}  // namespace

bool PlanRequestFromFlags(v1::PlacePlanRequest* request) {
  if (!absl::GetFlag(FLAGS_recipe).empty()) {
    absl::StatusOr<v1::PlacePlanRequest> from_file =
        ReadPlanRequestFile(absl::GetFlag(FLAGS_recipe));
    if (!from_file.ok()) {
      std::cerr << "placectl: " << from_file.status().message() << "\n";
      return false;
    }
    *request = *std::move(from_file);
  }
  if (!ApplyPlanFlags(request)) return false;
  if (request->constraints().ByteSizeLong() == 0) request->clear_constraints();
  if (request->serving().ByteSizeLong() == 0) request->clear_serving();
  return true;
}

}  // namespace placement::placectl
