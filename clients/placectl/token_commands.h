#ifndef PLACEMENT_CLIENTS_PLACECTL_TOKEN_COMMANDS_H_
#define PLACEMENT_CLIENTS_PLACECTL_TOKEN_COMMANDS_H_

#include <string>
#include <vector>

namespace placement::placectl {

// `placectl tokens create --role R --name N | revoke TOKEN_ID | list`
// (admin only).
int RunTokens(const std::vector<std::string>& args);

}  // namespace placement::placectl

#endif  // PLACEMENT_CLIENTS_PLACECTL_TOKEN_COMMANDS_H_
