#include "clients/placectl/plan_text.h"

#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/time/time.h"
#include "clients/common/table.h"
#include "clients/placectl/recipe_file.h"
#include "common/proto_time.h"
#include "core/money.h"

namespace placement::placectl {
namespace {

using clients::Table;

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
    case v1::OBJECTIVE_FINISH_BY_DEADLINE:
      return "finish by the deadline (wait included, p90)";
    case v1::OBJECTIVE_COST_OF_DELAY:
      return "cost of delay";
    default:
      return "lowest cost (default)";
  }
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

// "now", "2h 05m": a duration from the plan's time.
std::string DelayText(const google::protobuf::Duration& d) {
  const std::string text = WallTime(d);
  return text == "-" ? "now" : text;
}

// The START and FINISH columns: the median [p90], or why not known.
std::string StartColumn(const v1::CandidateTiming& t) {
  if (t.status() != v1::START_STATUS_KNOWN) return "unknown";
  return absl::StrCat(DelayText(t.expected_start()), " [",
                      DelayText(t.start_band().high()), "]");
}

std::string FinishColumn(const v1::CandidateTiming& t) {
  if (t.status() != v1::START_STATUS_KNOWN) return "unknown";
  return absl::StrCat(WallTime(t.expected_finish()), " [",
                      WallTime(t.finish_band().high()), "]");
}

// A candidate's timing line: P(start within t) and the finish band.
std::string TimingText(const v1::CandidateTiming& t) {
  if (t.status() != v1::START_STATUS_KNOWN) {
    return absl::StrCat(Short(v1::StartStatus_descriptor(), t.status()), ": ",
                        t.reason());
  }
  std::vector<std::string> quantiles;
  for (const v1::StartQuantile& q : t.start_quantiles()) {
    quantiles.push_back(absl::StrFormat(
        "%.0f%% within %s", 100 * q.probability(), DelayText(q.within())));
  }
  return absl::StrCat("start ", absl::StrJoin(quantiles, ", "), "; finish ",
                      WallTime(t.expected_finish()), " (p10 ",
                      WallTime(t.finish_band().low()), ", p90 ",
                      WallTime(t.finish_band().high()), ")");
}

std::string BasisText(const v1::PlacementCandidate& c) {
  const std::string runs = absl::StrCat(
      " (", c.evidence_runs(), c.evidence_runs() == 1 ? " run)" : " runs)");
  std::string basis;
  switch (c.basis()) {
    case v1::EVIDENCE_BASIS_MEASURED:
      basis = absl::StrCat("measured", runs);
      break;
    case v1::EVIDENCE_BASIS_TRANSFERRED:
      basis = absl::StrCat("transferred", runs);
      break;
    case v1::EVIDENCE_BASIS_ESTIMATED:
      basis = "estimated";
      break;
    default:
      return "-";
  }
  // Its job measures it; the pool ranks at the configuration measured
  // there (the candidate's "explores" line).
  return c.has_exploration() ? absl::StrCat(basis, ", explored") : basis;
}

std::string ExplorationText(const v1::ConfigurationExploration& x) {
  // A premium of 0 or less: cheaper even at its pessimistic edge.
  const std::string premium =
      x.premium_micros() > 0
          ? absl::StrCat("it may cost this job up to ",
                         core::FormatMicrosAsCents(x.premium_micros()), " more")
          : "it costs this job nothing more even at its pessimistic edge";
  return absl::StrFormat(
      "the job runs this configuration in place of recipe %s, measured here "
      "at %s (the pool ranks at that); %s and is expected to save %s over %s "
      "steps of this recipe class (%.0f%% chance it is cheaper)",
      x.measured_recipe_key(),
      core::FormatMicrosAsCents(x.measured_cost_micros()), premium,
      core::FormatMicrosAsCents(x.expected_saving_micros()),
      StepsText(x.demand_steps()), 100 * x.win_probability());
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

// "0.05 measured" / "0.05 prior": the start-up's GPU-hours and their source.
std::string StartupText(const v1::PlacementCandidate& c) {
  return absl::StrFormat("%.2f %s", c.startup_gpu_hours(),
                         c.startup_measured() ? "measured" : "prior");
}

// "start-up 0.05 GPU-h (prior) + 10,000 steps x 0.720 GPU-h/1K + rework
// 0.31 GPU-h = 7.56 GPU-h": what the expected GPU-hours are made of. Empty
// for a plan recorded before candidates carried it.
std::string CostMakeUpText(const v1::PlacementCandidate& c,
                           int64_t total_steps) {
  if (!(c.step_gpu_hours() > 0) && !(c.startup_gpu_hours() > 0)) return "";
  return absl::StrFormat(
      "start-up %.2f GPU-h (%s) + %s steps x %.3f GPU-h/1K + rework %.2f "
      "GPU-h = %.2f GPU-h",
      c.startup_gpu_hours(), c.startup_measured() ? "measured" : "prior",
      StepsText(total_steps), 1000 * c.step_gpu_hours(), c.rework_gpu_hours(),
      c.expected_gpu_hours());
}

// "0.0050 [0.0012-0.0110] per hour from 1 failure over 42.0 run-hours,
// 0.55 h lost per failure (prior)": the pool's failure rate and what it rests
// on.
std::string FailureRateText(const v1::FailureRate& f) {
  return absl::StrFormat(
      "%s per hour from %d failure%s over %.1f run-hours, %.2f h lost per "
      "failure "
      "(%s)",
      WithBand(f.per_hour(), f.per_hour_band(), "%.4f"), f.failures(),
      f.failures() == 1 ? "" : "s", f.run_hours(), f.lost_hours_per_failure(),
      f.lost_hours_measured() ? "measured" : "prior");
}

// Whether an eval meets the requirement: "met by run R: METRIC SCORE on SKU
// in PRECISION", "missing: no eval of KEY on SKU in PRECISION", or, with
// criteria, "short: CRITERION: METRIC SCORE of run R, needs >= X" for each
// that fails.
std::string EvalStatusText(const v1::EvalStatus& s) {
  const std::string target =
      absl::StrCat(s.serving_sku(), " in ",
                   Short(v1::Precision_descriptor(), s.serving_precision()));
  if (!s.met() && s.checks_size() > 0) {
    std::vector<std::string> short_of;
    for (const v1::EvalCheck& check : s.checks()) {
      if (check.passed()) continue;
      std::string need;
      if (check.has_min_score()) {
        need = absl::StrFormat(">= %g", check.min_score());
      }
      if (check.has_max_score()) {
        absl::StrAppend(&need, need.empty() ? "" : " and ",
                        absl::StrFormat("<= %g", check.max_score()));
      }
      short_of.push_back(
          check.run_id().empty()
              ? absl::StrCat(check.criterion(), ": no ", check.metric_name(),
                             " eval, needs ", need)
              : absl::StrCat(check.criterion(), ": ", check.metric_name(), " ",
                             absl::StrFormat("%g", check.score()), " of run ",
                             check.run_id(), ", needs ", need));
    }
    return absl::StrCat("short on ", target, ": ",
                        absl::StrJoin(short_of, "; "));
  }
  if (!s.met()) {
    return absl::StrCat("missing: no eval of ", s.recipe_key(), " on ", target);
  }
  return absl::StrCat(
      "met by run ", s.run_id(), ": ", s.metric_name(), " ",
      absl::StrFormat("%g", s.score()), " on ", target,
      s.checks_size() > 0
          ? absl::StrCat(" (", s.checks_size(),
                         s.checks_size() == 1 ? " criterion" : " criteria",
                         " passed)")
          : "");
}

// The candidate table's EVAL column.
std::string EvalColumn(const v1::PlacementCandidate& c) {
  if (!c.has_eval_status()) return "-";
  if (c.eval_status().met()) return "met";
  return c.eval_status().checks_size() > 0 ? "short" : "missing";
}

// One candidate's lines under the table: its recipe, what its cost is made
// of, its failure rate, timing, reasons, warnings and eval.
void PrintCandidateDetails(const v1::PlacePlanRequest& request,
                           const v1::PlacementCandidate& c, std::ostream& out) {
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
  if (const std::string cost = CostMakeUpText(c, request.total_steps());
      !cost.empty()) {
    out << "    cost:    " << cost << "\n";
  }
  if (c.has_exploration()) {
    out << "    explores: " << ExplorationText(c.exploration()) << "\n";
  }
  if (c.has_failure_rate()) {
    out << "    failure: " << FailureRateText(c.failure_rate()) << "\n";
  }
  if (c.has_timing()) {
    out << "    time:    " << TimingText(c.timing()) << "\n";
    if (c.timing().status() == v1::START_STATUS_KNOWN) {
      out << "    wait:    " << c.timing().reason() << "\n";
    }
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
  if (c.has_eval_status()) {
    out << "    eval is: " << EvalStatusText(c.eval_status()) << "\n";
  }
}

void PrintCandidates(const v1::PlacePlanRequest& request,
                     const v1::PlacePlanResponse& plan, std::ostream& out) {
  if (plan.candidates().empty()) {
    out << "\nNo pool can take this recipe; each one's rule is below.\n";
    return;
  }
  Table table(
      {"RANK",
       "POOL",
       "SKU",
       "GPUS",
       "PARALLELISM",
       "FIT",
       "PEAK GB [BAND] (HEADROOM)",
       "STEP S [BAND]",
       "JOB GPU-H/1K STEPS",
       "START-UP GPU-H",
       "REWORK GPU-H",
       "EXPECTED GPU-H",
       "COST",
       "LIST-PRICE COST",
       "WALL TIME",
       "BASIS",
       "CONFIDENCE",
       "EVAL",
       "START P50 [P90]",
       "FINISH P50 [P90]"},
      {true, false, false, true, false, false, true,  true,  true, false,
       true, true,  true,  true, true,  false, false, false, true, true});
  for (const v1::PlacementCandidate& c : plan.candidates()) {
    table.AddRow(
        {absl::StrCat(c.rank()),
         c.pool(),
         c.sku(),
         absl::StrCat(c.gpu_count()),
         LayoutText(c),
         FitText(c.fit()),
         absl::StrFormat(
             "%s (%+.1f)",
             WithBand(c.peak_memory_gb(), c.peak_memory_gb_band(), "%.1f"),
             c.headroom_gb()),
         c.step_time_s() > 0
             ? WithBand(c.step_time_s(), c.step_time_s_band(), "%.2f")
             : "-",
         absl::StrFormat("%.3f", c.gpu_hours_per_1k_successful_steps()),
         StartupText(c),
         absl::StrFormat("%.2f", c.rework_gpu_hours()),
         absl::StrFormat("%.2f", c.expected_gpu_hours()),
         core::FormatMicrosAsCents(c.expected_cost_micros()),
         c.has_list_price_cost_micros()
             ? core::FormatMicrosAsCents(c.list_price_cost_micros())
             : "-",
         WallTime(c.expected_wall_time()),
         BasisText(c),
         Short(v1::Confidence_descriptor(), c.confidence()),
         EvalColumn(c),
         StartColumn(c.timing()),
         FinishColumn(c.timing())});
  }
  out << "\n";
  table.Print(out);
  // The headline per-1,000-steps figure is the job's, not a step's: read
  // as a step's, it overstates one (a 1,000-step job with the priors alone
  // pays about 1.4 x its steps).
  out << "JOB GPU-H/1K STEPS is the job's expected GPU-hours per 1,000 "
         "successful steps: its steps plus START-UP and REWORK (the start-up "
         "and failure priors when nothing is measured); one step alone is "
         "STEP S x GPUS.\n";
  for (const v1::PlacementCandidate& c : plan.candidates()) {
    PrintCandidateDetails(request, c, out);
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
  Table table({"POOL", "SKU", "GPUS", "RECIPE", "STEPS", "COST",
               "EXPECTED SAVING", "CHANCE CHEAPER", "WHY"},
              {false, false, true, false, true, true, true, true, false});
  for (const v1::BakeOffRun& run : b.runs()) {
    // A run with no expected saving (an older server's BORDERLINE first
    // choice, run to see whether it fits) shows none.
    const bool valued = run.expected_saving_micros() > 0;
    table.AddRow(
        {run.pool(), run.sku(), absl::StrCat(run.gpu_count()),
         run.recipe_key().empty() ? b.recipe_key() : run.recipe_key(),
         run.steps() > 0 ? StepsText(run.steps()) : "-",
         run.steps() > 0 ? core::FormatMicrosAsCents(run.cost_micros()) : "-",
         valued ? core::FormatMicrosAsCents(run.expected_saving_micros()) : "-",
         valued ? absl::StrFormat("%.0f%%", 100 * run.win_probability()) : "-",
         run.borderline() ? "borderline fit" : "unmeasured"});
  }
  std::ostringstream runs;
  table.Print(runs);
  for (absl::string_view line :
       absl::StrSplit(runs.str(), '\n', absl::SkipEmpty())) {
    out << "  " << line << "\n";
  }
  for (const v1::BakeOffRun& run : b.runs()) {
    if (!run.reason().empty()) {
      out << "  " << run.pool() << ": " << run.reason() << "\n";
    }
  }
  if (b.expected_demand_steps() > 0) {
    out << "  expected demand: " << StepsText(b.expected_demand_steps())
        << " steps of this recipe class (this request's and the fleet's "
           "runs of it)\n";
  }
  if (!b.measure().empty()) {
    out << "  each run records: " << absl::StrJoin(b.measure(), "; ") << "\n";
  }
  if (!b.eval_requirement().empty() && b.eval_requirement() != plan_eval) {
    out << "  eval: " << b.eval_requirement() << "\n";
  }
}

}  // namespace

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
  PrintCandidates(request, plan, out);
  if (plan.has_deadline()) {
    out << "\nDEADLINE " << WallTime(plan.deadline().deadline())
        << " (wait included, p90): "
        << (plan.deadline().met() ? "met" : "NOT MET") << ": "
        << plan.deadline().reason() << "\n";
  }
  PrintRejections(plan, out);
  if (plan.has_bake_off()) {
    PrintBakeOff(plan.bake_off(), plan.eval_requirement(), out);
  }
  if (!plan.eval_requirement().empty()) {
    out << "\nEVAL REQUIRED: " << plan.eval_requirement() << "\n";
  }
  if (plan.has_eval_status()) {
    out << "EVAL: " << EvalStatusText(plan.eval_status()) << "\n";
  }
  if (plan.has_standard()) {
    out << "\nSTANDARD " << plan.standard().standard_id() << " ("
        << plan.standard().pool() << ", "
        << (plan.standard().applied() ? "applied" : "not applied")
        << (plan.standard().contradicted() ? ", contradicted" : "")
        << "): " << plan.standard().reason() << "\n";
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
  if (c.delay_cost_micros_per_hour() > 0) {
    parts.push_back(
        absl::StrCat("delay cost ",
                     core::FormatMicrosAsCents(c.delay_cost_micros_per_hour()),
                     " per hour"));
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

}  // namespace placement::placectl
