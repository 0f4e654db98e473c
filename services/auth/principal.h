#ifndef PLACEMENT_SERVICES_AUTH_PRINCIPAL_H_
#define PLACEMENT_SERVICES_AUTH_PRINCIPAL_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"

namespace placement::services {

// Who may do what. A token carries exactly one role.
enum class Role : uint8_t {
  kAgent = 1,    // telemetry writes only
  kPlanner = 2,  // PlacePlan and catalog reads
  kFinance = 4,  // cost reports and catalog reads
  kAdmin = 8,    // everything, including pools and tokens
};

const char* RoleName(Role role);
// "agent", "AGENT" -> kAgent; false for anything else.
bool ParseRole(absl::string_view name, Role* role);

// A presented token, resolved.
struct Principal {
  std::string token_id;
  std::string name;
  Role role = Role::kAgent;
  // The teams it is bound to, in name order; empty: unbound (every team).
  // services/auth/team_access.h decides what that lets it reach.
  std::vector<std::string> teams;
};

}  // namespace placement::services

#endif  // PLACEMENT_SERVICES_AUTH_PRINCIPAL_H_
