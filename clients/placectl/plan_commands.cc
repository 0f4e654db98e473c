#include "clients/placectl/plan_commands.h"

#include <iostream>

namespace placement::placectl {

int RunPlan(const std::vector<std::string>& /*args*/) {
  std::cerr << "placectl plan: not available yet\n";
  return 2;
}

int RunPlans(const std::vector<std::string>& /*args*/) {
  std::cerr << "placectl plans: not available yet\n";
  return 2;
}

}  // namespace placement::placectl
