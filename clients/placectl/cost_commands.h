#ifndef PLACEMENT_CLIENTS_PLACECTL_COST_COMMANDS_H_
#define PLACEMENT_CLIENTS_PLACECTL_COST_COMMANDS_H_

#include <string>
#include <vector>

namespace placement::placectl {

// `placectl cost ...`: cost per successful step.
int RunCost(const std::vector<std::string>& args);

}  // namespace placement::placectl

#endif  // PLACEMENT_CLIENTS_PLACECTL_COST_COMMANDS_H_
