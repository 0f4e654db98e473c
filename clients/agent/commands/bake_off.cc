#include <iostream>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "clients/agent/commands/command_support.h"
#include "clients/agent/commands/commands.h"
#include "clients/agent/recipe_input.h"
#include "clients/agent/uploader.h"
#include "clients/common/rpc_errors.h"
#include "placement/v1/placement.grpc.pb.h"

namespace placement::agent {
namespace {

// The environment variable a bake-off command sets to the steps the plan
// asks of the run: the training command reads it and stops there (the
// agent passes its environment on to the command).
constexpr char kMaxStepsVariable[] = "PLACEMENT_MAX_STEPS";

}  // namespace

int BakeOff(const std::string& plan_id) {
  absl::StatusOr<Uploader> uploader = MakeUploader();
  if (!uploader.ok()) {
    std::cerr << "placement-agent: " << uploader.status().message() << "\n";
    return kExitUsage;
  }
  auto placement =
      v1::PlacementService::NewStub(uploader->connection().channel());
  v1::GetPlanRequest request;
  request.set_plan_id(plan_id);
  v1::GetPlanResponse response;
  grpc::Status status = placement->GetPlan(
      uploader->connection().Context().get(), request, &response);
  if (!status.ok()) {
    std::cerr << "placement-agent: " << clients::DescribeError(status) << "\n";
    return kExitFailed;
  }
  if (!response.plan().has_bake_off() ||
      response.plan().bake_off().runs().empty()) {
    std::cout << "# plan " << plan_id
              << " proposes no bake-off: no candidate other than its first "
                 "is worth measuring first (the job itself measures the "
                 "first)\n";
    return kExitOk;
  }
  const v1::BakeOff& b = response.plan().bake_off();
  std::cout << (b.runs_size() == 1 ? "# Measurement run of plan "
                                   : "# Bake-off of plan ")
            << plan_id << " (recipe key " << b.recipe_key() << ")\n";
  if (!b.reason().empty()) std::cout << "# why: " << b.reason() << "\n";
  if (!b.settings().empty())
    std::cout << "# settings: " << b.settings() << "\n";
  if (!b.measure().empty()) {
    std::cout << "# measure: " << absl::StrJoin(b.measure(), "; ") << "\n";
  }
  if (!b.eval_requirement().empty()) {
    std::cout << "# then: " << b.eval_requirement() << "\n";
  }
  std::cout << "# On a node of each pool, with your training command (it "
               "prints step records and stops after $PLACEMENT_MAX_STEPS "
               "steps when set, docs/AGENT.md):\n";
  for (const v1::BakeOffRun& run : b.runs()) {
    v1::Recipe recipe = b.recipe();
    recipe.set_gpu_count(run.gpu_count());
    const std::string file = absl::StrCat("bakeoff-", run.pool(), ".json");
    std::cout << "\n# pool " << run.pool() << ": " << run.gpu_count() << " x "
              << run.sku() << "\n";
    if (!run.reason().empty()) std::cout << "# why: " << run.reason() << "\n";
    std::cout << "cat > " << file << " <<'EOF'\n"
              << RecipeToJson(recipe)
              << "\nEOF\n"
              // The command inherits the agent's environment.
              << (run.steps() > 0
                      ? absl::StrCat(kMaxStepsVariable, "=", run.steps(), " ")
                      : "")
              << "placement-agent run --server " << ServerAddress()
              << " --pool " << run.pool() << " --recipe " << file
              << " --plan_id " << plan_id << " -- TRAINING_COMMAND...\n";
  }
  return kExitOk;
}

}  // namespace placement::agent
