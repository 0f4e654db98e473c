#ifndef PLACEMENT_CLIENTS_PLACECTL_RUN_COMMANDS_H_
#define PLACEMENT_CLIENTS_PLACECTL_RUN_COMMANDS_H_

#include <string>
#include <vector>

namespace placement::placectl {

// `placectl runs upload FILE|- | list | get RUN_ID`.
int RunRuns(const std::vector<std::string>& args);

}  // namespace placement::placectl

#endif  // PLACEMENT_CLIENTS_PLACECTL_RUN_COMMANDS_H_
