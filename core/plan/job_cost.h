#ifndef PLACEMENT_CORE_PLAN_JOB_COST_H_
#define PLACEMENT_CORE_PLAN_JOB_COST_H_

// What a job of N steps on one layout is expected to cost, in GPU-hours:
// start-up + N x the GPU-hours of one step + the rework the pool's
// failures are expected to cost over the hours the job holds it. Each term
// comes from the evidence when there is some (core/evidence), else from a
// prior; the same projection prices the job itself and a short measurement
// run, so a 300-step run and a 10,000-step job of a layout project the
// same cost per step.

#include <cstdint>

#include "core/evidence/pool_reliability.h"

namespace placement::core {

// Start-up of a run (loading the model, compiling, the first steps' warm-up)
// when no run of the recipe on the SKU measured it: an assumption of three
// minutes, replaced by the measured figure (wall time less busy time of the
// succeeded runs) once one exists.
inline constexpr double kPriorStartupSeconds = 180;

struct JobCostInputs {
  int gpus = 1;
  double step_gpu_hours = 0;     // per step, start-up and failures left out
  double startup_gpu_hours = 0;  // per run, every GPU counted
  FailureRate failure;           // of the layout on the pool
};

struct JobCost {
  double startup_gpu_hours = 0;
  double steps_gpu_hours = 0;
  double rework_gpu_hours = 0;  // expected
  double expected_failures = 0;
  double total_gpu_hours = 0;
  double wall_hours = 0;  // expected, rework included
};

// The expected cost of `steps` steps in one job. Failures arrive at the
// layout's rate per hour the job holds the pool, rework included (so the
// expected count is a geometric series over the run; a pool losing more
// per hour than it runs is priced at a 100-fold overrun, not infinity).
JobCost ProjectJobCost(const JobCostInputs& inputs, int64_t steps);

}  // namespace placement::core

#endif  // PLACEMENT_CORE_PLAN_JOB_COST_H_
