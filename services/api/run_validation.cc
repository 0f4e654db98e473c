#include "services/api/run_validation.h"

#include <cmath>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "common/proto_time.h"
#include "core/evidence/measured_run.h"
#include "core/recipe.h"
#include "services/api/catalog_convert.h"
#include "services/api/run_convert.h"

namespace placement::services {
namespace {

// Clocks on agents drift; a timestamp this far ahead of ours is wrong.
constexpr absl::Duration kClockSkew = absl::Minutes(10);
// Runs older than this are not fresh evidence (and are usually unit errors).
constexpr absl::Duration kMaxAge = absl::Hours(24 * 366 * 5);

class Violations {
 public:
  void Add(std::string field, std::string description) {
    list_.push_back({std::move(field), std::move(description)});
  }
  void Append(const core::FieldViolations& more) {
    list_.insert(list_.end(), more.begin(), more.end());
  }
  // Finite and within [min, max].
  void CheckRange(const std::string& field, double value, double min,
                  double max) {
    if (!std::isfinite(value)) {
      Add(field, "must be a finite number");
    } else if (value < min || value > max) {
      Add(field, absl::StrCat("must be between ", min, " and ", max));
    }
  }
  void CheckPositive(const std::string& field, double value, double max) {
    if (!std::isfinite(value) || value <= 0 || value > max) {
      Add(field, absl::StrCat("must be positive, finite and at most ", max));
    }
  }
  void CheckId(const std::string& field, const std::string& value,
               bool required) {
    if (value.empty()) {
      if (required) Add(field, "is required");
    } else if (value.size() > kMaxIdLength) {
      Add(field, absl::StrCat("at most ", kMaxIdLength, " characters"));
    }
  }
  size_t size() const { return list_.size(); }
  core::FieldViolations Take() { return std::move(list_); }

 private:
  core::FieldViolations list_;
};

}  // namespace

bool IsUuid(absl::string_view text) {
  if (text.size() != 36) return false;
  for (size_t i = 0; i < text.size(); ++i) {
    if (i == 8 || i == 13 || i == 18 || i == 23) {
      if (text[i] != '-') return false;
    } else if (!absl::ascii_isxdigit(text[i])) {
      return false;
    }
  }
  return true;
}

namespace {

void CheckIds(const v1::BenchmarkRun& run, Violations& v) {
  if (!IsUuid(run.run_id())) {
    v.Add("run.run_id", "must be a UUID (8-4-4-4-12 hex digits)");
  }
  v.CheckId("run.agent_id", run.agent_id(), /*required=*/true);
  v.CheckId("run.pool", run.pool(), /*required=*/true);
  v.CheckId("run.sku", run.sku(), /*required=*/true);
  v.CheckId("run.team", run.team(), /*required=*/false);
  if (!run.plan_id().empty() && !IsUuid(run.plan_id())) {
    v.Add("run.plan_id", "must be a UUID when set");
  }
}

void CheckNodeNames(const v1::BenchmarkRun& run, Violations& v) {
  if (run.node_names_size() > static_cast<int>(kMaxNodeNames)) {
    v.Add("run.node_names", absl::StrCat("at most ", kMaxNodeNames, " nodes"));
  }
  for (int i = 0; i < run.node_names_size(); ++i) {
    const std::string& name = run.node_names(i);
    if (name.empty() || name.size() > kMaxNodeNameLength) {
      v.Add(absl::StrCat("run.node_names[", i, "]"),
            absl::StrCat("must be 1-", kMaxNodeNameLength, " characters"));
    }
  }
}

// The recipe's own rules are core's; the upload carries the GPU count twice.
void CheckRecipe(const v1::BenchmarkRun& run, const core::Recipe& recipe,
                 Violations& v) {
  if (!run.has_recipe()) {
    v.Add("run.recipe", "is required");
    return;
  }
  v.Append(core::ValidateRecipe(recipe, "run.recipe."));
  if (recipe.gpu_count != run.gpu_count()) {
    v.Add("run.recipe.gpu_count", "must equal run.gpu_count");
  }
}

// Both times are required and recent; their order is a core rule.
void CheckTimes(const v1::BenchmarkRun& run, absl::Time now, Violations& v) {
  const bool have_start = IsWellFormedTime(run.start_time());
  const bool have_end = IsWellFormedTime(run.end_time());
  if (!have_start) v.Add("run.start_time", "is required");
  if (!have_end) v.Add("run.end_time", "is required");
  if (!have_start || !have_end) return;
  const absl::Time start = common::TimeFromProto(run.start_time());
  const absl::Time end = common::TimeFromProto(run.end_time());
  if (end < start) return;
  if (end > now + kClockSkew) {
    v.Add("run.end_time", "is in the future");
  } else if (start < now - kMaxAge) {
    v.Add("run.start_time", "is more than five years ago");
  }
  if (!run.has_submit_time()) return;
  if (!IsWellFormedTime(run.submit_time())) {
    v.Add("run.submit_time", "is not a valid time");
  } else if (common::TimeFromProto(run.submit_time()) > start) {
    v.Add("run.submit_time",
          "is after run.start_time (a job starts after "
          "it is submitted)");
  } else if (common::TimeFromProto(run.submit_time()) < start - kMaxAge) {
    v.Add("run.submit_time", "is more than five years before the start");
  }
}

// The allocator's two peaks, when the client has them, and which of them
// the run reports.
void CheckAllocatorPeaks(const v1::BenchmarkRun& run, Violations& v) {
  v.CheckRange("run.peak_memory_allocated_gb", run.peak_memory_allocated_gb(),
               0, 4096);
  v.CheckRange("run.peak_memory_reserved_gb", run.peak_memory_reserved_gb(), 0,
               4096);
  if (run.peak_memory_allocated_gb() > 0 && run.peak_memory_reserved_gb() > 0 &&
      run.peak_memory_allocated_gb() > run.peak_memory_reserved_gb()) {
    v.Add("run.peak_memory_allocated_gb",
          "must not exceed run.peak_memory_reserved_gb (the allocator "
          "reserves what it allocates)");
  }
  if (run.peak_memory_kind() != v1::PEAK_MEMORY_KIND_UNSPECIFIED &&
      run.recipe().reported_peak() != v1::PEAK_MEMORY_KIND_UNSPECIFIED &&
      run.peak_memory_kind() != run.recipe().reported_peak()) {
    v.Add("run.peak_memory_kind", "must agree with run.recipe.reported_peak");
  }
}

void CheckEnums(const v1::BenchmarkRun& run, Violations& v) {
  if (run.offload() == v1::OFFLOAD_UNSPECIFIED ||
      !v1::Offload_IsValid(run.offload())) {
    v.Add("run.offload", "must be NONE, CPU or NVME");
  }
  if (run.interconnect() == v1::INTERCONNECT_UNSPECIFIED ||
      !v1::Interconnect_IsValid(run.interconnect())) {
    v.Add("run.interconnect", "must be NONE, NVLINK, PCIE or HOST_MEMORY");
  }
  if (run.outcome() == v1::RUN_OUTCOME_UNSPECIFIED ||
      !v1::RunOutcome_IsValid(run.outcome())) {
    v.Add("run.outcome", "is required");
  }
}

void CheckEvals(const v1::BenchmarkRun& run, Violations& v) {
  if (run.evals_size() > static_cast<int>(kMaxEvals)) {
    v.Add("run.evals", absl::StrCat("at most ", kMaxEvals, " evals"));
  }
  for (int i = 0; i < run.evals_size(); ++i) {
    const v1::EvalResult& eval = run.evals(i);
    const std::string prefix = absl::StrCat("run.evals[", i, "].");
    v.CheckId(prefix + "serving_sku", eval.serving_sku(), /*required=*/true);
    if (eval.serving_precision() == v1::PRECISION_UNSPECIFIED ||
        !v1::Precision_IsValid(eval.serving_precision())) {
      v.Add(prefix + "serving_precision", "is required");
    }
    v.CheckId(prefix + "metric_name", eval.metric_name(), /*required=*/true);
    v.CheckRange(prefix + "score", eval.score(), -1e12, 1e12);
  }
}

}  // namespace

core::FieldViolations ValidateRunFields(const v1::BenchmarkRun& run,
                                        const UploadedRun& converted,
                                        absl::Time now) {
  Violations v;
  CheckIds(run, v);
  CheckNodeNames(run, v);
  CheckRecipe(run, converted.recipe, v);
  CheckTimes(run, now, v);
  CheckEnums(run, v);
  CheckAllocatorPeaks(run, v);
  // tokens_per_second is kept beside the run, not in core::MeasuredRun.
  v.CheckRange("run.tokens_per_second", run.tokens_per_second(), 0,
               kMaxTokensPerSecond);
  if (run.failure_reason().size() > kMaxFailureReasonLength) {
    v.Add("run.failure_reason",
          absl::StrCat("at most ", kMaxFailureReasonLength, " characters"));
  }
  CheckEvals(run, v);
  v.Append(WithRunFieldPaths(core::ValidateMeasuredRun(converted.run)));
  return v.Take();
}

core::FieldViolations ValidateRunFields(const v1::BenchmarkRun& run,
                                        absl::Time now) {
  return ValidateRunFields(run, UploadedRunFromProto(run), now);
}

core::FieldViolations ValidateRunAgainstCatalog(
    const v1::BenchmarkRun& run, const UploadedRun& converted,
    const core::Pool* pool, const std::vector<core::GpuSku>& catalog) {
  Violations v;
  core::MeasuredRun measured = converted.run;
  absl::StatusOr<core::GpuSku> sku = core::ResolveSku(run.sku(), catalog);
  if (!sku.ok()) {
    v.Add("run.sku", std::string(sku.status().message()));
  } else {
    measured.sku_id = sku->id;
    v.Append(WithRunFieldPaths(core::ValidateMeasuredRunOnSku(measured, *sku)));
  }
  if (pool == nullptr) {
    v.Add("run.pool", absl::StrCat("no pool is named '", run.pool(), "'"));
  } else {
    // An unresolved SKU is reported above, not again as the pool's.
    if (!sku.ok()) measured.sku_id = pool->sku_id;
    v.Append(
        WithRunFieldPaths(core::ValidateMeasuredRunInPool(measured, *pool)));
  }
  for (int i = 0; i < run.evals_size(); ++i) {
    absl::StatusOr<core::GpuSku> serving =
        core::ResolveSku(run.evals(i).serving_sku(), catalog);
    if (!serving.ok()) {
      v.Add(absl::StrCat("run.evals[", i, "].serving_sku"),
            std::string(serving.status().message()));
    }
  }
  return v.Take();
}

core::FieldViolations ValidateRunAgainstCatalog(
    const v1::BenchmarkRun& run, const core::Pool* pool,
    const std::vector<core::GpuSku>& catalog) {
  return ValidateRunAgainstCatalog(run, UploadedRunFromProto(run), pool,
                                   catalog);
}

core::FieldViolations ValidateSampleBatch(
    const v1::StreamStepSamplesRequest& request, absl::Time now) {
  Violations v;
  if (!IsUuid(request.run_id())) {
    v.Add("run_id", "must be a UUID (8-4-4-4-12 hex digits)");
  }
  if (request.samples_size() > kMaxSamplesPerMessage) {
    v.Add("samples", absl::StrCat("at most ", kMaxSamplesPerMessage,
                                  " samples a message"));
    return v.Take();
  }
  for (int i = 0; i < request.samples_size(); ++i) {
    const v1::StepSample& s = request.samples(i);
    const std::string prefix = absl::StrCat("samples[", i, "].");
    if (s.step() < 0 || s.step() > core::kMaxSteps) {
      v.Add(prefix + "step",
            absl::StrCat("must be between 0 and ", core::kMaxSteps));
    }
    if (!IsWellFormedTime(s.time())) {
      v.Add(prefix + "time", "is required");
    } else if (common::TimeFromProto(s.time()) > now + kClockSkew) {
      v.Add(prefix + "time", "is in the future");
    } else if (common::TimeFromProto(s.time()) < now - kMaxAge) {
      v.Add(prefix + "time", "is more than five years ago");
    }
    v.CheckPositive(prefix + "step_time_seconds", s.step_time_seconds(),
                    core::kMaxStepTimeSeconds);
    v.CheckRange(prefix + "memory_allocated_gb", s.memory_allocated_gb(), 0,
                 4096);
    v.CheckRange(prefix + "memory_reserved_gb", s.memory_reserved_gb(), 0,
                 4096);
    if (s.tokens() < 0) v.Add(prefix + "tokens", "must not be negative");
    if (s.has_loss() && !std::isfinite(s.loss())) {
      v.Add(prefix + "loss", "must be finite when set");
    }
    // Report a screenful: one bad agent can send 10,000 bad samples.
    if (v.size() >= 20) break;
  }
  return v.Take();
}

}  // namespace placement::services
