// The planner's bands against runs nobody calibrated on: derives every
// factor of core/models/band_calibration.h (and the pooled bands of
// core/models/fit.h) from the out-of-sample residuals of the published runs
// (tests/core/fitting/held_out_residuals.h), fails when a shipped factor
// drifts from its derivation, and prints each band's coverage: the share of
// held-out runs inside [low, high], below low and above high.
//
//   ctest --test-dir build/release -R ModelCrossValidation -V

#include <algorithm>
#include <cmath>
#include <iomanip>
#include <iostream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "core/fitting/calibration.h"
#include "core/models/band_calibration.h"
#include "core/models/fit.h"
#include "gtest/gtest.h"
#include "tests/core/fitting/held_out_residuals.h"

namespace placement::core {
namespace {

using testing::HeldOutResidual;
using testing::HeldOutResiduals;

// Band edges are rounded outwards to this step.
constexpr double kEdgeStep = 0.05;

enum class Quantity { kMemory, kStepTime };

// One held-out residual of one quantity.
struct Sample {
  BandMethodGroup group = BandMethodGroup::kOther;
  TrainingFramework framework = TrainingFramework::kUnspecified;
  Recipe recipe;
  std::string publication;
  double ratio = 1;  // measured / predicted
};

std::vector<Sample> SamplesOf(const std::vector<HeldOutResidual>& residuals,
                              Quantity quantity) {
  std::vector<Sample> out;
  for (const HeldOutResidual& r : residuals) {
    const std::optional<double>& ratio =
        quantity == Quantity::kMemory ? r.memory_ratio : r.step_time_ratio;
    if (!ratio) continue;
    out.push_back({quantity == Quantity::kMemory
                       ? MemoryBandMethodGroup(r.recipe.method)
                       : StepTimeBandMethodGroup(r.recipe.method),
                   r.recipe.framework, r.recipe, r.group, *ratio});
  }
  return out;
}

std::vector<double> Ratios(const std::vector<Sample>& samples) {
  std::vector<double> out;
  for (const Sample& s : samples) out.push_back(s.ratio);
  return out;
}

// p10..p90, rounded outwards to kEdgeStep, containing 1.
BandFactors Calibrated(const std::vector<double>& ratios) {
  const double low =
      std::floor(Quantile(ratios, 0.1) / kEdgeStep + 1e-9) * kEdgeStep;
  const double high =
      std::ceil(Quantile(ratios, 0.9) / kEdgeStep - 1e-9) * kEdgeStep;
  return {std::min(1.0, low), std::max(1.0, high)};
}

bool Differs(BandFactors a, BandFactors b) {
  return std::fabs(a.low - b.low) > kMinBandCellDifference - 1e-9 ||
         std::fabs(a.high - b.high) > kMinBandCellDifference - 1e-9;
}

bool Same(BandFactors a, BandFactors b) {
  return std::fabs(a.low - b.low) < 1e-9 && std::fabs(a.high - b.high) < 1e-9;
}

std::string FactorsText(BandFactors f) {
  return absl::StrFormat("%.2f..%.2f", f.low, f.high);
}

// The bands as band_calibration.h's rule derives them from `samples`.
struct Derivation {
  BandFactors pooled;  // over every row
  BandFactors rest;    // over the rows no cell took
  std::vector<BandCell> cells;
  std::string explanation;  // one line per group considered
};

Derivation Derive(const std::vector<Sample>& samples,
                  const std::vector<BandMethodGroup>& groups) {
  Derivation d;
  d.pooled = Calibrated(Ratios(samples));
  const std::vector<double> all = Ratios(samples);
  absl::StrAppendFormat(
      &d.explanation, "    %-30s %3d rows  p10 %.3f p90 %.3f -> %s\n", "pooled",
      static_cast<int>(samples.size()), Quantile(all, 0.1), Quantile(all, 0.9),
      FactorsText(d.pooled));
  auto consider = [&](const std::vector<Sample>& rows, const std::string& name,
                      BandFactors parent, bool* kept) {
    const std::vector<double> ratios = Ratios(rows);
    std::set<std::string> publications;
    for (const Sample& s : rows) publications.insert(s.publication);
    *kept = false;
    if (static_cast<int>(rows.size()) < kMinBandCellRows ||
        static_cast<int>(publications.size()) < kMinBandCellPublications) {
      absl::StrAppendFormat(&d.explanation,
                            "    %-30s %3d rows from %d publications: too few, "
                            "takes %s\n",
                            name, static_cast<int>(rows.size()),
                            static_cast<int>(publications.size()),
                            FactorsText(parent));
      return parent;
    }
    const BandFactors own = Calibrated(ratios);
    *kept = Differs(own, parent);
    absl::StrAppendFormat(
        &d.explanation,
        "    %-30s %3d rows from %d publications  p10 %.3f p90 %.3f -> %s%s\n",
        name, static_cast<int>(rows.size()),
        static_cast<int>(publications.size()), Quantile(ratios, 0.1),
        Quantile(ratios, 0.9), FactorsText(own),
        *kept ? "  KEPT"
              : absl::StrCat("  (within ", kMinBandCellDifference, " of ",
                             FactorsText(parent), ")"));
    return *kept ? own : parent;
  };
  for (BandMethodGroup group : groups) {
    std::vector<Sample> in_group;
    std::set<TrainingFramework> frameworks;
    for (const Sample& s : samples) {
      if (s.group != group) continue;
      in_group.push_back(s);
      frameworks.insert(s.framework);
    }
    bool kept = false;
    const BandFactors effective =
        consider(in_group, BandMethodGroupName(group), d.pooled, &kept);
    if (kept) d.cells.push_back({group, std::nullopt, effective});
    if (static_cast<int>(in_group.size()) < kMinBandCellRows) continue;
    for (TrainingFramework framework : frameworks) {
      std::vector<Sample> in_cell;
      for (const Sample& s : in_group) {
        if (s.framework == framework) in_cell.push_back(s);
      }
      const BandFactors own =
          consider(in_cell,
                   absl::StrCat("  ", BandMethodGroupName(group), " x ",
                                TrainingFrameworkName(framework)),
                   effective, &kept);
      if (kept) d.cells.push_back({group, framework, own});
    }
  }
  std::vector<double> rest;
  for (const Sample& s : samples) {
    if (Same(CellBandFactors(d.cells, s.group, s.framework, d.pooled),
             d.pooled)) {
      rest.push_back(s.ratio);
    }
  }
  d.rest = d.cells.empty() || rest.empty() ? d.pooled : Calibrated(rest);
  absl::StrAppendFormat(
      &d.explanation, "    %-30s %3d rows  p10 %.3f p90 %.3f -> %s\n",
      "the rows no cell took", static_cast<int>(rest.size()),
      Quantile(rest, 0.1), Quantile(rest, 0.9), FactorsText(d.rest));
  return d;
}

BandFactors FactorsIn(const Derivation& d, const Sample& s) {
  return CellBandFactors(d.cells, s.group, s.framework, d.rest);
}

// Inside / below / above counts of a set of residuals against their bands.
struct Coverage {
  int inside = 0, below = 0, above = 0;

  void Add(double ratio, BandFactors f) {
    if (ratio < f.low) {
      ++below;
    } else if (ratio > f.high) {
      ++above;
    } else {
      ++inside;
    }
  }
  int rows() const { return inside + below + above; }
  double share() const { return rows() ? double(inside) / rows() : 0; }
  std::string Text() const {
    const double n = std::max(1, rows());
    return absl::StrFormat(
        "%3d rows: inside %5.1f%%, below %5.1f%%, above "
        "%5.1f%%",
        rows(), 100 * inside / n, 100 * below / n, 100 * above / n);
  }
};

void ExpectShipped(const Derivation& d, BandFactors pooled, BandFactors rest,
                   std::span<const BandCell> cells, const char* what) {
  EXPECT_TRUE(Same(d.pooled, pooled))
      << what << ": pooled band derives to " << FactorsText(d.pooled)
      << ", fit.h ships " << FactorsText(pooled);
  EXPECT_TRUE(Same(d.rest, rest))
      << what << ": the other recipes' band derives to " << FactorsText(d.rest)
      << ", ships " << FactorsText(rest);
  EXPECT_EQ(d.cells.size(), cells.size()) << what << ": number of cells";
  for (const BandCell& derived : d.cells) {
    const std::string name = absl::StrCat(
        what, " ", BandMethodGroupName(derived.method), " x ",
        derived.framework ? TrainingFrameworkName(*derived.framework) : "all");
    bool found = false;
    for (const BandCell& shipped : cells) {
      if (shipped.method != derived.method ||
          shipped.framework != derived.framework) {
        continue;
      }
      found = true;
      EXPECT_TRUE(Same(shipped.factors, derived.factors))
          << name << ": derives to " << FactorsText(derived.factors)
          << ", ships " << FactorsText(shipped.factors);
    }
    EXPECT_TRUE(found) << name << " (" << FactorsText(derived.factors)
                       << ") is not shipped";
  }
}

const std::vector<BandMethodGroup> kMemoryGroups = {
    BandMethodGroup::kFull, BandMethodGroup::kLora, BandMethodGroup::kQlora};
const std::vector<BandMethodGroup> kStepTimeGroups = {
    BandMethodGroup::kFull, BandMethodGroup::kAdapter};

BandFactors ShippedFactors(Quantity q, const Recipe& recipe,
                           const Extrapolation& e = {}) {
  return q == Quantity::kMemory ? MemoryBandFactors(recipe, e)
                                : StepTimeBandFactors(recipe, e);
}

// The shipped band's name for a recipe, for the coverage table.
std::string BandNameOf(Quantity q, const Sample& s) {
  std::span<const BandCell> cells =
      q == Quantity::kMemory ? std::span<const BandCell>(kMemoryBandCells)
                             : kStepTimeBandCells;
  std::string name = "other recipes";
  for (const BandCell& cell : cells) {
    if (cell.method != s.group) continue;
    if (cell.framework == s.framework) {
      return absl::StrCat(BandMethodGroupName(cell.method), " x ",
                          TrainingFrameworkName(s.framework));
    }
    if (!cell.framework) name = BandMethodGroupName(cell.method);
  }
  return name;
}

// Derives the bands of `q`, checks the shipped ones, prints their coverage
// in cross-validation and when each publication is held out of the
// calibration too.
void CheckQuantity(Quantity q, const std::vector<HeldOutResidual>& residuals) {
  const bool memory = q == Quantity::kMemory;
  const char* what = memory ? "memory" : "step time";
  const std::vector<Sample> samples = SamplesOf(residuals, q);
  const Derivation d =
      Derive(samples, memory ? kMemoryGroups : kStepTimeGroups);
  std::cout << what << " band derivation (leave-one-source-out residuals, "
            << "measured / predicted):\n"
            << d.explanation;
  ExpectShipped(
      d,
      memory ? BandFactors{kMemoryBandLowFactor, kMemoryBandHighFactor}
             : BandFactors{kStepTimeBandLowFactor, kStepTimeBandHighFactor},
      memory ? kMemoryBandOtherRecipes : kStepTimeBandOtherRecipes,
      memory ? std::span<const BandCell>(kMemoryBandCells) : kStepTimeBandCells,
      what);

  // Coverage of each shipped band over the rows it applies to, and of the
  // pooled band over every row (its own derivation set).
  std::map<std::string, Coverage> by_band;
  Coverage calibrated, pooled;
  const BandFactors pooled_factors = d.pooled;
  for (const Sample& s : samples) {
    const BandFactors f = ShippedFactors(q, s.recipe);
    by_band[BandNameOf(q, s)].Add(s.ratio, f);
    calibrated.Add(s.ratio, f);
    pooled.Add(s.ratio, pooled_factors);
  }
  std::cout << what << " band coverage, leave-one-source-out:\n";
  for (const auto& [name, coverage] : by_band) {
    std::cout << absl::StrFormat("    %-30s %s\n", name, coverage.Text());
  }
  std::cout << absl::StrFormat("    %-30s %s\n", "each row's own band",
                               calibrated.Text())
            << absl::StrFormat(
                   "    %-30s %s\n",
                   absl::StrCat("pooled ", FactorsText(pooled_factors)),
                   pooled.Text());
  // What a p10..p90 band claims, where it is the p10..p90 of these rows.
  EXPECT_GE(pooled.share(), 0.8) << what << " pooled band";
  for (const auto& [name, coverage] : by_band) {
    EXPECT_GE(coverage.share(), 0.8) << what << " band " << name;
  }
  EXPECT_GE(calibrated.share(), 0.8) << what;

  // Out of sample twice: each publication's rows against the bands derived
  // from the OTHER publications' residuals.
  std::set<std::string> publications;
  for (const Sample& s : samples) publications.insert(s.publication);
  Coverage nested_calibrated, nested_pooled;
  std::cout << what
            << " band coverage with the publication held out of the "
               "calibration too (calibrated cells | pooled band):\n";
  for (const std::string& p : publications) {
    std::vector<Sample> others;
    for (const Sample& s : samples) {
      if (s.publication != p) others.push_back(s);
    }
    const Derivation without =
        Derive(others, memory ? kMemoryGroups : kStepTimeGroups);
    Coverage mine_calibrated, mine_pooled;
    for (const Sample& s : samples) {
      if (s.publication != p) continue;
      mine_calibrated.Add(s.ratio, FactorsIn(without, s));
      mine_pooled.Add(s.ratio, without.pooled);
    }
    nested_calibrated.inside += mine_calibrated.inside;
    nested_calibrated.below += mine_calibrated.below;
    nested_calibrated.above += mine_calibrated.above;
    nested_pooled.inside += mine_pooled.inside;
    nested_pooled.below += mine_pooled.below;
    nested_pooled.above += mine_pooled.above;
    std::cout << absl::StrFormat("    %-60s %s | %s\n", p.substr(0, 60),
                                 mine_calibrated.Text(), mine_pooled.Text());
  }
  std::cout << absl::StrFormat("    %-60s %s | %s\n", "all",
                               nested_calibrated.Text(), nested_pooled.Text());
  // Not what a p10..p90 claims but what it holds on a new publication
  // (docs/CORE.md): pinned so that a change that lowers it is seen.
  EXPECT_GE(nested_calibrated.share(), memory ? 0.69 : 0.46) << what;
}

TEST(ModelCrossValidationBandsTest, CalibratedBandsCoverHeldOutRuns) {
  const std::vector<HeldOutResidual> residuals = HeldOutResiduals();
  ASSERT_GT(residuals.size(), 60u) << "could not read the CSV";
  std::cout << std::fixed << std::setprecision(3);
  CheckQuantity(Quantity::kMemory, residuals);
  CheckQuantity(Quantity::kStepTime, residuals);
}

// Where the estimate extrapolates: every run of one model size class (SKU
// family, layout) held out at once, so each is predicted from none like it.
TEST(ModelCrossValidationBandsTest, ExtrapolationBandsCoverUnmeasuredUnits) {
  struct Unit {
    const char* name;
    testing::HoldOutUnit unit_of;
    Extrapolation flag;
    BandFactors memory, step_time;
  };
  const Unit units[] = {
      {"model size",
       testing::ModelSizeClassOf,
       {.model_size = true},
       kMemoryBandModelSizeExtrapolation,
       kStepTimeBandModelSizeExtrapolation},
      {"SKU family",
       testing::SkuFamilyOf,
       {.sku = true},
       kMemoryBandSkuExtrapolation,
       kStepTimeBandSkuExtrapolation},
      {"layout",
       testing::LayoutUnitOf,
       {.layout = true},
       kMemoryBandLayoutExtrapolation,
       kStepTimeBandLayoutExtrapolation},
  };
  std::cout << std::fixed << std::setprecision(3);
  for (const Unit& unit : units) {
    const std::vector<HeldOutResidual> residuals =
        HeldOutResiduals(unit.unit_of);
    for (Quantity q : {Quantity::kMemory, Quantity::kStepTime}) {
      const char* what = q == Quantity::kMemory ? "memory" : "step time";
      const std::vector<Sample> samples = SamplesOf(residuals, q);
      const std::vector<double> ratios = Ratios(samples);
      const BandFactors derived = Calibrated(ratios);
      const BandFactors shipped =
          q == Quantity::kMemory ? unit.memory : unit.step_time;
      Coverage unwidened, widened;
      for (const Sample& s : samples) {
        unwidened.Add(s.ratio, ShippedFactors(q, s.recipe));
        widened.Add(s.ratio, ShippedFactors(q, s.recipe, unit.flag));
      }
      std::cout << absl::StrFormat(
          "%s, %s never measured: p10 %.3f p90 %.3f -> %s\n"
          "    recipe's band   %s\n    widened band    %s\n",
          what, unit.name, Quantile(ratios, 0.1), Quantile(ratios, 0.9),
          FactorsText(derived), unwidened.Text(), widened.Text());
      EXPECT_TRUE(Same(derived, shipped))
          << what << ", " << unit.name << ": derives to "
          << FactorsText(derived) << ", ships " << FactorsText(shipped);
      EXPECT_GE(widened.share(), 0.8) << what << ", " << unit.name;
    }
  }
}

}  // namespace
}  // namespace placement::core
