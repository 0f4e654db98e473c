#include "clients/agent/run_record.h"

#include <google/protobuf/struct.pb.h>
#include <google/protobuf/util/json_util.h>
#include <signal.h>

#include <algorithm>
#include <cmath>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "common/proto_time.h"

namespace placement::agent {
namespace {

using google::protobuf::Struct;
using google::protobuf::Value;

constexpr size_t kMaxFailureReason = 4096;  // services/api/run_validation.h

absl::optional<double> Number(const Struct& s, const char* key) {
  auto it = s.fields().find(key);
  if (it == s.fields().end() || it->second.kind_case() != Value::kNumberValue ||
      !std::isfinite(it->second.number_value())) {
    return absl::nullopt;
  }
  return it->second.number_value();
}

// (Debian 12's Abseil predates absl::StrContainsIgnoreCase.)
bool ContainsIgnoreCase(absl::string_view haystack, absl::string_view needle) {
  return absl::StrContains(absl::AsciiStrToLower(haystack),
                           absl::AsciiStrToLower(needle));
}

// The first output line (from the end) containing any of `needles`,
// case-insensitively.
bool FindLine(absl::string_view tail,
              std::initializer_list<const char*> needles, std::string* line) {
  std::vector<absl::string_view> lines =
      absl::StrSplit(tail, absl::ByAnyChar("\r\n"), absl::SkipWhitespace());
  for (auto it = lines.rbegin(); it != lines.rend(); ++it) {
    for (const char* needle : needles) {
      if (ContainsIgnoreCase(*it, needle)) {
        // Printable ASCII only: a failure reason must be valid UTF-8 and is
        // cut at a byte count.
        std::string text(absl::StripAsciiWhitespace(*it).substr(0, 300));
        for (char& c : text) {
          if (static_cast<unsigned char>(c) < 0x20 ||
              static_cast<unsigned char>(c) > 0x7e) {
            c = '?';
          }
        }
        *line = std::move(text);
        return true;
      }
    }
  }
  return false;
}

struct PeakMemory {
  double gb = 0;
  v1::PeakMemoryKind kind = v1::PEAK_MEMORY_KIND_UNSPECIFIED;
};

// The kind asked for when it was measured; else the largest figure and its
// kind (NVML's used memory holds the allocator's reserve, which holds what
// is allocated, but a sampled NVML reading can miss a short peak that the
// allocator's own maximum saw).
PeakMemory ChoosePeak(double allocated, double reserved, double device,
                      v1::PeakMemoryKind asked) {
  const PeakMemory measured[] = {
      {device, v1::PEAK_MEMORY_KIND_DEVICE_USED},
      {reserved, v1::PEAK_MEMORY_KIND_RESERVED},
      {allocated, v1::PEAK_MEMORY_KIND_ALLOCATED},
  };
  for (const PeakMemory& m : measured) {
    if (m.kind == asked && m.gb > 0) return m;
  }
  PeakMemory largest;
  for (const PeakMemory& m : measured) {
    if (m.gb > largest.gb) largest = m;
  }
  return largest;
}

// The JSON object on `line`, nullopt when it holds none.
absl::optional<Struct> JsonObject(absl::string_view line) {
  line = absl::StripAsciiWhitespace(line);
  if (!absl::StartsWith(line, "{") || !absl::EndsWith(line, "}")) {
    return absl::nullopt;
  }
  Struct s;
  google::protobuf::util::JsonParseOptions options;
  if (!google::protobuf::util::JsonStringToMessage(std::string(line), &s,
                                                   options)
           .ok()) {
    return absl::nullopt;
  }
  return s;
}

}  // namespace

absl::optional<StepRecord> ParseStepRecord(absl::string_view line) {
  const absl::optional<Struct> object = JsonObject(line);
  if (!object.has_value()) return absl::nullopt;
  const Struct& s = *object;
  const absl::optional<double> step = Number(s, "step");
  const absl::optional<double> step_time = Number(s, "step_time_s");
  if (!step || !step_time || *step < 0 || *step_time <= 0) return absl::nullopt;
  StepRecord r;
  r.step = static_cast<int64_t>(*step);
  r.step_time_s = *step_time;
  if (auto tokens = Number(s, "tokens"); tokens && *tokens >= 0) {
    r.tokens = static_cast<int64_t>(*tokens);
  }
  auto memory = Number(s, "memory_allocated_gb");
  if (!memory) memory = Number(s, "memory_gb");
  if (memory && *memory >= 0) r.memory_allocated_gb = memory;
  if (auto reserved = Number(s, "memory_reserved_gb");
      reserved && *reserved >= 0) {
    r.memory_reserved_gb = reserved;
  }
  r.loss = Number(s, "loss");
  auto offload = s.fields().find("offload");
  if (offload != s.fields().end() &&
      offload->second.kind_case() == Value::kStringValue) {
    const std::string o = absl::AsciiStrToLower(offload->second.string_value());
    if (o == "cpu") r.offload = v1::OFFLOAD_CPU;
    if (o == "nvme") r.offload = v1::OFFLOAD_NVME;
  }
  return r;
}

absl::optional<int64_t> ParseCheckpointRecord(absl::string_view line) {
  if (ParseStepRecord(line).has_value()) return absl::nullopt;
  const absl::optional<Struct> object = JsonObject(line);
  if (!object.has_value()) return absl::nullopt;
  const absl::optional<double> n = Number(*object, "checkpoint_step");
  // 2^53: beyond it a JSON number is no longer a whole count.
  if (!n || *n < 0 || *n != std::floor(*n) || *n > 9007199254740992.0) {
    return absl::nullopt;
  }
  return static_cast<int64_t>(*n);
}

v1::RunOutcome ClassifyAttempt(const AttemptEnd& end,
                               absl::string_view output_tail,
                               std::string* reason) {
  if (end.preempted) {
    // The job was stopped from outside; however the command ended then, it
    // says nothing about the recipe.
    *reason =
        absl::StrCat("stopped by SIGTERM (job preempted or cancelled); ",
                     end.term_signal != 0
                         ? absl::StrCat("killed by signal ", end.term_signal)
                         : absl::StrCat("exit code ", end.exit_code));
    return v1::RUN_OUTCOME_PREEMPTED;
  }
  if (!end.timed_out && end.term_signal == 0 && end.exit_code == 0) {
    reason->clear();
    return v1::RUN_OUTCOME_SUCCEEDED;
  }
  const std::string how =
      end.timed_out ? "timed out"
      : end.term_signal != 0
          ? absl::StrCat("killed by signal ", end.term_signal)
          : absl::StrCat("exit code ", end.exit_code);
  std::string line;
  // Out of memory first: an OOM on one rank usually shows up as an NCCL
  // timeout on the others, and the OOM is the cause.
  if (FindLine(output_tail,
               {"CUDA out of memory", "OutOfMemoryError", "out of memory",
                "CUBLAS_STATUS_ALLOC_FAILED", "NCCL_ERROR_OUT_OF_MEMORY"},
               &line)) {
    *reason = absl::StrCat(how, ": ", line);
    return v1::RUN_OUTCOME_OUT_OF_MEMORY;
  }
  if (FindLine(output_tail,
               {"Watchdog caught collective operation timeout", "NCCL timeout",
                "NCCL communicator was aborted", "collective operation timeout",
                "ProcessGroupNCCL"},
               &line) ||
      (FindLine(output_tail, {"NCCL"}, &line) &&
       (ContainsIgnoreCase(line, "timeout") ||
        ContainsIgnoreCase(line, "timed out")))) {
    *reason = absl::StrCat(how, ": ", line);
    return v1::RUN_OUTCOME_COLLECTIVE_TIMEOUT;
  }
  if (FindLine(output_tail,
               {"Xid", "uncorrectable ECC", "fallen off the bus", "ECC error"},
               &line)) {
    *reason = absl::StrCat(how, ": ", line);
    return v1::RUN_OUTCOME_HARDWARE_ERROR;
  }
  if (!end.timed_out && end.term_signal == SIGTERM) {
    *reason = how;
    return v1::RUN_OUTCOME_PREEMPTED;
  }
  *reason = FindLine(output_tail, {"error", "exception", "traceback"}, &line)
                ? absl::StrCat(how, ": ", line)
                : how;
  return v1::RUN_OUTCOME_FAILED;
}

double Percentile(std::vector<double> values, double p) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const double rank = std::ceil(p / 100.0 * static_cast<double>(values.size()));
  const size_t index =
      static_cast<size_t>(std::clamp(rank, 1.0, double(values.size()))) - 1;
  return values[index];
}

int64_t StepsKept(const std::vector<Attempt>& attempts,
                  int64_t steps_attempted) {
  if (attempts.empty()) return 0;
  absl::optional<int64_t> base;
  for (const Attempt& a : attempts) {
    if (a.first_step.has_value()) {
      base = a.first_step;
      break;
    }
  }
  // Steps held by the latest checkpoint of the attempts before the last.
  int64_t kept_before = 0;
  for (size_t i = 0; i + 1 < attempts.size(); ++i) {
    if (attempts[i].checkpoint_step.has_value()) {
      kept_before = std::max(kept_before,
                             *attempts[i].checkpoint_step - base.value_or(0));
    }
  }
  const Attempt& last = attempts.back();
  int64_t kept = 0;
  if (last.outcome == v1::RUN_OUTCOME_SUCCEEDED) {
    // It resumed where its first step says, if a checkpoint held that much;
    // an attempt that started over (step 0 again) resumed from nothing.
    const int64_t resumed =
        last.first_step.has_value()
            ? std::clamp<int64_t>(*last.first_step - *base, 0, kept_before)
            : kept_before;
    kept = resumed + last.steps;
  } else {
    kept = kept_before;
    if (last.checkpoint_step.has_value()) {
      kept = std::max(kept, *last.checkpoint_step - base.value_or(0));
    }
  }
  return std::clamp<int64_t>(kept, 0, std::max<int64_t>(0, steps_attempted));
}

namespace {

// What the summary takes from the steps' samples.
struct SampleTotals {
  std::vector<double> step_times;
  double busy = 0;  // seconds spent in steps
  double allocated = 0;
  double reserved = 0;
  int64_t tokens = 0;
};

SampleTotals SumSamples(const std::vector<v1::StepSample>& samples) {
  SampleTotals t;
  for (const v1::StepSample& s : samples) {
    t.step_times.push_back(s.step_time_seconds());
    t.busy += s.step_time_seconds();
    t.tokens += s.tokens();
    t.allocated = std::max(t.allocated, s.memory_allocated_gb());
    t.reserved = std::max(t.reserved, s.memory_reserved_gb());
  }
  return t;
}

// Which run this is, where, of what, and when.
void SetIdentity(const RunFacts& facts, v1::BenchmarkRun& run) {
  run.set_run_id(facts.run_id);
  run.set_agent_id(facts.agent_id);
  run.set_pool(facts.pool);
  run.set_sku(facts.sku);
  for (const std::string& node : facts.node_names) run.add_node_names(node);
  run.set_gpu_count(facts.recipe.gpu_count());
  *run.mutable_recipe() = facts.recipe;
  *run.mutable_start_time() = common::TimeToProto(facts.attempts.front().start);
  *run.mutable_end_time() = common::TimeToProto(facts.attempts.back().end);
}

// The steps attempted and kept, their times and throughput; an error when
// the command reported no step.
absl::Status SetSteps(const RunFacts& facts, const SampleTotals& totals,
                      v1::BenchmarkRun& run) {
  run.set_steps_attempted(static_cast<int64_t>(facts.samples.size()));
  run.set_steps_succeeded(StepsKept(facts.attempts, run.steps_attempted()));
  if (totals.step_times.empty()) {
    return absl::FailedPreconditionError(
        "the command printed no step record, so there is no step time to "
        "report (see docs/AGENT.md for the step record protocol)");
  }
  run.set_step_time_mean_seconds(totals.busy /
                                 static_cast<double>(totals.step_times.size()));
  run.set_step_time_p50_seconds(Percentile(totals.step_times, 50));
  run.set_step_time_p95_seconds(Percentile(totals.step_times, 95));
  run.set_tokens_per_second(
      totals.busy > 0 ? static_cast<double>(totals.tokens) / totals.busy : 0);
  return absl::OkStatus();
}

// The peak memory and which kind it is; an error when none was measured.
absl::Status SetPeakMemory(const RunFacts& facts, const SampleTotals& totals,
                           v1::BenchmarkRun& run) {
  PeakMemory peak = ChoosePeak(totals.allocated, totals.reserved,
                               facts.nvml_peak_gb, facts.report_peak);
  if (peak.gb <= 0 &&
      facts.attempts.back().outcome == v1::RUN_OUTCOME_OUT_OF_MEMORY) {
    peak = {facts.card_memory_gb, v1::PEAK_MEMORY_KIND_DEVICE_USED};
  }
  if (peak.gb <= 0) {
    return absl::FailedPreconditionError(
        "no memory was measured: the step records carry no "
        "memory_allocated_gb and NVML was not available");
  }
  run.set_peak_memory_gb(peak.gb);
  run.set_peak_memory_kind(peak.kind);
  run.mutable_recipe()->set_reported_peak(peak.kind);
  run.set_peak_memory_allocated_gb(totals.allocated);
  run.set_peak_memory_reserved_gb(totals.reserved);
  return absl::OkStatus();
}

// The retries, why each retried attempt failed, the run's outcome and the
// failure reasons of its attempts.
void SetAttempts(const RunFacts& facts, v1::BenchmarkRun& run) {
  run.set_retries(static_cast<int32_t>(facts.attempts.size()) - 1);
  // Why each retried attempt failed, so the service counts each failure
  // where it happened (none when an earlier attempt names no failure).
  for (size_t i = 0; i + 1 < facts.attempts.size(); ++i) {
    const v1::RunOutcome o = facts.attempts[i].outcome;
    if (o == v1::RUN_OUTCOME_SUCCEEDED || o == v1::RUN_OUTCOME_UNSPECIFIED) {
      run.clear_retry_outcomes();
      break;
    }
    run.add_retry_outcomes(o);
  }
  run.set_outcome(facts.attempts.back().outcome);
  std::vector<std::string> reasons;
  for (size_t i = 0; i < facts.attempts.size(); ++i) {
    const Attempt& a = facts.attempts[i];
    if (a.outcome == v1::RUN_OUTCOME_SUCCEEDED) continue;
    reasons.push_back(absl::StrCat(
        "attempt ", i + 1, ": ",
        absl::StripPrefix(v1::RunOutcome_Name(a.outcome), "RUN_OUTCOME_"), " (",
        a.reason, ")"));
  }
  std::string reason = absl::StrJoin(reasons, "; ");
  if (reason.size() > kMaxFailureReason) reason.resize(kMaxFailureReason);
  run.set_failure_reason(reason);
}

}  // namespace

absl::StatusOr<v1::BenchmarkRun> BuildRunSummary(const RunFacts& facts) {
  if (facts.attempts.empty()) {
    return absl::FailedPreconditionError("the command never ran");
  }
  v1::BenchmarkRun run;
  SetIdentity(facts, run);
  const SampleTotals totals = SumSamples(facts.samples);
  if (absl::Status s = SetSteps(facts, totals, run); !s.ok()) return s;
  if (absl::Status s = SetPeakMemory(facts, totals, run); !s.ok()) return s;
  run.set_offload(facts.record_offload != v1::OFFLOAD_UNSPECIFIED
                      ? facts.record_offload
                      : facts.offload);
  run.set_collectives_opened(facts.collectives_opened);
  run.set_interconnect(facts.collectives_opened ? facts.interconnect
                                                : v1::INTERCONNECT_NONE);
  SetAttempts(facts, run);
  run.set_exclusive(facts.exclusive);
  run.set_plan_id(facts.plan_id);
  run.set_team(facts.team);
  return run;
}

}  // namespace placement::agent
