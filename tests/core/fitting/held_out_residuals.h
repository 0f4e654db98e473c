#ifndef PLACEMENT_TESTS_CORE_FITTING_HELD_OUT_RESIDUALS_H_
#define PLACEMENT_TESTS_CORE_FITTING_HELD_OUT_RESIDUALS_H_

// The out-of-sample residuals of the memory and step-time models over the
// calibration rows (testdata/published_finetune_measurements.csv and the
// rows added to it, testdata/published_finetune_measurements_added.csv):
// each row predicted by the constants fitted on every OTHER publication
// (leave-one-source-out), with what that prediction extrapolated from (a
// model size, SKU family or layout that none of the other publications
// measured). The band calibration (core/models/band_calibration.h) is
// derived from and checked against these. The hold-out rows
// (testdata/published_finetune_measurements_holdout.csv), which no fit
// sees, are predicted by the constants fitted on every calibration row:
// HoldOutSetResiduals.

#include <cmath>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/fitting/model_fit.h"
#include "core/models/band_calibration.h"
#include "core/models/memory_model.h"
#include "tests/core/published_measurements.h"
#include "tests/core/test_catalog.h"

namespace placement::core::testing {

struct HeldOutResidual {
  int line = 0;
  std::string group;  // the held-out publication
  std::string label;
  std::string sku_id;
  Recipe recipe;
  // measured / predicted peak (of the kind the source reports), for rows
  // with a published peak.
  std::optional<double> memory_ratio;
  // measured / predicted step time, for rows with a published throughput.
  std::optional<double> step_time_ratio;
  double params_b = 0;    // the model's parameters, in billions
  bool hold_out = false;  // a row of the hold-out file
  bool compiled = false;  // ran under torch.compile
  // Relative to the rows of the other publications that measured the same
  // quantity (a peak for memory, a throughput for step time).
  Extrapolation memory_extrapolation;
  Extrapolation step_time_extrapolation;
};

// A model size counts as measured when some measured row's parameter count
// is within this factor of it (7B and 8B are one size, 7B and 13B are not).
inline constexpr double kSameModelSizeFactor = 1.3;

inline double ParamsB(const MappedRow& row) {
  return static_cast<double>(row.arch.num_params) / 1e9;
}

// The layout a row ran with (core/models/band_calibration.h).
inline std::string LayoutOf(const Recipe& recipe) {
  return LayoutClassOf(recipe);
}

// The framework whose profile a row's memory uses.
inline TrainingFramework FrameworkOf(const Recipe& recipe) {
  return recipe.framework == TrainingFramework::kUnspecified
             ? TrainingFramework::kOther
             : recipe.framework;
}

// What `row` extrapolates from when only `measured` rows were seen.
inline Extrapolation ExtrapolationFrom(
    const MappedRow& row, const std::vector<const MappedRow*>& measured) {
  Extrapolation e{
      .model_size = true, .sku = true, .layout = true, .framework = true};
  const std::string family = PublishedSku(row.sku_id).family;
  for (const MappedRow* m : measured) {
    const double ratio = ParamsB(*m) / ParamsB(row);
    if (ratio <= kSameModelSizeFactor && ratio >= 1 / kSameModelSizeFactor) {
      e.model_size = false;
    }
    if (PublishedSku(m->sku_id).family == family) e.sku = false;
    if (LayoutOf(m->recipe) == LayoutOf(row.recipe)) e.layout = false;
    if (FrameworkOf(m->recipe) == FrameworkOf(row.recipe)) e.framework = false;
  }
  return e;
}

inline std::vector<MappedRow> UsablePublishedRows() {
  std::vector<MappedRow> rows;
  for (MappedRow& row : LoadCalibrationRows()) {
    if (row.skip_reason.empty()) rows.push_back(std::move(row));
  }
  return rows;
}

// The unit a hold-out removes at once: a row's publication (the
// cross-validation), or its model size class, SKU family or layout (what
// an estimate extrapolates from when that unit was never measured).
using HoldOutUnit = std::function<std::string(const MappedRow&)>;

inline std::string PublicationOf(const MappedRow& row) {
  return row.source_group;
}
// Classes a factor of ~2 apart: 1B, 3B, 7-8B, 13B, 30-40B, 70B.
inline std::string ModelSizeClass(double b) {
  return b < 2    ? "1B"
         : b < 5  ? "3B"
         : b < 10 ? "7B"
         : b < 20 ? "13B"
         : b < 50 ? "30-40B"
                  : "70B";
}
inline std::string ModelSizeClassOf(const MappedRow& row) {
  return ModelSizeClass(ParamsB(row));
}
inline std::string SkuFamilyOf(const MappedRow& row) {
  return PublishedSku(row.sku_id).family;
}
inline std::string LayoutUnitOf(const MappedRow& row) {
  return LayoutOf(row.recipe);
}
inline std::string FrameworkUnitOf(const MappedRow& row) {
  return TrainingFrameworkName(FrameworkOf(row.recipe));
}

// One row predicted by `memory` and `time`, fitted without it; `measured_*`
// are the rows those fits saw.
inline HeldOutResidual ResidualOf(
    const MappedRow& row, const MemoryModelConstants& memory,
    const StepTimeModelConstants& time,
    const std::vector<const MappedRow*>& measured_peaks,
    const std::vector<const MappedRow*>& measured_times) {
  HeldOutResidual r;
  r.line = row.line;
  r.group = row.source_group;
  r.label = row.label;
  r.sku_id = row.sku_id;
  r.recipe = row.recipe;
  r.params_b = ParamsB(row);
  r.hold_out = row.hold_out;
  r.compiled = row.compiled;
  if (row.peak_gb) {
    const MemoryBreakdown m = PredictPeakMemory(row.recipe, row.arch, memory);
    r.memory_ratio = *row.peak_gb / m.reported_gb;
  }
  if (auto o = StepTimeObservationOf(row)) {
    r.step_time_ratio = std::exp(-StepTimeResidual(*o, time));
  }
  r.memory_extrapolation = ExtrapolationFrom(row, measured_peaks);
  r.step_time_extrapolation = ExtrapolationFrom(row, measured_times);
  return r;
}

// Every usable row, predicted with its whole unit (`unit_of`) held out.
inline std::vector<HeldOutResidual> HeldOutResiduals(
    const HoldOutUnit& unit_of = PublicationOf) {
  const std::vector<MappedRow> rows = UsablePublishedRows();
  std::set<std::string> units;
  for (const MappedRow& row : rows) units.insert(unit_of(row));
  std::vector<HeldOutResidual> out;
  for (const std::string& unit : units) {
    std::vector<MemoryObservation> memory_rows;
    std::vector<StepTimeObservation> time_rows;
    std::vector<const MappedRow*> measured_peaks, measured_times;
    for (const MappedRow& row : rows) {
      if (unit_of(row) == unit) continue;
      memory_rows.push_back(MemoryObservationOf(row));
      if (row.peak_gb) measured_peaks.push_back(&row);
      if (auto o = StepTimeObservationOf(row)) {
        time_rows.push_back(*o);
        measured_times.push_back(&row);
      }
    }
    const MemoryFit memory =
        FitMemoryModel(memory_rows, AnalyticMemoryModelConstants());
    const StepTimeFit time =
        FitStepTimeModel(time_rows, AnalyticStepTimeModelConstants());
    for (const MappedRow& row : rows) {
      if (unit_of(row) != unit) continue;
      out.push_back(ResidualOf(row, memory.constants, time.constants,
                               measured_peaks, measured_times));
    }
  }
  return out;
}

// The hold-out rows (LoadHoldOutRows), every one predicted by the constants
// fitted on every calibration row (what the model ships:
// ModelCrossValidationTest checks that the shipped constants are that fit).
inline std::vector<HeldOutResidual> HoldOutSetResiduals() {
  const std::vector<MappedRow> calibration = UsablePublishedRows();
  std::vector<const MappedRow*> measured_peaks, measured_times;
  std::vector<MemoryObservation> memory_rows;
  std::vector<StepTimeObservation> time_rows;
  for (const MappedRow& row : calibration) {
    memory_rows.push_back(MemoryObservationOf(row));
    if (row.peak_gb) measured_peaks.push_back(&row);
    if (auto o = StepTimeObservationOf(row)) {
      time_rows.push_back(*o);
      measured_times.push_back(&row);
    }
  }
  const MemoryModelConstants memory =
      FitMemoryModel(memory_rows, AnalyticMemoryModelConstants()).constants;
  const StepTimeModelConstants time =
      FitStepTimeModel(time_rows, AnalyticStepTimeModelConstants()).constants;
  std::vector<HeldOutResidual> out;
  for (const MappedRow& row : LoadHoldOutRows()) {
    if (!row.skip_reason.empty()) continue;
    out.push_back(
        ResidualOf(row, memory, time, measured_peaks, measured_times));
  }
  return out;
}

}  // namespace placement::core::testing

#endif  // PLACEMENT_TESTS_CORE_FITTING_HELD_OUT_RESIDUALS_H_
