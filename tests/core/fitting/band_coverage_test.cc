// The bands against runs nobody calibrated on: derives every factor of
// core/models/band_calibration.h from the out-of-sample residuals of the
// published runs (tests/core/fitting/held_out_residuals.h), fails when a
// shipped factor drifts from its derivation, and prints the coverage of
// those bands and of fit.h's pooled p10..p90: the share of held-out runs
// inside [low, high], below low and above high, over the cross-validated
// residuals and with each publication held out of the band's derivation.
//
//   ctest --test-dir build/release -R ModelCrossValidation -V

#include <algorithm>
#include <cmath>
#include <iomanip>
#include <iostream>
#include <optional>
#include <set>
#include <span>
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

// [q_a, q_1-a], rounded outwards to kEdgeStep, containing 1.
BandFactors BandAt(const std::vector<double>& ratios, double tail_share) {
  const double low =
      std::floor(Quantile(ratios, tail_share) / kEdgeStep + 1e-9) * kEdgeStep;
  const double high =
      std::ceil(Quantile(ratios, 1 - tail_share) / kEdgeStep - 1e-9) *
      kEdgeStep;
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

std::set<std::string> PublicationsOf(const std::vector<Sample>& samples) {
  std::set<std::string> out;
  for (const Sample& s : samples) out.insert(s.publication);
  return out;
}

std::vector<Sample> Without(const std::vector<Sample>& samples,
                            const std::string& publication) {
  std::vector<Sample> out;
  for (const Sample& s : samples) {
    if (s.publication != publication) out.push_back(s);
  }
  return out;
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
  void Add(const Coverage& other) {
    inside += other.inside;
    below += other.below;
    above += other.above;
  }
  int rows() const { return inside + below + above; }
  double share() const { return rows() ? double(inside) / rows() : 0; }
  std::string Text() const {
    const double n = std::max(1, rows());
    return absl::StrFormat(
        "%3d rows: inside %5.1f%%, below %5.1f%%, above %5.1f%%", rows(),
        100 * inside / n, 100 * below / n, 100 * above / n);
  }
};

// The bands as band_calibration.h's rule derives them from `samples`.
struct Derivation {
  BandFactors pooled;  // over every row
  BandFactors rest;    // over the rows no cell took
  std::vector<BandCell> cells;
  std::string explanation;  // one line per group considered
};

Derivation Derive(const std::vector<Sample>& samples,
                  const std::vector<BandMethodGroup>& groups,
                  double tail_share);

BandFactors FactorsIn(const Derivation& d, const Sample& s) {
  return CellBandFactors(d.cells, s.group, s.framework, d.rest);
}

// Each publication's rows against the bands derived without it.
Coverage NestedCoverage(const std::vector<Sample>& samples,
                        const std::vector<BandMethodGroup>& groups,
                        double tail_share, std::string* per_publication) {
  Coverage all;
  for (const std::string& p : PublicationsOf(samples)) {
    const Derivation without = Derive(Without(samples, p), groups, tail_share);
    Coverage mine;
    for (const Sample& s : samples) {
      if (s.publication == p) mine.Add(s.ratio, FactorsIn(without, s));
    }
    all.Add(mine);
    if (per_publication != nullptr) {
      absl::StrAppendFormat(per_publication, "    %-58s %s\n", p.substr(0, 58),
                            mine.Text());
    }
  }
  return all;
}

Derivation Derive(const std::vector<Sample>& samples,
                  const std::vector<BandMethodGroup>& groups,
                  double tail_share) {
  Derivation d;
  const std::vector<double> all = Ratios(samples);
  d.pooled = BandAt(all, tail_share);
  absl::StrAppendFormat(&d.explanation, "    %-30s %3d rows -> %s\n", "pooled",
                        static_cast<int>(samples.size()),
                        FactorsText(d.pooled));
  // Whether `rows` (a candidate cell, from `parent_rows`, which would give
  // it `parent`) gets a band of its own.
  auto consider = [&](const std::vector<Sample>& rows,
                      const std::vector<Sample>& parent_rows,
                      const std::string& name, BandFactors parent, bool* kept) {
    const std::set<std::string> publications = PublicationsOf(rows);
    *kept = false;
    const std::string head = absl::StrFormat(
        "    %-30s %3d rows, %d publications", name,
        static_cast<int>(rows.size()), static_cast<int>(publications.size()));
    if (static_cast<int>(rows.size()) < kMinBandCellRows ||
        static_cast<int>(publications.size()) < kMinBandCellPublications) {
      absl::StrAppend(&d.explanation, head, ": too few\n");
      return parent;
    }
    const BandFactors own = BandAt(Ratios(rows), tail_share);
    if (!Differs(own, parent)) {
      absl::StrAppend(&d.explanation, head, " -> ", FactorsText(own),
                      ": within ", kMinBandCellDifference, " of ",
                      FactorsText(parent), "\n");
      return parent;
    }
    // Out of sample: each publication's rows of the cell against the
    // cell's band and the parent's, both derived without it.
    int own_inside = 0, parent_inside = 0;
    for (const std::string& p : publications) {
      const std::vector<Sample> rest = Without(rows, p);
      if (rest.empty()) continue;
      const BandFactors own_without = BandAt(Ratios(rest), tail_share);
      const BandFactors parent_without =
          BandAt(Ratios(Without(parent_rows, p)), tail_share);
      for (const Sample& s : rows) {
        if (s.publication != p) continue;
        own_inside += s.ratio >= own_without.low && s.ratio <= own_without.high;
        parent_inside +=
            s.ratio >= parent_without.low && s.ratio <= parent_without.high;
      }
    }
    *kept = own_inside >= parent_inside;
    absl::StrAppendFormat(
        &d.explanation,
        "%s -> %s; a held-out publication's rows inside: %d with it, %d with "
        "%s%s\n",
        head, FactorsText(own), own_inside, parent_inside, FactorsText(parent),
        *kept ? "  KEPT" : "");
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
    const BandFactors effective = consider(
        in_group, samples, BandMethodGroupName(group), d.pooled, &kept);
    if (kept) d.cells.push_back({group, std::nullopt, effective});
    for (TrainingFramework framework : frameworks) {
      std::vector<Sample> in_cell;
      for (const Sample& s : in_group) {
        if (s.framework == framework) in_cell.push_back(s);
      }
      const BandFactors own =
          consider(in_cell, kept ? in_group : samples,
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
  d.rest =
      d.cells.empty() || rest.empty() ? d.pooled : BandAt(rest, tail_share);
  if (!d.cells.empty()) {
    absl::StrAppendFormat(&d.explanation, "    %-30s %3d rows -> %s\n",
                          "the rows no cell took",
                          static_cast<int>(rest.size()), FactorsText(d.rest));
  }
  return d;
}

void ExpectShipped(const Derivation& d, BandFactors calibrated,
                   std::span<const BandCell> cells, const char* what) {
  EXPECT_TRUE(Same(d.rest, calibrated))
      << what << ": the calibrated band derives to " << FactorsText(d.rest)
      << ", ships " << FactorsText(calibrated);
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

// Derives the bands of `q`, checks the shipped ones, prints their coverage
// in cross-validation and with each publication held out of the
// calibration too.
void CheckQuantity(Quantity q, const std::vector<HeldOutResidual>& residuals) {
  const bool memory = q == Quantity::kMemory;
  const char* what = memory ? "memory" : "step time";
  const std::vector<Sample> samples = SamplesOf(residuals, q);
  const std::vector<BandMethodGroup>& groups =
      memory ? kMemoryGroups : kStepTimeGroups;
  const double shipped_share =
      memory ? kMemoryBandTailShare : kStepTimeBandTailShare;

  // The tail share: the largest whose band holds kBandTargetCoverage of a
  // publication that was held out of the calibration.
  std::cout << what
            << " bands by tail share, and what they hold of a publication "
               "held out of the calibration:\n";
  std::optional<double> chosen;
  for (double share : kBandTailShares) {
    const Coverage nested = NestedCoverage(samples, groups, share, nullptr);
    const Derivation d = Derive(samples, groups, share);
    std::cout << absl::StrFormat(
        "    p%-4g..p%-4g pooled %s, %d cells  held out: %s\n", 100 * share,
        100 * (1 - share), FactorsText(d.pooled),
        static_cast<int>(d.cells.size()), nested.Text());
    if (!chosen && nested.share() >= kBandTargetCoverage) chosen = share;
  }
  ASSERT_TRUE(chosen.has_value()) << what << ": no band holds the target";
  EXPECT_DOUBLE_EQ(*chosen, shipped_share) << what << " tail share";

  const Derivation d = Derive(samples, groups, shipped_share);
  std::cout << what << " band derivation at tail share " << shipped_share
            << " (leave-one-source-out residuals, measured / predicted):\n"
            << d.explanation;
  ExpectShipped(d, memory ? kMemoryBandCalibrated : kStepTimeBandCalibrated,
                memory ? kMemoryBandCells : kStepTimeBandCells, what);

  // Coverage over the leave-one-source-out residuals: the calibrated band
  // (each row its recipe's) and fit.h's pooled p10..p90, which the planner
  // uses today.
  const BandFactors pooled =
      memory ? BandFactors{kMemoryBandLowFactor, kMemoryBandHighFactor}
             : BandFactors{kStepTimeBandLowFactor, kStepTimeBandHighFactor};
  Coverage calibrated, fixed;
  for (const Sample& s : samples) {
    calibrated.Add(s.ratio, ShippedFactors(q, s.recipe));
    fixed.Add(s.ratio, pooled);
  }
  std::string nested_text, fixed_text;
  const Coverage nested =
      NestedCoverage(samples, groups, shipped_share, &nested_text);
  // The pooled p10..p90 alone, no cells: what the planner does today.
  const Coverage nested_fixed = NestedCoverage(samples, {}, 0.1, &fixed_text);
  std::cout << what << " band coverage:\n"
            << absl::StrFormat("    %-14s %-10s cross-validated %s\n",
                               "calibrated", FactorsText(d.rest),
                               calibrated.Text())
            << absl::StrFormat("    %-14s %-10s held out      %s\n", "", "",
                               nested.Text())
            << absl::StrFormat("    %-14s %-10s cross-validated %s\n",
                               "fit.h p10..p90", FactorsText(pooled),
                               fixed.Text())
            << absl::StrFormat("    %-14s %-10s held out      %s\n", "", "",
                               nested_fixed.Text())
            << what << " calibrated band, each publication held out:\n"
            << nested_text << what
            << " fit.h p10..p90, each publication held out:\n"
            << fixed_text;
  // What each band claims: the calibrated one, 80% of a new publication's
  // runs; the p10..p90, 80% of the cross-validated residuals.
  EXPECT_GE(nested.share(), kBandTargetCoverage) << what;
  EXPECT_GE(calibrated.share(), kBandTargetCoverage) << what;
  EXPECT_GE(fixed.share(), 0.8) << what;
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
      const BandFactors derived =
          BandAt(ratios, q == Quantity::kMemory ? kMemoryBandTailShare
                                                : kStepTimeBandTailShare);
      const BandFactors shipped =
          q == Quantity::kMemory ? unit.memory : unit.step_time;
      Coverage unwidened, widened;
      for (const Sample& s : samples) {
        unwidened.Add(s.ratio, ShippedFactors(q, s.recipe));
        widened.Add(s.ratio, ShippedFactors(q, s.recipe, unit.flag));
      }
      std::cout << absl::StrFormat(
          "%s, %s never measured: p10 %.3f p90 %.3f, band %s\n"
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
