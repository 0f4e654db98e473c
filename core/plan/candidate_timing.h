#ifndef PLACEMENT_CORE_PLAN_CANDIDATE_TIMING_H_
#define PLACEMENT_CORE_PLAN_CANDIDATE_TIMING_H_

// When a candidate would start and finish (core/plan/plan_with_time.h sets
// them), and what a plan with a deadline concluded.

#include <string>
#include <utility>
#include <vector>

#include "absl/time/time.h"
#include "core/queue/start_estimate.h"

namespace placement::core {

// The levels a candidate's start is shown at: P(start within t) = p.
inline constexpr double kShownStartLevels[] = {0.1, 0.25, 0.5, 0.75, 0.9};

struct CandidateTiming {
  StartStatus status = StartStatus::kNoState;
  // What the start rests on, or why it is unknown.
  std::string reason;
  // Known: seconds from the plan's time. Start, its quantiles at
  // kShownStartLevels, and the mean.
  std::vector<std::pair<double, double>> start_quantiles;  // (p, seconds)
  double start_p10_s = 0;
  double start_p50_s = 0;
  double start_p90_s = 0;
  double start_mean_s = 0;
  // The run itself (any start), from the candidate's expected wall time and
  // its step-time band: p10, median, p90.
  double run_p10_s = 0;
  double run_p50_s = 0;
  double run_p90_s = 0;
  // Finish = start + run (known with the start).
  double finish_p10_s = 0;
  double finish_p50_s = 0;
  double finish_p90_s = 0;
  double finish_mean_s = 0;
  // Every forecast finish (each start draw plus each run point), sorted.
  std::vector<double> finish_draws_s;
  // The start forecast before calibration (StartEstimate's
  // uncalibrated_levels_s): what the job's start is checked against.
  std::vector<double> uncalibrated_start_levels_s;
  bool calibrated = false;
  int calibration_pits = 0;
  absl::Time state_observed = absl::InfinitePast();
  absl::Duration state_age;
  int jobs_ahead = 0;
  int gpus_ahead = 0;

  bool known() const { return status == StartStatus::kKnown; }
  // The share of the forecast finishes within `seconds` (0 when unknown).
  double ChanceToFinishWithin(double seconds) const;
};

// What a plan with OBJECTIVE_FINISH_BY_DEADLINE concluded.
struct DeadlineVerdict {
  absl::Duration deadline;
  // The first candidate finishes within the deadline at the 90th
  // percentile (false: no candidate can; the first is the likeliest to all
  // the same, or the earliest finish when none has a chance).
  bool met = false;
  std::string pool_name;  // the first candidate's, empty without one
  double finish_p90_s = 0;
  // The share of the first candidate's forecast finishes within the
  // deadline (0 when its wait is unknown).
  double chance_met = 0;
  // How many candidates meet it, and why the first was chosen.
  int candidates_meeting = 0;
  std::string reason;
};

}  // namespace placement::core

#endif  // PLACEMENT_CORE_PLAN_CANDIDATE_TIMING_H_
