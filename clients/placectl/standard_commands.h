#ifndef PLACEMENT_CLIENTS_PLACECTL_STANDARD_COMMANDS_H_
#define PLACEMENT_CLIENTS_PLACECTL_STANDARD_COMMANDS_H_

#include <string>
#include <vector>

namespace placement::placectl {

// `placectl standards list | get ID | write --plan P --pool P --reason T |
// retire ID --reason T`.
int RunStandards(const std::vector<std::string>& args);

}  // namespace placement::placectl

#endif  // PLACEMENT_CLIENTS_PLACECTL_STANDARD_COMMANDS_H_
