#ifndef PLACEMENT_CORE_EVIDENCE_MOST_FAILED_RUN_H_
#define PLACEMENT_CORE_EVIDENCE_MOST_FAILED_RUN_H_

// One run's failures counted by its share of the evidence. Every failed
// attempt a run reports is a failure (core/evidence/run_attempts.h), so one
// run that reports many, each at the most wall the API accepts, could
// price a pool of honest runs at several times their cost. A rollup keeps
// its two runs with the most failed attempts, and the figures of the
// first; the first's failed attempts count at most twice the second's (and
// at least two), and what it held and lost for the rest is left out. A
// pool whose runs fail alike is untouched (the guide's collective-timeout
// case: three runs of three failed attempts each); one run that fails far
// more than any other weighs as one that failed twice as often as the
// next. Mergeable: the two largest of two rollups are among their four.

#include <cstdint>

namespace placement::core {

// Below this many runs every failure counts: one run is then a third or
// more of what is known of the pool or the recipe, and a run that failed
// often is most of the evidence, not an outlier among it.
inline constexpr int64_t kMinRunsToBoundOneRun = 4;
// One run's failed attempts count at most twice the next run's, and never
// fewer than this: a run that failed twice where the others never did is
// an honest draw of a flaky pool as often as it is a lie.
inline constexpr int64_t kMinFailuresOfOneRun = 2;

struct MostFailedRun {
  // The run with the most failed attempts: those, its attempts, and the
  // hours it held (as counted) and lost, in the rollup's units.
  int64_t failed_attempts = 0;
  // Of them, the pool's nodes' (preempted, hardware error) and its
  // fabric's (collective timeout).
  int64_t node_failed_attempts = 0;
  int64_t fabric_failed_attempts = 0;
  int64_t attempts = 0;
  double counted_hours = 0;
  double lost_hours = 0;
  // Where a succeeded run's start-up per attempt sits in its rollup's
  // start-up histogram (counted once an attempt); -1 when it has none.
  int startup_bucket = -1;
  // The failed attempts of the run with the next most.
  int64_t second_failed_attempts = 0;

  void Merge(const MostFailedRun& other);

  // Failed attempts of the first beyond twice the second's, and beyond
  // kMinFailuresOfOneRun, in a rollup of `runs` runs: not counted (none
  // below kMinRunsToBoundOneRun).
  // The attempts left out are failed ones, and take their share of the
  // run's counted and lost hours with them.
  int64_t ExcessFailedAttempts(int64_t runs) const;
  // The share of the first's failed attempts left out: its node and fabric
  // failures are left out in that share (its causes' mix is kept).
  double ExcessShare(int64_t runs) const;
  double ExcessCountedHours(int64_t runs) const;
  double ExcessLostHours(int64_t runs) const;

  friend bool operator==(const MostFailedRun&, const MostFailedRun&) = default;
};

}  // namespace placement::core

#endif  // PLACEMENT_CORE_EVIDENCE_MOST_FAILED_RUN_H_
