#include "core/models/model_constants_file.h"

#include <cmath>
#include <functional>
#include <limits>
#include <set>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace placement::core {
namespace {

constexpr absl::string_view kHeader = "placement-model-constants 1";
constexpr absl::string_view kFamilyPrefix = "step_time.sku_family_factor.";

// What a constant can mean: a count or size (>= 0), a share (0..1), or a
// multiplier that must not vanish (> 0).
enum class Range { kNonNegative, kFraction, kPositive, kEfficiency };

struct Field {
  std::string name;
  Range range;
  std::function<double*(ModelConstants&)> at;
};

std::vector<Field> Fields() {
  std::vector<Field> fields;
  auto memory = [&](const char* name, Range range,
                    double MemoryModelConstants::*member) {
    fields.push_back(
        {absl::StrCat("memory.", name), range,
         [member](ModelConstants& c) { return &(c.memory.*member); }});
  };
  memory("activation_hidden_multiple", Range::kPositive,
         &MemoryModelConstants::activation_hidden_multiple);
  memory("activation_mlp_multiple_gated", Range::kPositive,
         &MemoryModelConstants::activation_mlp_multiple_gated);
  memory("activation_mlp_multiple_plain", Range::kPositive,
         &MemoryModelConstants::activation_mlp_multiple_plain);
  memory("logits_bytes_standard", Range::kPositive,
         &MemoryModelConstants::logits_bytes_standard);
  memory("logits_bytes_chunked", Range::kPositive,
         &MemoryModelConstants::logits_bytes_chunked);
  memory("logits_bytes_fused", Range::kPositive,
         &MemoryModelConstants::logits_bytes_fused);
  memory("nf4_working_bytes_per_param", Range::kNonNegative,
         &MemoryModelConstants::nf4_working_bytes_per_param);
  memory("optimizer_step_temporaries", Range::kNonNegative,
         &MemoryModelConstants::optimizer_step_temporaries);
  memory("padded_peak_length_factor", Range::kPositive,
         &MemoryModelConstants::padded_peak_length_factor);
  memory("reserved_slack_fraction", Range::kFraction,
         &MemoryModelConstants::reserved_slack_fraction);
  memory("cuda_context_gb", Range::kNonNegative,
         &MemoryModelConstants::cuda_context_gb);
  memory("nccl_buffers_gb", Range::kNonNegative,
         &MemoryModelConstants::nccl_buffers_gb);
  // kUnspecified (0) reads kOther's profile: it has none of its own.
  for (int f = 1; f < kTrainingFrameworkCount; ++f) {
    const std::string prefix = absl::StrCat(
        "memory.framework.",
        TrainingFrameworkName(static_cast<TrainingFramework>(f)), ".");
    auto profile = [&](const char* name, Range range,
                       double FrameworkMemoryProfile::*member) {
      fields.push_back(
          {absl::StrCat(prefix, name), range, [f, member](ModelConstants& c) {
             return &(c.memory.frameworks[f].*member);
           }});
    };
    profile("activation_scale", Range::kPositive,
            &FrameworkMemoryProfile::activation_scale);
    profile("nf4_working_scale", Range::kPositive,
            &FrameworkMemoryProfile::nf4_working_scale);
    profile("unsharded_setup_copies", Range::kNonNegative,
            &FrameworkMemoryProfile::unsharded_setup_copies);
  }
  auto step = [&](const char* name, Range range,
                  double StepTimeModelConstants::*member) {
    fields.push_back(
        {absl::StrCat("step_time.", name), range,
         [member](ModelConstants& c) { return &(c.step_time.*member); }});
  };
  step("base_mfu", Range::kEfficiency, &StepTimeModelConstants::base_mfu);
  step("ridge_exponent", Range::kNonNegative,
       &StepTimeModelConstants::ridge_exponent);
  step("full_factor", Range::kPositive, &StepTimeModelConstants::full_factor);
  step("adapter_factor", Range::kPositive,
       &StepTimeModelConstants::adapter_factor);
  step("head_only_factor", Range::kPositive,
       &StepTimeModelConstants::head_only_factor);
  step("nf4_dequant_bytes_per_param", Range::kNonNegative,
       &StepTimeModelConstants::nf4_dequant_bytes_per_param);
  step("layer_overhead_s", Range::kNonNegative,
       &StepTimeModelConstants::layer_overhead_s);
  step("data_parallel_exposed_fraction", Range::kFraction,
       &StepTimeModelConstants::data_parallel_exposed_fraction);
  step("fp8_factor", Range::kPositive, &StepTimeModelConstants::fp8_factor);
  step("eager_attention_bytes_per_score", Range::kNonNegative,
       &StepTimeModelConstants::eager_attention_bytes_per_score);
  step("adapter_module_overhead_s", Range::kNonNegative,
       &StepTimeModelConstants::adapter_module_overhead_s);
  return fields;
}

const char* RangeText(Range range) {
  switch (range) {
    case Range::kNonNegative:
      return "must be >= 0";
    case Range::kFraction:
      return "must be in [0, 1]";
    case Range::kPositive:
      return "must be > 0";
    case Range::kEfficiency:
      return "must be in (0, 1]";
  }
  return "";
}

bool InRange(double v, Range range) {
  switch (range) {
    case Range::kNonNegative:
      return v >= 0;
    case Range::kFraction:
      return v >= 0 && v <= 1;
    case Range::kPositive:
      return v > 0;
    case Range::kEfficiency:
      return v > 0 && v <= 1;
  }
  return false;
}

std::string Exact(double v) { return absl::StrFormat("%.17g", v); }

}  // namespace

ModelConstants CurrentModelConstants() {
  return {DefaultMemoryModelConstants(), DefaultStepTimeModelConstants()};
}

std::string FormatModelConstants(const ModelConstants& constants,
                                 absl::string_view comment) {
  std::string out = absl::StrCat(kHeader, "\n");
  for (absl::string_view line : absl::StrSplit(comment, '\n')) {
    if (!comment.empty()) absl::StrAppend(&out, "# ", line, "\n");
  }
  ModelConstants copy = constants;
  for (const Field& field : Fields()) {
    absl::StrAppend(&out, field.name, " ", Exact(*field.at(copy)), "\n");
  }
  for (const auto& [family, factor] : constants.step_time.sku_family_factor) {
    absl::StrAppend(&out, kFamilyPrefix, family, " ", Exact(factor), "\n");
  }
  return out;
}

absl::StatusOr<ModelConstants> ParseModelConstants(absl::string_view text,
                                                   const ModelConstants& base) {
  const std::vector<Field> fields = Fields();
  ModelConstants out = base;
  std::set<std::string, std::less<>> seen;
  bool header = false;
  int number = 0;
  for (absl::string_view raw : absl::StrSplit(text, '\n')) {
    ++number;
    const absl::string_view line = absl::StripAsciiWhitespace(raw);
    if (line.empty() || absl::StartsWith(line, "#")) continue;
    auto error = [&](absl::string_view what) {
      return absl::InvalidArgumentError(
          absl::StrCat("line ", number, ": ", what));
    };
    if (!header) {
      if (line != kHeader) {
        return error(absl::StrCat("expected the header \"", kHeader, "\""));
      }
      header = true;
      continue;
    }
    std::vector<absl::string_view> words =
        absl::StrSplit(line, absl::ByAnyChar(" \t"), absl::SkipEmpty());
    if (words.size() != 2) return error("expected \"name value\"");
    const absl::string_view name = words[0];
    double value = 0;
    if (!absl::SimpleAtod(words[1], &value) || !std::isfinite(value)) {
      return error(
          absl::StrCat(name, ": \"", words[1], "\" is not a finite number"));
    }
    if (!seen.insert(std::string(name)).second) {
      return error(absl::StrCat(name, " is given twice"));
    }
    if (absl::StartsWith(name, kFamilyPrefix) &&
        name.size() > kFamilyPrefix.size()) {
      if (!(value > 0)) return error(absl::StrCat(name, " must be > 0"));
      out.step_time
          .sku_family_factor[std::string(name.substr(kFamilyPrefix.size()))] =
          value;
      continue;
    }
    const Field* field = nullptr;
    for (const Field& f : fields) {
      if (f.name == name) field = &f;
    }
    if (field == nullptr) return error(absl::StrCat("unknown constant ", name));
    if (!InRange(value, field->range)) {
      return error(
          absl::StrCat(name, " = ", words[1], " ", RangeText(field->range)));
    }
    *field->at(out) = value;
  }
  if (!header) {
    return absl::InvalidArgumentError(
        absl::StrCat("empty: expected the header \"", kHeader, "\""));
  }
  return out;
}

void InstallModelConstants(const ModelConstants& constants) {
  SetDefaultMemoryModelConstants(constants.memory);
  SetDefaultStepTimeModelConstants(constants.step_time);
}

}  // namespace placement::core
