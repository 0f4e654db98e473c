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

// The fit in log space: which constants move, their priors and the
// objective (Huber on the residuals plus the prior's quadratic penalty).
struct LogSpaceProblem {
  const std::vector<FitParameter>& params;
  const ResidualFunction& residuals;
  const RobustFitOptions& options;
  std::vector<int> free;  // indices of the fitted (not fixed) parameters
  std::vector<double> log_prior;
};

LogSpaceProblem MakeProblem(const std::vector<FitParameter>& params,
                            const ResidualFunction& residuals,
                            const RobustFitOptions& options) {
  LogSpaceProblem p{params, residuals, options, {}, {}};
  const int total = static_cast<int>(params.size());
  for (int j = 0; j < total; ++j) {
    if (params[j].prior_log_sigma > 0) p.free.push_back(j);
  }
  p.log_prior.resize(total);
  for (int j = 0; j < total; ++j) {
    p.log_prior[j] = std::log(std::max(params[j].prior, 1e-300));
  }
  return p;
}

std::vector<double> ValuesOf(const std::vector<double>& log_values) {
  std::vector<double> v(log_values.size());
  for (size_t j = 0; j < log_values.size(); ++j) v[j] = std::exp(log_values[j]);
  return v;
}

// Fills `r` with the residuals at `log_values` and returns the objective.
double Objective(const LogSpaceProblem& p,
                 const std::vector<double>& log_values,
                 std::vector<double>& r) {
  p.residuals(ValuesOf(log_values), r);
  double f = 0;
  for (double x : r)
    f += std::isfinite(x) ? Huber(x, p.options.huber_delta) : 0;
  for (int j : p.free) {
    const double z =
        (log_values[j] - p.log_prior[j]) / p.params[j].prior_log_sigma;
    f += 0.5 * z * z;
  }
  return f;
}

constexpr double kJacobianStep = 1e-6;

// Forward-difference Jacobian of the residuals `r` at `u` (log space), one
// row per residual, one column per free parameter; 0 where not finite.
std::vector<double> ForwardDifferenceJacobian(const LogSpaceProblem& p,
                                              const std::vector<double>& u,
                                              const std::vector<double>& r) {
  const int n = static_cast<int>(p.free.size());
  const int m = static_cast<int>(r.size());
  std::vector<double> jac(static_cast<size_t>(m) * n);
  std::vector<double> shifted;
  for (int c = 0; c < n; ++c) {
    std::vector<double> up = u;
    up[p.free[c]] += kJacobianStep;
    p.residuals(ValuesOf(up), shifted);
    for (int i = 0; i < m; ++i) {
      const double d = (shifted[i] - r[i]) / kJacobianStep;
      jac[static_cast<size_t>(i) * n + c] = std::isfinite(d) ? d : 0;
    }
  }
  return jac;
}

// J^T W J and J^T W r over the free parameters (n x n, row-major).
struct NormalEquations {
  std::vector<double> normal;
  std::vector<double> gradient;
};

// Huber weights (IRLS) and the normal equations with the prior.
NormalEquations HuberNormalEquations(const LogSpaceProblem& p,
                                     const std::vector<double>& u,
                                     const std::vector<double>& r,
                                     const std::vector<double>& jac) {
  const int n = static_cast<int>(p.free.size());
  const int m = static_cast<int>(r.size());
  const double delta = p.options.huber_delta;
  NormalEquations eq{std::vector<double>(static_cast<size_t>(n) * n, 0),
                     std::vector<double>(n, 0)};
  std::vector<double>& normal = eq.normal;
  for (int i = 0; i < m; ++i) {
    if (!std::isfinite(r[i])) continue;
    const double a = std::fabs(r[i]);
    const double w = a <= delta ? 1 : delta / a;
    for (int c = 0; c < n; ++c) {
      const double jc = jac[static_cast<size_t>(i) * n + c];
      eq.gradient[c] += w * jc * r[i];
      for (int d = 0; d <= c; ++d) {
        normal[c * n + d] += w * jc * jac[static_cast<size_t>(i) * n + d];
      }
    }
  }
  for (int c = 0; c < n; ++c) {
    const int j = p.free[c];
    const double s2 = p.params[j].prior_log_sigma * p.params[j].prior_log_sigma;
    normal[c * n + c] += 1 / s2;
    eq.gradient[c] += (u[j] - p.log_prior[j]) / s2;
    for (int d = 0; d < c; ++d) normal[d * n + c] = normal[c * n + d];
  }
  return eq;
}

// Where the fit stands: log values, their residuals and objective, and the
// Levenberg-Marquardt damping.
struct FitState {
  std::vector<double> u;
  std::vector<double> r;
  double f = 0;
  double damping = 1e-3;
};

enum class StepOutcome { kImproved, kConverged, kStuck };

// One Levenberg-Marquardt step: raises the damping until a step lowers the
// objective (at most 20 tries). kConverged when the step lowered it by
// less than the tolerance, kStuck when no try lowered it.
StepOutcome DampedStep(const LogSpaceProblem& p, const NormalEquations& eq,
                       FitState& state) {
  const int n = static_cast<int>(p.free.size());
  for (int attempt = 0; attempt < 20; ++attempt) {
    std::vector<double> a = eq.normal;
    for (int c = 0; c < n; ++c) a[c * n + c] *= 1 + state.damping;
    std::vector<double> step(n);
    for (int c = 0; c < n; ++c) step[c] = -eq.gradient[c];
    if (!SolveSpd(a, step, n)) {
      state.damping *= 10;
      continue;
    }
    std::vector<double> candidate = state.u;
    for (int c = 0; c < n; ++c) {
      // Bounded steps: no constant moves by more than e^2 per iteration.
      candidate[p.free[c]] += std::clamp(step[c], -2.0, 2.0);
    }
    std::vector<double> candidate_r;
    const double candidate_f = Objective(p, candidate, candidate_r);
    if (candidate_f < state.f) {
      const double decrease =
          (state.f - candidate_f) / std::max(1e-300, state.f);
      state.u = std::move(candidate);
      state.r = std::move(candidate_r);
      state.f = candidate_f;
      state.damping = std::max(1e-9, state.damping / 3);
      return decrease < p.options.tolerance ? StepOutcome::kConverged
                                            : StepOutcome::kImproved;
    }
    state.damping *= 10;
  }
  return StepOutcome::kStuck;
}

}  // namespace

RobustFitResult FitPositiveParameters(const std::vector<FitParameter>& params,
                                      const ResidualFunction& residuals,
                                      const RobustFitOptions& options) {
  const LogSpaceProblem problem = MakeProblem(params, residuals, options);
  const int n = static_cast<int>(problem.free.size());
  FitState state;
  state.u = problem.log_prior;
  state.f = Objective(problem, state.u, state.r);
  int iteration = 0;
  for (; iteration < options.max_iterations && n > 0; ++iteration) {
    const NormalEquations eq = HuberNormalEquations(
        problem, state.u, state.r,
        ForwardDifferenceJacobian(problem, state.u, state.r));
    const StepOutcome outcome = DampedStep(problem, eq, state);
    if (outcome == StepOutcome::kStuck) break;
    // Converged: the count reads one past max_iterations, as it always has.
    if (outcome == StepOutcome::kConverged) iteration = options.max_iterations;
  }
  RobustFitResult result;
  result.values = ValuesOf(state.u);
  result.residuals = std::move(state.r);
  result.objective = state.f;
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
