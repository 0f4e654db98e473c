#include "services/auth/principal.h"

#include "absl/strings/ascii.h"

namespace placement::services {

const char* RoleName(Role role) {
  switch (role) {
    case Role::kAgent:
      return "AGENT";
    case Role::kPlanner:
      return "PLANNER";
    case Role::kFinance:
      return "FINANCE";
    case Role::kAdmin:
      return "ADMIN";
  }
  return "UNKNOWN";
}

bool ParseRole(absl::string_view name, Role* role) {
  const std::string upper = absl::AsciiStrToUpper(name);
  for (Role r : {Role::kAgent, Role::kPlanner, Role::kFinance, Role::kAdmin}) {
    if (upper == RoleName(r)) {
      *role = r;
      return true;
    }
  }
  return false;
}

}  // namespace placement::services
