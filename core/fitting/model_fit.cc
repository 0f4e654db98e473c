#include "core/fitting/model_fit.h"

#include <cmath>
#include <functional>

#include "absl/strings/str_cat.h"

namespace placement::core {
namespace {

// How far the data may move each kind of constant from its prior (one
// standard deviation, natural-log units): loss and allocator constants are
// rough (x4), activation scales and efficiencies tighter (x1.6).
constexpr double kLooseLogSigma = 1.5;
// The standard loss's bytes are counted from transformers' code: 14, or 18
// in versions that add a contiguous fp32 copy of the shifted logits; one
// standard deviation of x1.15 keeps 18 within two.
constexpr double kStandardLossLogSigma = 0.14;
constexpr double kActivationLogSigma = 0.5;
constexpr double kEfficiencyLogSigma = 0.5;  // x1.6
constexpr double kDequantLogSigma = 1.0;
// A family's own factor on top of the datasheet ridge: x1.2.
constexpr double kFamilyLogSigma = 0.5;

// Binds each fitted constant to its field.
template <typename Constants>
struct Binding {
  FitParameter parameter;
  std::function<double&(Constants&)> field;
};

template <typename Constants, typename Observation>
std::vector<FittedConstant> Fit(const std::vector<Binding<Constants>>& bindings,
                                const std::vector<Observation>& observations,
                                double (*residual)(const Observation&,
                                                   const Constants&),
                                double huber_delta, Constants& constants) {
  std::vector<FitParameter> params;
  for (const auto& b : bindings) params.push_back(b.parameter);
  const Constants base = constants;
  auto apply = [&](const std::vector<double>& values) {
    Constants c = base;
    for (size_t j = 0; j < bindings.size(); ++j)
      bindings[j].field(c) = values[j];
    return c;
  };
  auto residuals = [&](const std::vector<double>& values,
                       std::vector<double>& out) {
    const Constants c = apply(values);
    out.resize(observations.size());
    for (size_t i = 0; i < observations.size(); ++i) {
      out[i] = residual(observations[i], c);
    }
  };
  RobustFitOptions options;
  options.huber_delta = huber_delta;
  const RobustFitResult result =
      FitPositiveParameters(params, residuals, options);
  constants = apply(result.values);

  std::vector<FittedConstant> fitted;
  std::vector<double> moved;
  for (size_t j = 0; j < bindings.size(); ++j) {
    std::vector<double> values = result.values;
    values[j] *= 1.01;
    residuals(values, moved);
    int count = 0;
    for (size_t i = 0; i < moved.size(); ++i) {
      if (std::fabs(moved[i] - result.residuals[i]) > 1e-9) ++count;
    }
    fitted.push_back({bindings[j].parameter.name, bindings[j].parameter.prior,
                      result.values[j], count});
  }
  return fitted;
}

}  // namespace

double MemoryResidual(const MemoryObservation& o,
                      const MemoryModelConstants& c) {
  const MemoryBreakdown m = PredictPeakMemory(o.recipe, o.arch, c);
  if (o.measured_gb > 0) {
    return std::log(std::max(m.reported_gb, 1e-6) / o.measured_gb);
  }
  if (o.ran_on_gb > 0) {
    return std::max(0.0, std::log(m.total_gb / o.ran_on_gb));
  }
  if (o.oom_on_gb > 0) {
    return std::min(0.0, std::log(std::max(m.total_gb, 1e-6) / o.oom_on_gb));
  }
  return 0;
}

double StepTimeResidual(const StepTimeObservation& o,
                        const StepTimeModelConstants& c) {
  const StepTimeEstimate e =
      EstimateStepTime(o.recipe, o.arch, o.sku, o.pool, c);
  if (o.measured_step_time_s > 0) {
    return std::log(std::max(e.step_time_s, 1e-9) / o.measured_step_time_s);
  }
  // Throughput is the inverse of time: a prediction too slow is positive.
  return std::log(o.measured_tokens_per_s_per_gpu /
                  std::max(e.tokens_per_s_per_gpu, 1e-9));
}

MemoryFit FitMemoryModel(const std::vector<MemoryObservation>& observations,
                         const MemoryModelConstants& prior) {
  using C = MemoryModelConstants;
  std::vector<Binding<C>> b = {
      {{"logits_bytes_standard", prior.logits_bytes_standard,
        kStandardLossLogSigma},
       [](C& c) -> double& { return c.logits_bytes_standard; }},
      {{"logits_bytes_chunked", prior.logits_bytes_chunked, kLooseLogSigma},
       [](C& c) -> double& { return c.logits_bytes_chunked; }},
      {{"logits_bytes_fused", prior.logits_bytes_fused, kLooseLogSigma},
       [](C& c) -> double& { return c.logits_bytes_fused; }},
      {{"nf4_working_bytes_per_param", prior.nf4_working_bytes_per_param, 1.5},
       [](C& c) -> double& { return c.nf4_working_bytes_per_param; }},
      {{"optimizer_step_temporaries", prior.optimizer_step_temporaries,
        kLooseLogSigma},
       [](C& c) -> double& { return c.optimizer_step_temporaries; }},
      {{"padded_peak_length_factor", prior.padded_peak_length_factor,
        kActivationLogSigma},
       [](C& c) -> double& { return c.padded_peak_length_factor; }},
      {{"reserved_slack_fraction", prior.reserved_slack_fraction,
        kLooseLogSigma},
       [](C& c) -> double& { return c.reserved_slack_fraction; }},
  };
  for (int f = 1; f < kTrainingFrameworkCount; ++f) {
    b.push_back(
        {{absl::StrCat("activation_scale[",
                       TrainingFrameworkName(static_cast<TrainingFramework>(f)),
                       "]"),
          prior.frameworks[f].activation_scale, kActivationLogSigma},
         [f](C& c) -> double& { return c.frameworks[f].activation_scale; }});
    b.push_back(
        {{absl::StrCat("nf4_working_scale[",
                       TrainingFrameworkName(static_cast<TrainingFramework>(f)),
                       "]"),
          prior.frameworks[f].nf4_working_scale, kLooseLogSigma},
         [f](C& c) -> double& { return c.frameworks[f].nf4_working_scale; }});
  }
  MemoryFit fit;
  fit.constants = prior;
  fit.fitted = Fit<C, MemoryObservation>(b, observations, &MemoryResidual, 0.25,
                                         fit.constants);
  return fit;
}

StepTimeFit FitStepTimeModel(
    const std::vector<StepTimeObservation>& observations,
    const StepTimeModelConstants& prior) {
  using C = StepTimeModelConstants;
  std::vector<Binding<C>> b = {
      {{"ridge_exponent", prior.ridge_exponent, 1.5},
       [](C& c) -> double& { return c.ridge_exponent; }},
      {{"full_factor", prior.full_factor, kEfficiencyLogSigma},
       [](C& c) -> double& { return c.full_factor; }},
      {{"adapter_factor", prior.adapter_factor, kEfficiencyLogSigma},
       [](C& c) -> double& { return c.adapter_factor; }},
      {{"nf4_dequant_bytes_per_param", prior.nf4_dequant_bytes_per_param,
        kDequantLogSigma},
       [](C& c) -> double& { return c.nf4_dequant_bytes_per_param; }},
      {{"layer_overhead_s", prior.layer_overhead_s, kDequantLogSigma},
       [](C& c) -> double& { return c.layer_overhead_s; }},
      {{"data_parallel_exposed_fraction", prior.data_parallel_exposed_fraction,
        kLooseLogSigma},
       [](C& c) -> double& { return c.data_parallel_exposed_fraction; }},
      {{"fp8_factor", prior.fp8_factor, kEfficiencyLogSigma},
       [](C& c) -> double& { return c.fp8_factor; }},
      {{"eager_attention_bytes_per_score",
        prior.eager_attention_bytes_per_score, kDequantLogSigma},
       [](C& c) -> double& { return c.eager_attention_bytes_per_score; }},
      {{"adapter_module_overhead_s", prior.adapter_module_overhead_s,
        kDequantLogSigma},
       [](C& c) -> double& { return c.adapter_module_overhead_s; }},
  };
  StepTimeFit fit;
  fit.constants = prior;
  for (const StepTimeObservation& o : observations) {
    const std::string family = o.sku.family;
    const auto known = prior.sku_family_factor.find(family);
    if (fit.constants.sku_family_factor
            .emplace(family, known == prior.sku_family_factor.end()
                                 ? 1.0
                                 : known->second)
            .second) {
      b.push_back(
          {{absl::StrCat("sku_factor[", family, "]"),
            fit.constants.sku_family_factor[family], kFamilyLogSigma},
           [family](C& c) -> double& { return c.sku_family_factor[family]; }});
    }
  }
  fit.fitted = Fit<C, StepTimeObservation>(b, observations, &StepTimeResidual,
                                           0.2, fit.constants);
  return fit;
}

}  // namespace placement::core
