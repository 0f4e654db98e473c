#ifndef PLACEMENT_CORE_QUEUE_START_CALIBRATION_H_
#define PLACEMENT_CORE_QUEUE_START_CALIBRATION_H_

// How a pool's start forecasts are read: through the checks of its plans'
// earlier forecasts (core/queue/queue_history.h). A check arrives only when
// its job starts, so on a pool where jobs wait for days the checks of the
// last days are missing, and they are the late ones: read through the
// checks alone, a pool's forecasts stay early for as long as its jobs wait.
// A job still waiting is a check too, right-censored: its start is later
// than now, so its PIT is above its forecast's probability of a start by
// now (its floor). The two are combined as Kaplan-Meier combines deaths and
// survivors: each waiting job's share is moved, equally, to the checks
// above its floor (Efron's redistribution to the right).
//
// Checks are not independent: jobs that waited in a pool at the same time
// are one observation of its queue, and a run of them late (or early)
// says less than as many checks of other days would. The calibration is
// weighed by the checks' effective number: their count over the
// integrated autocorrelation time of the started checks in the order their
// jobs started (the effective sample size of a correlated series, its
// autocorrelations summed as Geyer's initial positive sequence; the count
// itself when they look independent).

#include <cstddef>
#include <vector>

namespace placement::core {

// Fewer started checks than this and the forecast is used as it is (said
// so).
inline constexpr size_t kMinCalibrationPits = 20;

class StartCalibration {
 public:
  StartCalibration() = default;
  // `pits`: the started jobs' checks, in the order the jobs started (oldest
  // first, as QueueHistory keeps them); `floors`: each waiting job's floor,
  // any order; both in [0, 1].
  StartCalibration(std::vector<double> pits, std::vector<double> floors);

  size_t started() const { return started_; }
  size_t waiting() const { return waiting_; }
  // The checks (started and waiting) counted as independent ones: their
  // count when the started checks look independent, fewer when
  // neighbouring ones move together.
  double effective_checks() const { return effective_; }
  // Enough started checks to read a forecast through them.
  bool calibrated() const { return started_ >= kMinCalibrationPits; }

  // The level the raw forecast must be read at for a calibrated level `q`:
  // the q-quantile of the checks (each started check at the middle of its
  // share, linear in between, as core::QuantileOfSorted reads draws; the
  // share of jobs still waiting past the last started check spread evenly
  // between it and 1), shrunk toward q by kMinCalibrationPits
  // pseudo-observations against effective_checks(); q itself when not
  // calibrated.
  double Level(double q) const;

 private:
  size_t started_ = 0;
  size_t waiting_ = 0;
  std::vector<double> values_;   // the started checks, sorted
  std::vector<double> middles_;  // the level at the middle of each one's share
  double beyond_ = 0;  // the share of jobs waiting past the last started check
  double effective_ = 0;
};

}  // namespace placement::core

#endif  // PLACEMENT_CORE_QUEUE_START_CALIBRATION_H_
