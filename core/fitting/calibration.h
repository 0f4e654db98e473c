#ifndef PLACEMENT_CORE_FITTING_CALIBRATION_H_
#define PLACEMENT_CORE_FITTING_CALIBRATION_H_

#include <functional>
#include <string>
#include <vector>

namespace placement::core {

// One positive constant of a model, fitted in log space and shrunk toward
// the analytic value it would have without any measurement.
struct FitParameter {
  std::string name;
  double prior = 1;  // > 0: the analytic value (where it comes from is said
                     // where the model defines it)
  // How far (in natural-log units, one standard deviation) the data may
  // pull the constant away from its prior; 0 keeps it fixed at the prior.
  double prior_log_sigma = 0;
};

struct RobustFitOptions {
  // Residuals beyond this (log units: 0.15 ~ 15% relative error) count
  // linearly, not quadratically (Huber), so that one odd measurement cannot
  // drag a constant that every other row agrees on.
  double huber_delta = 0.15;
  int max_iterations = 60;
  double tolerance = 1e-10;  // relative decrease of the objective
};

struct RobustFitResult {
  std::vector<double> values;     // fitted constants, in parameter order
  std::vector<double> residuals;  // at the fitted values
  double objective = 0;
  int iterations = 0;
};

// Fills `residuals` (one per observation; resized by the callee) for the
// constants `values` (in parameter order). Residuals should be log(predicted
// / measured) or similarly scaled.
using ResidualFunction = std::function<void(const std::vector<double>& values,
                                            std::vector<double>& residuals)>;

// Robust least squares with shrinkage toward the prior: minimizes
//   sum_i huber(r_i(theta)) + 1/2 sum_j ((log theta_j - log prior_j) /
//   prior_log_sigma_j)^2
// by Levenberg-Marquardt over log theta with iteratively reweighted Huber
// weights and a forward-difference Jacobian. Deterministic. With no
// observations (or none that a constant affects) each constant stays at its
// prior. Pure arithmetic, cheap enough to re-run on every snapshot of
// uploaded runs (a few thousand model evaluations for tens of constants).
RobustFitResult FitPositiveParameters(const std::vector<FitParameter>& params,
                                      const ResidualFunction& residuals,
                                      const RobustFitOptions& options = {});

// The q-quantile (0..1) of `values` by linear interpolation; 0 when empty.
double Quantile(std::vector<double> values, double q);

}  // namespace placement::core

#endif  // PLACEMENT_CORE_FITTING_CALIBRATION_H_
