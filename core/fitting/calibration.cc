#include "core/fitting/calibration.h"

#include <algorithm>
#include <cmath>

namespace placement::core {
namespace {

double Huber(double r, double delta) {
  const double a = std::fabs(r);
  return a <= delta ? 0.5 * r * r : delta * a - 0.5 * delta * delta;
}

// Solves the symmetric positive definite system a x = b in place (Cholesky);
// false when a is not positive definite.
bool SolveSpd(std::vector<double> a, std::vector<double>& b, int n) {
  for (int j = 0; j < n; ++j) {
    double d = a[j * n + j];
    for (int k = 0; k < j; ++k) d -= a[j * n + k] * a[j * n + k];
    if (d <= 0) return false;
    d = std::sqrt(d);
    a[j * n + j] = d;
    for (int i = j + 1; i < n; ++i) {
      double s = a[i * n + j];
      for (int k = 0; k < j; ++k) s -= a[i * n + k] * a[j * n + k];
      a[i * n + j] = s / d;
    }
  }
  for (int i = 0; i < n; ++i) {  // L y = b
    double s = b[i];
    for (int k = 0; k < i; ++k) s -= a[i * n + k] * b[k];
    b[i] = s / a[i * n + i];
  }
  for (int i = n - 1; i >= 0; --i) {  // L^T x = y
    double s = b[i];
    for (int k = i + 1; k < n; ++k) s -= a[k * n + i] * b[k];
    b[i] = s / a[i * n + i];
  }
  return true;
}

}  // namespace

RobustFitResult FitPositiveParameters(const std::vector<FitParameter>& params,
                                      const ResidualFunction& residuals,
                                      const RobustFitOptions& options) {
  RobustFitResult result;
  const int total = static_cast<int>(params.size());
  std::vector<int> free;  // indices of the fitted (not fixed) parameters
  for (int j = 0; j < total; ++j) {
    if (params[j].prior_log_sigma > 0) free.push_back(j);
  }
  const int n = static_cast<int>(free.size());
  std::vector<double> log_prior(total), u(total);
  for (int j = 0; j < total; ++j) {
    log_prior[j] = std::log(std::max(params[j].prior, 1e-300));
    u[j] = log_prior[j];
  }
  auto values_of = [&](const std::vector<double>& log_values) {
    std::vector<double> v(total);
    for (int j = 0; j < total; ++j) v[j] = std::exp(log_values[j]);
    return v;
  };
  auto objective = [&](const std::vector<double>& log_values,
                       std::vector<double>& r) {
    residuals(values_of(log_values), r);
    double f = 0;
    for (double x : r)
      f += std::isfinite(x) ? Huber(x, options.huber_delta) : 0;
    for (int j : free) {
      const double z =
          (log_values[j] - log_prior[j]) / params[j].prior_log_sigma;
      f += 0.5 * z * z;
    }
    return f;
  };

  std::vector<double> r;
  double f = objective(u, r);
  double damping = 1e-3;
  constexpr double kStep = 1e-6;
  int iteration = 0;
  for (; iteration < options.max_iterations && n > 0; ++iteration) {
    const int m = static_cast<int>(r.size());
    // Forward-difference Jacobian of the residuals in log space.
    std::vector<double> jac(static_cast<size_t>(m) * n);
    std::vector<double> shifted;
    for (int c = 0; c < n; ++c) {
      std::vector<double> up = u;
      up[free[c]] += kStep;
      residuals(values_of(up), shifted);
      for (int i = 0; i < m; ++i) {
        const double d = (shifted[i] - r[i]) / kStep;
        jac[static_cast<size_t>(i) * n + c] = std::isfinite(d) ? d : 0;
      }
    }
    // Huber weights (IRLS) and the normal equations with the prior.
    std::vector<double> normal(static_cast<size_t>(n) * n, 0), gradient(n, 0);
    for (int i = 0; i < m; ++i) {
      if (!std::isfinite(r[i])) continue;
      const double a = std::fabs(r[i]);
      const double w = a <= options.huber_delta ? 1 : options.huber_delta / a;
      for (int c = 0; c < n; ++c) {
        const double jc = jac[static_cast<size_t>(i) * n + c];
        gradient[c] += w * jc * r[i];
        for (int d = 0; d <= c; ++d) {
          normal[c * n + d] += w * jc * jac[static_cast<size_t>(i) * n + d];
        }
      }
    }
    for (int c = 0; c < n; ++c) {
      const double s2 =
          params[free[c]].prior_log_sigma * params[free[c]].prior_log_sigma;
      normal[c * n + c] += 1 / s2;
      gradient[c] += (u[free[c]] - log_prior[free[c]]) / s2;
      for (int d = 0; d < c; ++d) normal[d * n + c] = normal[c * n + d];
    }
    bool improved = false;
    for (int attempt = 0; attempt < 20 && !improved; ++attempt) {
      std::vector<double> a = normal;
      for (int c = 0; c < n; ++c) a[c * n + c] *= 1 + damping;
      std::vector<double> step(n);
      for (int c = 0; c < n; ++c) step[c] = -gradient[c];
      if (!SolveSpd(a, step, n)) {
        damping *= 10;
        continue;
      }
      std::vector<double> candidate = u;
      for (int c = 0; c < n; ++c) {
        // Bounded steps: no constant moves by more than e^2 per iteration.
        candidate[free[c]] += std::clamp(step[c], -2.0, 2.0);
      }
      std::vector<double> candidate_r;
      const double candidate_f = objective(candidate, candidate_r);
      if (candidate_f < f) {
        const double decrease = (f - candidate_f) / std::max(1e-300, f);
        u = std::move(candidate);
        r = std::move(candidate_r);
        f = candidate_f;
        damping = std::max(1e-9, damping / 3);
        improved = true;
        if (decrease < options.tolerance) iteration = options.max_iterations;
      } else {
        damping *= 10;
      }
    }
    if (!improved) break;
  }
  result.values = values_of(u);
  result.residuals = std::move(r);
  result.objective = f;
  result.iterations = iteration;
  return result;
}

double Quantile(std::vector<double> values, double q) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const double pos = std::clamp(q, 0.0, 1.0) * (values.size() - 1);
  const size_t lo = static_cast<size_t>(std::floor(pos));
  const size_t hi = std::min(values.size() - 1, lo + 1);
  return values[lo] + (values[hi] - values[lo]) * (pos - lo);
}

}  // namespace placement::core
