#ifndef PLACEMENT_CLIENTS_PLACECTL_PLAN_COMMANDS_H_
#define PLACEMENT_CLIENTS_PLACECTL_PLAN_COMMANDS_H_

#include <string>
#include <vector>

namespace placement::placectl {

// `placectl plan [--recipe FILE | recipe flags]`: a ranked placement.
int RunPlan(const std::vector<std::string>& args);

// `placectl plans get PLAN_ID | accuracy`.
int RunPlans(const std::vector<std::string>& args);

}  // namespace placement::placectl

#endif  // PLACEMENT_CLIENTS_PLACECTL_PLAN_COMMANDS_H_
