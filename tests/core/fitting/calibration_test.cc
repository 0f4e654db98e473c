#include "core/fitting/calibration.h"

#include <cmath>

#include "gtest/gtest.h"

namespace placement::core {
namespace {

// y = a * x observed without noise: the fit recovers a from a wrong prior
// when the prior is loose. (Five rows at zero residual against a prior
// sigma of 10: u = 5 ln 3 / (5 + 0.01), within 0.2% of ln 3.)
TEST(CalibrationTest, LooseParameterFollowsTheData) {
  const std::vector<double> x = {1, 2, 3, 4, 5};
  const auto residuals = [&](const std::vector<double>& v,
                             std::vector<double>& r) {
    r.resize(x.size());
    for (size_t i = 0; i < x.size(); ++i)
      r[i] = std::log(v[0] * x[i] / (3 * x[i]));
  };
  const RobustFitResult fit =
      FitPositiveParameters({{"a", 1.0, 10.0}}, residuals);
  EXPECT_NEAR(fit.values[0], 3.0, 0.01);
}

// With one observation and a tight prior, the estimate stays near the
// prior: shrinkage, as (log a - log prior) / sigma^2 balances the residual.
TEST(CalibrationTest, TightPriorShrinksTowardIt) {
  const auto residuals = [](const std::vector<double>& v,
                            std::vector<double>& r) {
    r = {std::log(v[0] / 2.0)};  // the data says 2
  };
  RobustFitOptions options;
  options.huber_delta = 10;  // quadratic everywhere: closed form below
  const RobustFitResult fit =
      FitPositiveParameters({{"a", 1.0, 0.1}}, residuals, options);
  // Minimizes 1/2 (u - ln 2)^2 + 1/2 (u / 0.1)^2: u = ln 2 / 101.
  EXPECT_NEAR(std::log(fit.values[0]), std::log(2.0) / 101, 1e-4);
}

// One wild observation among agreeing ones moves a Huber fit far less
// than a least-squares fit.
TEST(CalibrationTest, OutlierHasBoundedInfluence) {
  const std::vector<double> measured = {2, 2, 2, 2, 2, 2, 2, 2, 2, 20};
  const auto residuals = [&](const std::vector<double>& v,
                             std::vector<double>& r) {
    r.resize(measured.size());
    for (size_t i = 0; i < measured.size(); ++i) {
      r[i] = std::log(v[0] / measured[i]);
    }
  };
  RobustFitOptions squares;
  squares.huber_delta = 100;
  const double least_squares =
      FitPositiveParameters({{"a", 2.0, 5.0}}, residuals, squares).values[0];
  const double robust =
      FitPositiveParameters({{"a", 2.0, 5.0}}, residuals).values[0];
  EXPECT_GT(least_squares, 2.5);  // geometric mean 2 * 10^0.1 = 2.52
  EXPECT_LT(robust, 2.2);
}

TEST(CalibrationTest, FixedParameterAndNoDataKeepThePrior) {
  const auto none = [](const std::vector<double>&, std::vector<double>& r) {
    r.clear();
  };
  const RobustFitResult fit =
      FitPositiveParameters({{"fixed", 4.0, 0}, {"free", 0.5, 1.0}}, none);
  EXPECT_DOUBLE_EQ(fit.values[0], 4.0);
  EXPECT_NEAR(fit.values[1], 0.5, 1e-12);
}

TEST(CalibrationTest, QuantileInterpolates) {
  EXPECT_EQ(Quantile({}, 0.5), 0);
  EXPECT_DOUBLE_EQ(Quantile({3, 1, 2}, 0.5), 2);
  EXPECT_DOUBLE_EQ(Quantile({1, 2, 3, 4}, 0.5), 2.5);
  EXPECT_DOUBLE_EQ(Quantile({0, 10}, 0.9), 9);
}

}  // namespace
}  // namespace placement::core
