#ifndef PLACEMENT_CLIENTS_PLACECTL_BAKEOFF_COMMANDS_H_
#define PLACEMENT_CLIENTS_PLACECTL_BAKEOFF_COMMANDS_H_

#include <string>
#include <vector>

namespace placement::placectl {

// `placectl bakeoff PLAN_ID status`: a plan's bake-off, its progress and,
// once complete, its verdict.
int RunBakeOff(const std::vector<std::string>& args);

}  // namespace placement::placectl

#endif  // PLACEMENT_CLIENTS_PLACECTL_BAKEOFF_COMMANDS_H_
