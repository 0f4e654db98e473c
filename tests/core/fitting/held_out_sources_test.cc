// The models against publications they were not fitted to, one publication
// at a time, as the planner meets a new source: peak memory and step time
// of every calibration row predicted by the constants fitted without its
// publication (leave-one-source-out), and every row of the hold-out file
// (testdata/published_finetune_measurements_holdout.csv: torchtune's and
// Answer.AI's fsdp_qlora publications, which no fit ever sees) predicted by
// the constants fitted on every calibration row (what the model ships).
// For each publication: the median, p90 and signed median of the error,
// and how many of its runs the planner's bands hold (inside / below /
// above), each band derived without the publication too: a calibration
// publication's band from the other publications' residuals at the shipped
// tail shares, the hold-out file's from every calibration row; both widened
// where the estimate extrapolates from what its fit measured. Also every
// model size class held out at once. docs/CORE.md quotes the tables:
//
//   ctest --test-dir build/release -R HeldOutSources -V

#include <algorithm>
#include <cmath>
#include <functional>
#include <iostream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "core/fitting/calibration.h"
#include "core/models/band_calibration.h"
#include "core/models/fit.h"
#include "gtest/gtest.h"
#include "tests/core/fitting/held_out_residuals.h"

namespace placement::core {
namespace {

using testing::HeldOutResidual;

constexpr double kEdgeStep = 0.05;

// [q_low, q_(1-high)] of `ratios`, rounded outwards, holding 1.
BandFactors BandAt(const std::vector<double>& ratios, double low_share,
                   double high_share) {
  const double low =
      std::floor(Quantile(ratios, low_share) / kEdgeStep + 1e-9) * kEdgeStep;
  const double high =
      std::ceil(Quantile(ratios, 1 - high_share) / kEdgeStep - 1e-9) *
      kEdgeStep;
  return {std::min(1.0, low), std::max(1.0, high)};
}

BandFactors Union(BandFactors a, BandFactors b) {
  return {std::min(a.low, b.low), std::max(a.high, b.high)};
}

// The memory band the planner gives `r` (its base band widened by what
// the estimate extrapolates from; memory does not depend on the card).
BandFactors MemoryBandOf(const HeldOutResidual& r, BandFactors base) {
  const Extrapolation& e = r.memory_extrapolation;
  if (e.model_size) base = Union(base, kMemoryBandModelSizeExtrapolation);
  if (e.layout) base = Union(base, kMemoryBandLayoutExtrapolation);
  if (e.framework) base = Union(base, kMemoryBandFrameworkExtrapolation);
  return base;
}

// The figures of a set of held-out predictions of one quantity.
struct Figures {
  std::vector<double> errors;  // predicted / measured - 1
  int inside = 0, below = 0, above = 0;

  void Add(double measured_over_predicted, BandFactors band) {
    errors.push_back(1 / measured_over_predicted - 1);
    if (measured_over_predicted < band.low - 1e-9) {
      ++below;
    } else if (measured_over_predicted > band.high + 1e-9) {
      ++above;
    } else {
      ++inside;
    }
  }
  int rows() const { return static_cast<int>(errors.size()); }
  std::vector<double> Absolute() const {
    std::vector<double> out;
    for (double e : errors) out.push_back(std::fabs(e));
    return out;
  }
  // Error factors max(p/m, m/p).
  std::vector<double> Factors() const {
    std::vector<double> out;
    for (double e : errors) out.push_back(std::max(1 + e, 1 / (1 + e)));
    return out;
  }
  double MedianAbsolute() const { return Quantile(Absolute(), 0.5); }
  double P90Absolute() const { return Quantile(Absolute(), 0.9); }
  double MedianFactor() const { return Quantile(Factors(), 0.5); }
  double P90Factor() const { return Quantile(Factors(), 0.9); }
  double SignedMedian() const { return Quantile(errors, 0.5); }
  double Inside() const { return rows() ? double(inside) / rows() : 0; }
  double Above() const { return rows() ? double(above) / rows() : 0; }
  std::string Band() const {
    return absl::StrFormat("%d / %d / %d", inside, below, above);
  }
};

struct SourceFigures {
  Figures memory, step_time;
};

// A residual with the bands it is judged against.
struct Judged {
  const HeldOutResidual* r;
  BandFactors memory_band, step_time_band;
};

void Add(const Judged& j, SourceFigures& f) {
  if (j.r->memory_ratio) f.memory.Add(*j.r->memory_ratio, j.memory_band);
  if (j.r->step_time_ratio) {
    f.step_time.Add(*j.r->step_time_ratio, j.step_time_band);
  }
}

std::string MemoryCells(const Figures& f) {
  if (f.rows() == 0) return "| | | | | |";
  return absl::StrFormat("| %d | %.1f%% | %.1f%% | %+.1f%% | %s |", f.rows(),
                         100 * f.MedianAbsolute(), 100 * f.P90Absolute(),
                         100 * f.SignedMedian(), f.Band());
}
std::string StepTimeCells(const Figures& f) {
  if (f.rows() == 0) return " | | | | |";
  return absl::StrFormat(" %d | %.2f | %.2f | %+.1f%% | %s |", f.rows(),
                         f.MedianFactor(), f.P90Factor(),
                         100 * f.SignedMedian(), f.Band());
}

// Prints one markdown table of `judged` grouped by `key`, the pooled
// figures last, and returns the pooled figures.
SourceFigures PrintTable(
    const std::vector<Judged>& judged,
    const std::function<std::string(const HeldOutResidual&)>& key,
    const std::string& unit) {
  std::map<std::string, SourceFigures> by_key;
  SourceFigures pooled;
  for (const Judged& j : judged) {
    Add(j, by_key[key(*j.r)]);
    Add(j, pooled);
  }
  std::cout << "| " << unit
            << " | memory rows | median | p90 | signed median | band in / "
               "below / above | step-time rows | median factor | p90 factor "
               "| signed median | band in / below / above |\n"
            << "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- "
               "| --- |\n";
  for (const auto& [name, f] : by_key) {
    std::cout << "| " << name << " " << MemoryCells(f.memory)
              << StepTimeCells(f.step_time) << "\n";
  }
  std::cout << "| **all** " << MemoryCells(pooled.memory)
            << StepTimeCells(pooled.step_time) << "\n\n";
  return pooled;
}

std::string PublicationKey(const HeldOutResidual& r) {
  return (r.hold_out ? "(hold-out) " : "") + r.group;
}

void PrintRows(const std::vector<Judged>& judged) {
  for (const Judged& j : judged) {
    const HeldOutResidual& r = *j.r;
    std::string text =
        absl::StrFormat("  row %4d %-36s", r.line, r.label.substr(0, 36));
    if (r.memory_ratio) {
      absl::StrAppendFormat(&text, " memory %+6.1f%% (band %.2f-%.2f)",
                            100 * (1 / *r.memory_ratio - 1), j.memory_band.low,
                            j.memory_band.high);
    }
    if (r.step_time_ratio) {
      absl::StrAppendFormat(&text, " step time %+6.1f%%%s",
                            100 * (1 / *r.step_time_ratio - 1),
                            r.compiled ? " (compiled)" : "");
    }
    std::cout << text << "  " << r.group.substr(0, 48) << "\n";
  }
}

// Each calibration residual against the bands derived without its
// publication, each hold-out residual against the shipped ones.
std::vector<Judged> JudgeAll(const std::vector<HeldOutResidual>& calibration,
                             const std::vector<HeldOutResidual>& hold_out) {
  std::vector<Judged> out;
  std::set<std::string> publications;
  for (const HeldOutResidual& r : calibration) publications.insert(r.group);
  for (const std::string& p : publications) {
    std::vector<double> memory, time;
    for (const HeldOutResidual& r : calibration) {
      if (r.group == p) continue;
      if (r.memory_ratio) memory.push_back(*r.memory_ratio);
      if (r.step_time_ratio) time.push_back(*r.step_time_ratio);
    }
    const BandFactors memory_band =
        BandAt(memory, kMemoryBandLowTailShare, kMemoryBandHighTailShare);
    // The step-time lower edge is the planner's decision (fit.h).
    const BandFactors time_band = {kStepTimeBandLowFactor,
                                   BandAt(time, 0.1, 0.1).high};
    for (const HeldOutResidual& r : calibration) {
      if (r.group != p) continue;
      out.push_back({&r, MemoryBandOf(r, memory_band), time_band});
    }
  }
  for (const HeldOutResidual& r : hold_out) {
    out.push_back({&r,
                   MemoryBandOf(r, kMemoryBandCalibrated),
                   {kStepTimeBandLowFactor, kStepTimeBandHighFactor}});
  }
  return out;
}

TEST(HeldOutSourcesTest, EachPublicationPredictedWithoutItself) {
  const std::vector<HeldOutResidual> calibration = testing::HeldOutResiduals();
  const std::vector<HeldOutResidual> hold_out = testing::HoldOutSetResiduals();
  ASSERT_GT(calibration.size(), 80u) << "could not read the calibration CSVs";
  ASSERT_GT(hold_out.size(), 20u) << "could not read the hold-out CSV";
  const std::vector<Judged> all = JudgeAll(calibration, hold_out);
  PrintRows(all);
  std::cout << "\nEach publication held out (error = predicted / measured - "
               "1; bands: memory the calibrated one, step time the "
               "planner's p10..p90, each derived without the publication):"
               "\n\n";
  const SourceFigures pooled = PrintTable(all, PublicationKey, "publication");
  std::vector<Judged> unseen_only;
  for (const Judged& j : all) {
    if (j.r->hold_out) unseen_only.push_back(j);
  }
  std::cout << "The hold-out file alone (constants fitted on every "
               "calibration row):\n\n";
  const SourceFigures unseen =
      PrintTable(unseen_only, PublicationKey, "publication");
  std::vector<Judged> uncompiled;
  for (const Judged& j : all) {
    if (!j.r->compiled) uncompiled.push_back(j);
  }
  std::cout << "Without the runs under torch.compile (not a recipe field):"
               "\n\n";
  PrintTable(
      uncompiled, [](const HeldOutResidual&) { return std::string("all"); },
      "rows");
  // The targets, held out by source: memory median <= 10%, p90 <= 25%;
  // the band holds >= 70% with at most 1 in 20 above its upper edge; step
  // time median factor <= 1.2 with the signed median within +-10%.
  EXPECT_LE(pooled.memory.MedianAbsolute(), 0.10);
  EXPECT_LE(pooled.memory.P90Absolute(), 0.25);
  EXPECT_GE(pooled.memory.Inside(), 0.70);
  EXPECT_LE(pooled.memory.Above(), 0.05);
  EXPECT_LE(pooled.step_time.MedianFactor(), 1.2);
  EXPECT_LE(std::fabs(pooled.step_time.SignedMedian()), 0.10);
  // The hold-out file's runs never above the memory band more than 1 in 20.
  EXPECT_LE(unseen.memory.Above(), 0.05);
}

TEST(HeldOutSourcesTest, EachModelSizePredictedWithoutItself) {
  const std::vector<HeldOutResidual> residuals =
      testing::HeldOutResiduals(testing::ModelSizeClassOf);
  std::vector<Judged> judged;
  for (const HeldOutResidual& r : residuals) {
    judged.push_back({&r,
                      MemoryBandOf(r, kMemoryBandCalibrated),
                      {kStepTimeBandLowFactor, kStepTimeBandHighFactor}});
  }
  std::cout << "Each model size class held out (calibration rows; shipped "
               "bands, widened where the size was never measured):\n\n";
  const SourceFigures pooled = PrintTable(
      judged,
      [](const HeldOutResidual& r) {
        return testing::ModelSizeClass(r.params_b);
      },
      "model size");
  EXPECT_LE(pooled.memory.MedianAbsolute(), 0.10);
  EXPECT_LE(pooled.step_time.MedianFactor(), 1.2);
}

}  // namespace
}  // namespace placement::core
