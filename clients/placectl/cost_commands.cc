#include "clients/placectl/cost_commands.h"

#include <iostream>

namespace placement::placectl {

int RunCost(const std::vector<std::string>& /*args*/) {
  std::cerr << "placectl cost: not available yet\n";
  return 2;
}

}  // namespace placement::placectl
