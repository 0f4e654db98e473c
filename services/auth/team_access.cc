#include "services/auth/team_access.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace placement::services {
namespace {

bool Bound(const std::optional<Principal>& caller) {
  return caller.has_value() && !caller->teams.empty();
}

std::string TeamText(absl::string_view team) {
  return team.empty() ? "no team" : absl::StrCat("team '", team, "'");
}

}  // namespace

std::string DescribeTeams(const std::vector<std::string>& teams) {
  return absl::StrCat(teams.size() == 1 ? "team " : "teams ",
                      absl::StrJoin(teams, ", "));
}

bool MayReachTeam(const std::optional<Principal>& caller,
                  absl::string_view team) {
  if (!Bound(caller)) return true;
  return !team.empty() &&
         std::binary_search(caller->teams.begin(), caller->teams.end(), team);
}

absl::Status CheckTeam(const std::optional<Principal>& caller,
                       absl::string_view team, absl::string_view what) {
  if (MayReachTeam(caller, team)) return absl::OkStatus();
  return absl::PermissionDeniedError(absl::StrCat(
      what, " belongs to ", TeamText(team), "; token '", caller->name,
      "' is bound to ", DescribeTeams(caller->teams)));
}

absl::Status CheckTeamOrFleet(const std::optional<Principal>& caller,
                              absl::string_view team, absl::string_view what) {
  if (team.empty()) return absl::OkStatus();
  return CheckTeam(caller, team, what);
}

std::string OnlyTeam(const std::optional<Principal>& caller) {
  if (!Bound(caller) || caller->teams.size() != 1) return "";
  return caller->teams.front();
}

absl::StatusOr<std::string> TeamOfRequest(
    const std::optional<Principal>& caller, absl::string_view requested,
    absl::string_view what) {
  std::string team(requested);
  if (team.empty()) team = OnlyTeam(caller);
  if (MayReachTeam(caller, team)) return team;
  return absl::PermissionDeniedError(
      absl::StrCat(what, " would belong to ", TeamText(team), "; token '",
                   caller->name, "' is bound to ", DescribeTeams(caller->teams),
                   team.empty() ? ": name one of them in `team`" : ""));
}

std::vector<std::string> TeamsOfListing(
    const std::optional<Principal>& caller) {
  if (!Bound(caller)) return {};
  return caller->teams;
}

}  // namespace placement::services
