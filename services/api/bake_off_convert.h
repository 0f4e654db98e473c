#ifndef PLACEMENT_SERVICES_API_BAKE_OFF_CONVERT_H_
#define PLACEMENT_SERVICES_API_BAKE_OFF_CONVERT_H_

// A stored plan and the uploads that carried it out, mapped to the core
// types that judge them (core::RecordedPlan, core::BakeOffUpload), and
// GetBakeOffStatus's answer from core's judgement (core::JudgeRecordedPlan).

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/evidence/eval_criterion.h"
#include "core/evidence/eval_evidence.h"
#include "core/evidence/pool_reliability.h"
#include "core/plan/bake_off_verdict.h"
#include "core/plan/recorded_plan.h"
#include "core/pool.h"
#include "core/sku.h"
#include "placement/v1/placement.pb.h"
#include "storage/records/bake_off_records.h"

namespace placement::services {

// The pools a plan's bake-off judges, with the recipe key the plan chose on
// each: every proposed run's, then the plan's first choice (the job itself
// measures it) when it is not one of them, then `also` (a standard's pool)
// when it is a candidate and not yet among them. None for a plan with no
// candidate.
std::vector<storage::BakeOffTarget> BakeOffTargets(
    const v1::PlacePlanResponse& plan, const std::string& also = "");

// What GetBakeOffStatus and WriteStandard read for one plan.
struct BakeOffReadings {
  std::string plan_id;
  std::string team;  // the plan's: only its runs and evals count
  v1::PlacePlanResponse plan;
  v1::PlacePlanRequest request;
  absl::Time created = absl::InfinitePast();
  std::vector<storage::BakeOffTarget> targets;  // BakeOffTargets(plan)
  // Per target, newest first: its pool's runs of its recipe key.
  std::vector<std::vector<storage::MatchedUpload>> uploads;
  // Per target: the stored evals of its recipe key on the plan's serving
  // SKU and precision (empty when the plan has no eval requirement).
  std::vector<std::vector<core::EvalEvidence>> evals;
};

// What the catalog knows of the targets' pools (the replica's snapshot).
struct BakeOffCatalog {
  const std::vector<core::Pool>* pools = nullptr;
  const std::vector<core::GpuSku>* skus = nullptr;
  const std::vector<core::EvalCriterion>* criteria = nullptr;
};

// The plan as core judges it; each target's pool_failures are left for
// the caller, who has the pools' failure records.
core::RecordedPlan RecordedPlanOf(const BakeOffReadings& readings,
                                  const BakeOffCatalog& catalog);

// Every matching upload, as core reads it; DATA_LOSS when a stored upload
// does not parse.
absl::StatusOr<std::vector<core::BakeOffUpload>> UploadsOf(
    const BakeOffReadings& readings);

// GetBakeOffStatus's answer: progress over the proposed runs, each run's
// uploads and, once each has one, the verdict.
void BakeOffStatusToProto(const BakeOffReadings& readings,
                          const core::RecordedPlan& plan,
                          const std::vector<core::BakeOffUpload>& uploads,
                          v1::GetBakeOffStatusResponse* response);

}  // namespace placement::services

#endif  // PLACEMENT_SERVICES_API_BAKE_OFF_CONVERT_H_
