#ifndef PLACEMENT_CORE_PLAN_JOB_COST_H_
#define PLACEMENT_CORE_PLAN_JOB_COST_H_

// The one cost model: what a job of N steps on one layout is expected to
// cost, in GPU-hours, as start-up + N x the GPU-hours of one step + the
// rework the layout's failures are expected to cost over the hours the job
// holds the pool, with a band. The planner ranks by it, the bake-off
// verdict judges by it and a standard is proven by it: a measured layout's
// inputs come from its runs (MeasuredJobInputs), so a 300-step run and a
// 10,000-step job of the layout project the same cost per step, and a job
// as long as the runs projects what the runs cost (ObservedJobCost).

#include <cstdint>
#include <optional>

#include "core/evidence/evidence.h"
#include "core/evidence/pool_reliability.h"
#include "core/models/fit.h"

namespace placement::core {

// Start-up of a run (loading the model, compiling, the first steps' warm-up)
// when no run of the recipe on the SKU measured it: an assumption of three
// minutes, replaced by the measured figure (the median start-up of the
// succeeded runs' attempts) once one exists.
inline constexpr double kPriorStartupSeconds = 180;

// How far the step time a projection uses may sit from the median run's
// mean step time: the runs' GPU time per attempted step is used (what a
// longer job pays per step), but one run of odd steps cannot pull it
// further than this factor from the typical run.
inline constexpr double kMaxStepPullFromMedianRun = 1.25;

struct JobCostInputs {
  int gpus = 1;
  double step_gpu_hours = 0;     // per step, start-up and failures left out
  Band step_gpu_hours_band;      // {0, 0}: the step figure alone
  double startup_gpu_hours = 0;  // per attempt, every GPU counted
  FailureRate failure;           // of the layout on the pool
};

struct JobCost {
  double startup_gpu_hours = 0;
  double steps_gpu_hours = 0;
  double rework_gpu_hours = 0;  // expected
  double expected_failures = 0;
  // Wall hours each failure loses in this job (LostHoursForJob: less than
  // the measured loss in a job shorter than the attempts it came from).
  double lost_hours_per_failure = 0;
  double total_gpu_hours = 0;
  double wall_hours = 0;  // expected, rework included
  // The total at the step band's low edge and the failure rate's p10, and
  // at the step band's high edge and the rate's p90.
  Band total_gpu_hours_band;
};

// The expected cost of `steps` steps in one job. Failures arrive at the
// layout's rate per hour the job holds the pool, each losing what
// LostHoursForJob says for a job of this length, rework included (so the
// expected count is a geometric series over the run: with the rate and
// loss its runs measured, a job as long as those runs projects exactly the
// hours they held; a pool losing more per hour than it runs is priced at a
// 100-fold overrun, not infinity).
JobCost ProjectJobCost(const JobCostInputs& inputs, int64_t steps);

// The inputs of a layout measured on its SKU (`measured`: the rollup of the
// recipe key's runs, `gpus` GPUs each) on a pool whose failure sums are
// `pool`, nullopt when the runs kept no busy time (rollups stored before it
// was kept):
//  - the step: the runs' GPU time per attempted step, within
//    kMaxStepPullFromMedianRun of the median run's mean step; its band the
//    p10-p90 of the runs' mean steps, at least half a histogram bucket
//    (9%) either side;
//  - the start-up: the succeeded attempts' mean, within
//    kMaxStartupPullFromMedian of their median, or the unretried runs'
//    median when some succeeded runs retried (EvidenceStats), else the
//    prior; where every succeeded run may have retried (an upper bound),
//    `model_startup_hours` (the model's start-up per attempt measured on
//    other layouts, wall hours per GPU, FleetModel::Startup) when lower;
//  - the time the succeeded runs' retries spent outside their steps
//    counted as lost to their failures, not as start-up;
//  - the failures: the recipe's own attempts on the SKU against the pool's
//    (EstimateLayoutFailureRate).
std::optional<JobCostInputs> MeasuredJobInputs(
    const EvidenceStats& measured, int gpus, const PoolFailures& pool,
    std::optional<double> model_startup_hours = std::nullopt);

// What a layout's runs cost per successful step, as they ran: their
// GPU-hours (as counted, core/evidence/run_attempts.h) over their
// successful steps, and its band: the cost of a job as long as the runs
// (their successful steps per succeeded attempt) with the runs' own
// failure rate at the p10 and p90 of its posterior under a Jeffreys prior
// (failures + 1/2 over the hours they held the SKU), each failure losing
// what the runs' failures lost on average (with none, a relaunch and half
// of the job), and the step time from the runs' mean to their p95. The
// band always holds the point. What a projection of such a job must agree
// with (given the same `model_startup_hours`: it decides which of the
// runs' hours were start-up and which were lost). nullopt without a
// successful step or without counted hours.
struct ObservedCost {
  double gpu_hours_per_successful_step = 0;
  Band band;
  int64_t job_steps = 0;  // the job length the band is for
};
std::optional<ObservedCost> ObservedJobCost(
    const EvidenceStats& measured, int gpus,
    std::optional<double> model_startup_hours = std::nullopt);

}  // namespace placement::core

#endif  // PLACEMENT_CORE_PLAN_JOB_COST_H_
