#include "core/plan/recorded_plan.h"

#include <algorithm>

#include "core/evidence/run_attempts.h"

namespace placement::core {

int RecordedPlan::proposed_runs() const {
  return static_cast<int>(
      std::count_if(targets.begin(), targets.end(),
                    [](const BakeOffTarget& t) { return t.proposed; }));
}

double BakeOffUpload::GpuHoursPerSuccessfulStep() const {
  if (run.steps_succeeded <= 0) return 0;
  return run.gpu_count * AttemptsOf(run).counted_hours /
         static_cast<double>(run.steps_succeeded);
}

std::vector<BakeOffUpload> UploadsFor(const BakeOffTarget& target,
                                      const std::vector<BakeOffUpload>& all) {
  std::vector<BakeOffUpload> matching;
  for (const BakeOffUpload& upload : all) {
    if (upload.run.recipe_key == target.recipe_key &&
        upload.run.pool_name == target.pool_name) {
      matching.push_back(upload);
    }
  }
  return matching;
}

}  // namespace placement::core
