#include "core/plan/job_cost.h"

#include <algorithm>

namespace placement::core {

JobCost ProjectJobCost(const JobCostInputs& in, int64_t steps) {
  JobCost cost;
  const int gpus = std::max(1, in.gpus);
  cost.startup_gpu_hours = std::max(0.0, in.startup_gpu_hours);
  cost.steps_gpu_hours =
      std::max(0.0, in.step_gpu_hours) * static_cast<double>(steps);
  const double run_gpu_hours = cost.startup_gpu_hours + cost.steps_gpu_hours;
  const double rate = std::max(0.0, in.failure.per_hour);
  const double lost_hours = std::max(0.0, in.failure.lost_hours_per_failure);
  // Each failure holds every GPU for lost_hours more, during which failures
  // arrive too: rate x run hours x (1 + r + r^2 ...), r = rate x lost.
  const double lost_share = std::min(0.99, rate * lost_hours);
  cost.expected_failures = rate * (run_gpu_hours / gpus) / (1 - lost_share);
  cost.rework_gpu_hours = cost.expected_failures * lost_hours * gpus;
  cost.total_gpu_hours = run_gpu_hours + cost.rework_gpu_hours;
  cost.wall_hours = cost.total_gpu_hours / gpus;
  return cost;
}

}  // namespace placement::core
