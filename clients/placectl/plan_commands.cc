#include "clients/placectl/plan_commands.h"

#include <iostream>
#include <map>
#include <sstream>

#include "absl/flags/declare.h"
#include "absl/flags/flag.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/time/time.h"
#include "clients/common/channel.h"
#include "clients/common/rpc_errors.h"
#include "clients/common/table.h"
#include "clients/placectl/flags.h"
#include "clients/placectl/json.h"
#include "clients/placectl/recipe_file.h"
#include "common/proto_time.h"
#include "core/money.h"
#include "placement/v1/placement.grpc.pb.h"

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
              "cost (lowest expected cost, the default) or time");
PLACECTL_FLAG(int, max_gpus, 0, "plan", "at most this many GPUs (0: no limit)");
PLACECTL_FLAG(std::string, deadline, "", "plan",
              "the job must finish within this wall time, e.g. 12h");
PLACECTL_FLAG(std::string, pools, "", "plan",
              "only these pools, comma-separated (default: any)");
PLACECTL_FLAG(std::string, serving_sku, "", "plan",
              "the exact SKU the fine-tuned model will be served on");
PLACECTL_FLAG(std::string, serving_precision, "", "plan",
              "the serving precision (default: the training precision)");
PLACECTL_FLAG(std::string, team, "", "plan", "the team the job is for");
PLACECTL_FLAG(std::string, since, "", "plans accuracy",
              "only outcomes recorded at or after this RFC 3339 time");
PLACECTL_FLAG(std::string, until, "", "plans accuracy",
              "only outcomes recorded before this RFC 3339 time");

// Defined with `pools create` (catalog_commands.cc); for a plan they mean:
ABSL_DECLARE_FLAG(std::string, labels);
ABSL_DECLARE_FLAG(std::string, request_id);
PLACECTL_FLAG_ALSO(labels, "plan",
                   "labels a pool must carry, comma-separated key=value");
PLACECTL_FLAG_ALSO(request_id, "plan",
                   "the caller's id for this request, recorded with the plan");

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
    "[--request_id ID] [--json]";
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

template <typename Enum>
std::string Short(const google::protobuf::EnumDescriptor* type, Enum value) {
  return EnumShortName(*type, static_cast<int>(value));
}

std::string ObjectiveText(v1::Objective objective) {
  switch (objective) {
    case v1::OBJECTIVE_SHORTEST_TIME:
      return "shortest time";
    case v1::OBJECTIVE_LOWEST_COST:
      return "lowest cost";
    default:
      return "lowest cost (default)";
  }
}

// Reads an enum flag into `set`; false (after saying why) when unknown.
template <typename Setter>
bool EnumFlag(const char* flag, const std::string& text,
              const google::protobuf::EnumDescriptor* type, Setter set) {
  if (!FlagGiven(flag)) return true;
  absl::StatusOr<int> value = ParseEnumText(*type, text);
  if (!value.ok()) {
    if (type == v1::Objective_descriptor()) {
      // The documented names; lowest-cost and shortest-time work too.
      std::cerr << "placectl: --" << flag << ": expected cost or time, got \""
                << text << "\"\n";
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

// Applies every recipe flag given on the command line to `request`.
// Returns false (after printing why) on a malformed flag.
bool ApplyFlags(v1::PlacePlanRequest* request) {
  v1::Recipe* recipe = request->mutable_recipe();
  v1::PlanConstraints* constraints = request->mutable_constraints();
  if (FlagGiven("model")) recipe->set_model(absl::GetFlag(FLAGS_model));
  if (!EnumFlag("method", absl::GetFlag(FLAGS_method),
                v1::FineTuneMethod_descriptor(), [&](int v) {
                  recipe->set_method(static_cast<v1::FineTuneMethod>(v));
                })) {
    return false;
  }
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
  if (!EnumFlag("precision", absl::GetFlag(FLAGS_precision),
                v1::Precision_descriptor(),
                [&](int v) {
                  recipe->set_precision(static_cast<v1::Precision>(v));
                }) ||
      !EnumFlag("optimizer", absl::GetFlag(FLAGS_optimizer),
                v1::Optimizer_descriptor(),
                [&](int v) {
                  recipe->set_optimizer(static_cast<v1::Optimizer>(v));
                }) ||
      !EnumFlag("parallelism", absl::GetFlag(FLAGS_parallelism),
                v1::Parallelism_descriptor(),
                [&](int v) {
                  recipe->set_parallelism(static_cast<v1::Parallelism>(v));
                }) ||
      !EnumFlag("objective", absl::GetFlag(FLAGS_objective),
                v1::Objective_descriptor(),
                [&](int v) {
                  constraints->set_objective(static_cast<v1::Objective>(v));
                }) ||
      !EnumFlag("serving_precision", absl::GetFlag(FLAGS_serving_precision),
                v1::Precision_descriptor(), [&](int v) {
                  request->mutable_serving()->set_precision(
                      static_cast<v1::Precision>(v));
                })) {
    return false;
  }
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
  if (!EnumFlag("activation_checkpointing",
                absl::GetFlag(FLAGS_activation_checkpointing),
                v1::ActivationCheckpointing_descriptor(),
                [&](int v) {
                  recipe->set_activation_checkpointing_mode(
                      static_cast<v1::ActivationCheckpointing>(v));
                }) ||
      !EnumFlag("attention", absl::GetFlag(FLAGS_attention),
                v1::AttentionImplementation_descriptor(), [&](int v) {
                  recipe->set_attention(
                      static_cast<v1::AttentionImplementation>(v));
                })) {
    return false;
  }
  if (!EnumFlag("loss", absl::GetFlag(FLAGS_loss),
                v1::LossImplementation_descriptor(),
                [&](int v) {
                  recipe->set_loss_implementation(
                      static_cast<v1::LossImplementation>(v));
                }) ||
      !EnumFlag("packing", absl::GetFlag(FLAGS_packing),
                v1::SequencePacking_descriptor(),
                [&](int v) {
                  recipe->set_sequence_packing(
                      static_cast<v1::SequencePacking>(v));
                }) ||
      !EnumFlag("framework", absl::GetFlag(FLAGS_framework),
                v1::TrainingFramework_descriptor(),
                [&](int v) {
                  recipe->set_training_framework(
                      static_cast<v1::TrainingFramework>(v));
                }) ||
      !EnumFlag("reported_peak", absl::GetFlag(FLAGS_reported_peak),
                v1::PeakMemoryKind_descriptor(),
                [&](int v) {
                  recipe->set_reported_peak(static_cast<v1::PeakMemoryKind>(v));
                }) ||
      !EnumFlag("adapter_type", absl::GetFlag(FLAGS_adapter_type),
                v1::AdapterType_descriptor(), [&](int v) {
                  recipe->set_adapter_type(static_cast<v1::AdapterType>(v));
                })) {
    return false;
  }
  if (FlagGiven("mean_tokens")) {
    recipe->set_mean_tokens_per_sample(absl::GetFlag(FLAGS_mean_tokens));
  }
  if (FlagGiven("gpus")) recipe->set_gpu_count(absl::GetFlag(FLAGS_gpus));
  if (FlagGiven("steps")) request->set_total_steps(absl::GetFlag(FLAGS_steps));
  if (FlagGiven("max_gpus"))
    constraints->set_max_gpus(absl::GetFlag(FLAGS_max_gpus));
  if (FlagGiven("deadline")) {
    absl::Duration deadline;
    if (!absl::ParseDuration(absl::GetFlag(FLAGS_deadline), &deadline) ||
        deadline <= absl::ZeroDuration()) {
      std::cerr << "placectl: --deadline: expected a duration like 12h or "
                   "90m, got \""
                << absl::GetFlag(FLAGS_deadline) << "\"\n";
      return false;
    }
    common::DurationToProto(deadline, constraints->mutable_deadline());
  }
  if (FlagGiven("pools")) {
    constraints->clear_allowed_pools();
    for (std::string& pool : CommaList(absl::GetFlag(FLAGS_pools))) {
      constraints->add_allowed_pools(std::move(pool));
    }
  }
  if (FlagGiven("labels")) {
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
  }
  if (FlagGiven("serving_sku")) {
    request->mutable_serving()->set_sku(absl::GetFlag(FLAGS_serving_sku));
  }
  if (FlagGiven("team")) request->set_team(absl::GetFlag(FLAGS_team));
  if (FlagGiven("request_id")) {
    request->set_request_id(absl::GetFlag(FLAGS_request_id));
  }
  return true;
}

// "Llama-3.1-8B, lora, rank 16, ..." for a header line; fields left unset
// (in a request as asked) are left out.
std::string Settings(const v1::Recipe& r) {
  std::vector<std::string> parts;
  parts.push_back(r.model().empty() ? "(no model)" : r.model());
  if (r.model() == "custom" && !r.custom_architecture().name().empty()) {
    parts.back() += absl::StrCat("(", r.custom_architecture().name(), ")");
  }
  auto add_enum = [&](const google::protobuf::EnumDescriptor* type, int value,
                      const std::string& suffix = "") {
    if (value != 0) parts.push_back(EnumShortName(*type, value) + suffix);
  };
  auto add_number = [&](const char* name, int value) {
    if (value != 0) parts.push_back(absl::StrCat(name, " ", value));
  };
  add_enum(v1::FineTuneMethod_descriptor(), r.method());
  if (r.adapter_type() != v1::ADAPTER_TYPE_LORA) {  // LoRA: said by the method
    add_enum(v1::AdapterType_descriptor(), r.adapter_type(), " adapter");
  }
  add_number("rank", r.lora_rank());
  if (!r.target_modules().empty()) {
    parts.push_back("modules " + absl::StrJoin(r.target_modules(), ","));
  }
  add_number("seq", r.sequence_length());
  add_number("micro-batch", r.micro_batch_size());
  add_number("grad-accum", r.gradient_accumulation_steps());
  add_enum(v1::Precision_descriptor(), r.precision(),
           absl::StrCat(r.fp32_master_weights() ? "+fp32-master" : "",
                        r.double_quantization() ? "+double-quant" : ""));
  add_enum(v1::Optimizer_descriptor(), r.optimizer());
  parts.push_back(absl::StrCat(
      "checkpointing ",
      r.activation_checkpointing_mode() ==
              v1::ACTIVATION_CHECKPOINTING_UNSPECIFIED
          ? "planner's choice"
          : EnumShortName(*v1::ActivationCheckpointing_descriptor(),
                          r.activation_checkpointing_mode())));
  parts.push_back(absl::StrCat(
      "attention ",
      r.attention() == v1::ATTENTION_IMPLEMENTATION_UNSPECIFIED
          ? "sdpa/flash where supported"
          : EnumShortName(*v1::AttentionImplementation_descriptor(),
                          r.attention())));
  add_enum(v1::LossImplementation_descriptor(), r.loss_implementation(),
           " loss");
  add_enum(v1::SequencePacking_descriptor(), r.sequence_packing());
  if (r.mean_tokens_per_sample() > 0) {
    parts.push_back(
        absl::StrCat("mean ", r.mean_tokens_per_sample(), " tokens/sample"));
  }
  add_enum(v1::TrainingFramework_descriptor(), r.training_framework());
  std::string layout =
      r.parallelism() != v1::PARALLELISM_UNSPECIFIED
          ? EnumShortName(*v1::Parallelism_descriptor(), r.parallelism())
          : "";
  if (r.gpu_count() > 0) {
    absl::StrAppend(&layout, layout.empty() ? "" : " ", "x", r.gpu_count());
  }
  if (r.tensor_parallel_degree() > 1 || r.pipeline_parallel_degree() > 1) {
    absl::StrAppend(&layout, " (tp ", r.tensor_parallel_degree(), " pp ",
                    r.pipeline_parallel_degree(), " dp ",
                    r.data_parallel_degree(), ")");
  }
  if (!layout.empty()) parts.push_back(layout);
  return absl::StrJoin(parts, ", ");
}

std::string TimeText(const google::protobuf::Timestamp& t) {
  if (t.seconds() == 0 && t.nanos() == 0) return "-";
  return absl::FormatTime("%Y-%m-%d %H:%M:%S UTC", common::TimeFromProto(t),
                          absl::UTCTimeZone());
}

// "3d 04h", "10h 05m", "12m 30s", "45s".
std::string WallTime(const google::protobuf::Duration& d) {
  const int64_t s = absl::ToInt64Seconds(common::DurationFromProto(d) +
                                         absl::Milliseconds(500));
  if (s <= 0) return "-";
  if (s >= 86400)
    return absl::StrFormat("%dd %02dh", s / 86400, s % 86400 / 3600);
  if (s >= 3600) return absl::StrFormat("%dh %02dm", s / 3600, s % 3600 / 60);
  if (s >= 60) return absl::StrFormat("%dm %02ds", s / 60, s % 60);
  return absl::StrFormat("%ds", s);
}

std::string BasisText(const v1::PlacementCandidate& c) {
  switch (c.basis()) {
    case v1::EVIDENCE_BASIS_MEASURED:
      return absl::StrCat("measured (", c.evidence_runs(),
                          c.evidence_runs() == 1 ? " run)" : " runs)");
    case v1::EVIDENCE_BASIS_TRANSFERRED:
      return absl::StrCat("transferred (", c.evidence_runs(),
                          c.evidence_runs() == 1 ? " run)" : " runs)");
    case v1::EVIDENCE_BASIS_ESTIMATED:
      return "estimated";
    default:
      return "-";
  }
}

std::string MemoryText(const v1::MemoryEstimate& m) {
  return absl::StrFormat(
      "predicted memory per GPU: weights %.1f + gradients %.1f + optimizer "
      "%.1f + activations %.1f + logits %.1f + overhead %.1f = %.1f GB%s%s",
      m.weights_gb(), m.gradients_gb(), m.optimizer_gb(), m.activations_gb(),
      m.logits_gb(), m.overhead_gb(), m.total_gb(),
      m.allocated_gb() > 0 ? absl::StrFormat(" (allocated %.1f, reserved %.1f)",
                                             m.allocated_gb(), m.reserved_gb())
                           : "",
      m.optimizer_may_page_to_cpu() ? " (paged optimizer may use CPU memory)"
                                    : "");
}

std::string FitText(v1::Fit fit) {
  switch (fit) {
    case v1::FIT_FITS:
      return "fits";
    case v1::FIT_BORDERLINE:
      return "BORDERLINE";
    case v1::FIT_DOES_NOT_FIT:
      return "DOES NOT FIT";
    default:
      return "-";
  }
}

// "fsdp x16 (tp 1 pp 1 dp 16)": what the candidate's recipe runs as.
std::string LayoutText(const v1::PlacementCandidate& c) {
  const v1::Recipe& r = c.recipe();
  std::string text =
      r.parallelism() != v1::PARALLELISM_UNSPECIFIED
          ? EnumShortName(*v1::Parallelism_descriptor(), r.parallelism())
          : "-";
  if (r.tensor_parallel_degree() > 1 || r.pipeline_parallel_degree() > 1) {
    absl::StrAppend(&text, " tp", r.tensor_parallel_degree(), " pp",
                    r.pipeline_parallel_degree(), " dp",
                    r.data_parallel_degree());
  }
  return text;
}

// "31.2 [28.1-35.0]": a figure and its band, the band left out when unset.
std::string WithBand(double value, const v1::Band& band, const char* format) {
  std::string text = absl::StrFormat(format, value);
  if (band.high() > 0) {
    absl::StrAppend(&text, " [", absl::StrFormat(format, band.low()), "-",
                    absl::StrFormat(format, band.high()), "]");
  }
  return text;
}

void PrintCandidates(const v1::PlacePlanResponse& plan, std::ostream& out) {
  if (plan.candidates().empty()) {
    out << "\nNo pool can take this recipe; each one's rule is below.\n";
    return;
  }
  Table table({"RANK", "POOL", "SKU", "GPUS", "PARALLELISM", "FIT",
               "PEAK GB [BAND] (HEADROOM)", "STEP S [BAND]", "GPU-H/1K STEPS",
               "EXPECTED GPU-H", "COST", "LIST-PRICE COST", "WALL TIME",
               "BASIS", "CONFIDENCE"},
              {true, false, false, true, false, false, true, true, true, true,
               true, true, true, false, false});
  for (const v1::PlacementCandidate& c : plan.candidates()) {
    table.AddRow(
        {absl::StrCat(c.rank()), c.pool(), c.sku(), absl::StrCat(c.gpu_count()),
         LayoutText(c), FitText(c.fit()),
         absl::StrFormat(
             "%s (%+.1f)",
             WithBand(c.peak_memory_gb(), c.peak_memory_gb_band(), "%.1f"),
             c.headroom_gb()),
         c.step_time_s() > 0
             ? WithBand(c.step_time_s(), c.step_time_s_band(), "%.2f")
             : "-",
         absl::StrFormat("%.3f", c.gpu_hours_per_1k_successful_steps()),
         absl::StrFormat("%.2f", c.expected_gpu_hours()),
         core::FormatMicrosAsCents(c.expected_cost_micros()),
         c.has_list_price_cost_micros()
             ? core::FormatMicrosAsCents(c.list_price_cost_micros())
             : "-",
         WallTime(c.expected_wall_time()), BasisText(c),
         Short(v1::Confidence_descriptor(), c.confidence())});
  }
  out << "\n";
  table.Print(out);
  for (const v1::PlacementCandidate& c : plan.candidates()) {
    out << "\n#" << c.rank() << " " << c.pool() << " (" << c.sku() << " x"
        << c.gpu_count() << ", " << FitText(c.fit())
        << (c.measure_first() ? ", measure first" : "") << ")\n";
    if (c.has_recipe()) {
      out << "    recipe " << c.recipe_key() << ": " << Settings(c.recipe())
          << "\n";
    }
    if (!c.transferred_from_recipe_key().empty()) {
      out << "    evidence transferred from recipe "
          << c.transferred_from_recipe_key()
          << (c.transferred_from_sku().empty()
                  ? ""
                  : absl::StrCat(" measured on ", c.transferred_from_sku()))
          << "\n";
    }
    for (const std::string& reason : c.reasons()) {
      out << "    reason:  " << reason << "\n";
    }
    for (const std::string& warning : c.warnings()) {
      out << "    WARNING: " << warning << "\n";
    }
    if (!c.eval_requirement().empty()) {
      out << "    eval:    " << c.eval_requirement() << "\n";
    }
  }
}

void PrintRejections(const v1::PlacePlanResponse& plan, std::ostream& out) {
  if (plan.rejections().empty()) return;
  out << "\nREJECTED\n";
  Table table({"POOL", "SKU", "RULE", "REASON"});
  for (const v1::PoolRejection& r : plan.rejections()) {
    table.AddRow({r.pool(), r.sku(), r.rule(), r.reason()});
  }
  table.Print(out);
}

// `plan_eval`: the plan's own eval requirement, printed once after this.
void PrintBakeOff(const v1::BakeOff& b, const std::string& plan_eval,
                  std::ostream& out) {
  // One pool to measure is a measurement run; a bake-off compares pools.
  out << (b.runs_size() == 1 ? "\nMEASUREMENT RUN before standardizing"
                             : "\nBAKE-OFF before standardizing");
  if (!b.reason().empty()) out << ": " << b.reason();
  out << "\n  recipe " << b.recipe_key() << "\n  settings: "
      << (b.settings().empty() ? Settings(b.recipe()) : b.settings()) << "\n";
  Table table({"POOL", "SKU", "GPUS", "RECIPE", "WHY"},
              {false, false, true, false, false});
  for (const v1::BakeOffRun& run : b.runs()) {
    table.AddRow({run.pool(), run.sku(), absl::StrCat(run.gpu_count()),
                  run.recipe_key().empty() ? b.recipe_key() : run.recipe_key(),
                  run.borderline() ? "borderline fit" : "unmeasured"});
  }
  std::ostringstream runs;
  table.Print(runs);
  for (absl::string_view line :
       absl::StrSplit(runs.str(), '\n', absl::SkipEmpty())) {
    out << "  " << line << "\n";
  }
  if (!b.measure().empty()) {
    out << "  each run records: " << absl::StrJoin(b.measure(), "; ") << "\n";
  }
  if (!b.eval_requirement().empty() && b.eval_requirement() != plan_eval) {
    out << "  eval: " << b.eval_requirement() << "\n";
  }
}

// "10,000": built forwards (an in-place insert loop trips GCC's -Wrestrict).
std::string StepsText(int64_t steps) {
  const uint64_t magnitude = steps < 0
                                 ? uint64_t{0} - static_cast<uint64_t>(steps)
                                 : static_cast<uint64_t>(steps);
  const std::string digits = absl::StrCat(magnitude);
  std::string text = steps < 0 ? "-" : "";
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) text.push_back(',');
    text.push_back(digits[i]);
  }
  return text;
}

void PrintPlan(const v1::PlacePlanRequest& request,
               const v1::PlacePlanResponse& plan, std::ostream& out) {
  out << "plan " << plan.plan_id() << "  recipe " << plan.recipe_key() << "  "
      << StepsText(request.total_steps()) << " steps  objective "
      << ObjectiveText(request.constraints().objective()) << "\n";
  out << "  settings: " << Settings(plan.recipe()) << "\n";
  out << "  planned " << TimeText(plan.create_time()) << ", evidence read "
      << TimeText(plan.evidence_time()) << "\n";
  if (plan.has_predicted_memory()) {
    out << "  " << MemoryText(plan.predicted_memory()) << "\n";
  }
  PrintCandidates(plan, out);
  PrintRejections(plan, out);
  if (plan.has_bake_off()) {
    PrintBakeOff(plan.bake_off(), plan.eval_requirement(), out);
  }
  if (!plan.eval_requirement().empty()) {
    out << "\nEVAL REQUIRED: " << plan.eval_requirement() << "\n";
  }
  if (!plan.warnings().empty()) out << "\n";
  for (const std::string& warning : plan.warnings()) {
    out << "WARNING: " << warning << "\n";
  }
}

void PrintRequest(const v1::PlacePlanRequest& request, std::ostream& out) {
  const v1::PlanConstraints& c = request.constraints();
  std::vector<std::string> parts;
  if (!request.team().empty()) parts.push_back("team " + request.team());
  if (!request.request_id().empty()) {
    parts.push_back("request id " + request.request_id());
  }
  if (c.max_gpus() > 0)
    parts.push_back(absl::StrCat("max ", c.max_gpus(), " GPUs"));
  if (c.has_deadline()) {
    parts.push_back("deadline " + absl::FormatDuration(
                                      common::DurationFromProto(c.deadline())));
  }
  if (!c.allowed_pools().empty()) {
    parts.push_back("pools " + absl::StrJoin(c.allowed_pools(), ","));
  }
  if (!c.required_labels().empty()) {
    std::map<std::string, std::string> labels(c.required_labels().begin(),
                                              c.required_labels().end());
    parts.push_back("labels " +
                    absl::StrJoin(labels, ",", absl::PairFormatter("=")));
  }
  if (!request.serving().sku().empty()) {
    parts.push_back(
        absl::StrCat("serving on ", request.serving().sku(),
                     request.serving().precision() != v1::PRECISION_UNSPECIFIED
                         ? " in " + Short(v1::Precision_descriptor(),
                                          request.serving().precision())
                         : ""));
  }
  out << "request: " << (parts.empty() ? "-" : absl::StrJoin(parts, ", "))
      << "\n  as asked: " << Settings(request.recipe()) << "\n";
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
  if (!absl::GetFlag(FLAGS_recipe).empty()) {
    absl::StatusOr<v1::PlacePlanRequest> from_file =
        ReadPlanRequestFile(absl::GetFlag(FLAGS_recipe));
    if (!from_file.ok()) {
      std::cerr << "placectl: " << from_file.status().message() << "\n";
      return 2;
    }
    request = *std::move(from_file);
  }
  if (!ApplyFlags(&request)) return 2;
  if (request.constraints().ByteSizeLong() == 0) request.clear_constraints();
  if (request.serving().ByteSizeLong() == 0) request.clear_serving();

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
