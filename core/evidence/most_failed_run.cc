#include "core/evidence/most_failed_run.h"

#include <algorithm>

namespace placement::core {

void MostFailedRun::Merge(const MostFailedRun& o) {
  if (o.failed_attempts > failed_attempts) {
    second_failed_attempts =
        std::max(failed_attempts, o.second_failed_attempts);
    failed_attempts = o.failed_attempts;
    node_failed_attempts = o.node_failed_attempts;
    fabric_failed_attempts = o.fabric_failed_attempts;
    attempts = o.attempts;
    counted_hours = o.counted_hours;
    lost_hours = o.lost_hours;
    startup_bucket = o.startup_bucket;
  } else {
    second_failed_attempts = std::max(
        {second_failed_attempts, o.failed_attempts, o.second_failed_attempts});
  }
  if (second_failed_attempts >= failed_attempts) {
    // A tie: no run stands out, and the first's figures are never read.
    // Cleared, so that the result does not depend on the order of the runs
    // (the database adds them in its own).
    *this = MostFailedRun{.failed_attempts = failed_attempts,
                          .second_failed_attempts = second_failed_attempts};
  }
}

int64_t MostFailedRun::ExcessFailedAttempts(int64_t runs) const {
  if (runs < kMinRunsToBoundOneRun) return 0;
  const int64_t bound =
      std::max(kMinFailuresOfOneRun, 2 * second_failed_attempts);
  return std::max<int64_t>(0, failed_attempts - bound);
}

double MostFailedRun::ExcessShare(int64_t runs) const {
  if (failed_attempts <= 0) return 0;
  return static_cast<double>(ExcessFailedAttempts(runs)) /
         static_cast<double>(failed_attempts);
}

double MostFailedRun::ExcessCountedHours(int64_t runs) const {
  if (attempts <= 0) return 0;
  return counted_hours * static_cast<double>(ExcessFailedAttempts(runs)) /
         static_cast<double>(attempts);
}

double MostFailedRun::ExcessLostHours(int64_t runs) const {
  return lost_hours * ExcessShare(runs);
}

}  // namespace placement::core
