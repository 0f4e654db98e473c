#ifndef PLACEMENT_SERVICES_API_BAKE_OFF_CONVERT_H_
#define PLACEMENT_SERVICES_API_BAKE_OFF_CONVERT_H_

// GetBakeOffStatus's answer from a stored plan, the uploads that matched its
// runs and the stored evals: the verdict itself is core::JudgeBakeOff.

#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "core/evidence/eval_evidence.h"
#include "core/pool.h"
#include "core/sku.h"
#include "placement/v1/placement.pb.h"
#include "storage/bake_off_records.h"

namespace placement::services {

// The pools a plan's bake-off judges, with the recipe key each was proposed
// with: every proposed run's, then the plan's first choice (the job itself
// measures it) when it is not one of them. None when the plan proposed no
// bake-off.
std::vector<storage::BakeOffTarget> BakeOffTargets(
    const v1::PlacePlanResponse& plan);

// What GetBakeOffStatus read for one plan.
struct BakeOffReadings {
  std::string plan_id;
  std::string team;  // the plan's: only its runs and evals count
  v1::PlacePlanResponse plan;
  std::vector<storage::BakeOffTarget> targets;  // BakeOffTargets(plan)
  // Per target, newest first.
  std::vector<std::vector<storage::MatchedUpload>> uploads;
  // Per target: the plan's eval requirement for its recipe key; nullopt
  // when the plan has none.
  std::vector<std::optional<core::EvalStatus>> evals;
};

// The answer: progress over the proposed runs and, once each has an upload,
// the verdict. DATA_LOSS when a stored upload does not parse.
absl::Status BakeOffStatusToProto(const BakeOffReadings& readings,
                                  const std::vector<core::Pool>& pools,
                                  const std::vector<core::GpuSku>& skus,
                                  v1::GetBakeOffStatusResponse* response);

}  // namespace placement::services

#endif  // PLACEMENT_SERVICES_API_BAKE_OFF_CONVERT_H_
