#include "services/api/token_convert.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "common/proto_time.h"
#include "services/api/run_validation.h"

namespace placement::services {

v1::Role RoleToProto(Role role) {
  switch (role) {
    case Role::kAgent:
      return v1::ROLE_AGENT;
    case Role::kPlanner:
      return v1::ROLE_PLANNER;
    case Role::kFinance:
      return v1::ROLE_FINANCE;
    case Role::kAdmin:
      return v1::ROLE_ADMIN;
  }
  return v1::ROLE_UNSPECIFIED;
}

std::optional<Role> RoleFromProto(v1::Role role) {
  for (Role r : {Role::kAgent, Role::kPlanner, Role::kFinance, Role::kAdmin}) {
    if (RoleToProto(r) == role) return r;
  }
  return std::nullopt;
}

v1::ApiToken TokenToProto(const storage::TokenRecord& token) {
  v1::ApiToken out;
  out.set_token_id(token.token_id);
  out.set_name(token.name);
  Role role = Role::kAgent;
  out.set_role(ParseRole(token.role, &role) ? RoleToProto(role)
                                            : v1::ROLE_UNSPECIFIED);
  common::TimeToProto(token.created_at, out.mutable_create_time());
  if (token.revoked_at.has_value()) {
    common::TimeToProto(*token.revoked_at, out.mutable_revoke_time());
  }
  for (const std::string& team : token.teams) out.add_teams(team);
  return out;
}

std::vector<std::string> TokenTeamsFromProto(
    const google::protobuf::RepeatedPtrField<std::string>& teams,
    core::FieldViolations* violations) {
  if (teams.size() > kMaxTokenTeams) {
    violations->push_back(
        {"teams", absl::StrCat("at most ", kMaxTokenTeams, " teams")});
    return {};
  }
  std::vector<std::string> out;
  for (int i = 0; i < teams.size(); ++i) {
    if (teams[i].empty() || teams[i].size() > kMaxIdLength) {
      violations->push_back(
          {absl::StrCat("teams[", i, "]"),
           absl::StrCat("must be 1-", kMaxIdLength, " characters")});
    }
    out.push_back(teams[i]);
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

}  // namespace placement::services
