#ifndef PLACEMENT_SERVICES_AUTH_TEAM_ACCESS_H_
#define PLACEMENT_SERVICES_AUTH_TEAM_ACCESS_H_

// What a caller reaches by team (docs/SECURITY.md, Teams): the one place
// that decides it, for the RPC handlers and any other front end (the
// console's pages ask the same questions).
//
// A token bound to teams reaches what carries one of them: plans (their
// request's team), runs and their samples, bake-offs (their plan's),
// standards written for those teams (and reads the fleet-wide ones), cost
// rows. What carries no team ("") belongs to no team, so a bound token
// does not reach it. An unbound token, like every token made before teams
// existed, reaches every team and what carries none; so does every call
// while auth is off (`caller` is nullopt then). Roles are decided before
// this (MethodRules()); this narrows what a role allows to the caller's
// teams.

#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "services/auth/principal.h"

namespace placement::services {

// Whether `caller` may read or change what belongs to `team` ("": to no
// team).
bool MayReachTeam(const std::optional<Principal>& caller,
                  absl::string_view team);

// OK when MayReachTeam; else PERMISSION_DENIED naming `team`, what it is
// the team of (`what`, e.g. "plan 0190..."), and the caller's teams.
absl::Status CheckTeam(const std::optional<Principal>& caller,
                       absl::string_view team, absl::string_view what);

// As CheckTeam, for what applies to a team or, with no team, to the whole
// fleet (a standard): every caller may read the fleet's.
absl::Status CheckTeamOrFleet(const std::optional<Principal>& caller,
                              absl::string_view team, absl::string_view what);

// The caller's team when its token is bound to exactly one, else "".
std::string OnlyTeam(const std::optional<Principal>& caller);

// The team a request acts for: `requested` when set, else the caller's
// team when its token is bound to exactly one, else "" (no team); then
// checked as CheckTeam (`what`: what the request makes, e.g. "the plan").
absl::StatusOr<std::string> TeamOfRequest(
    const std::optional<Principal>& caller, absl::string_view requested,
    absl::string_view what);

// The teams a listing for `caller` is limited to, in name order; empty:
// none (an unbound caller's listing is not limited).
std::vector<std::string> TeamsOfListing(const std::optional<Principal>& caller);

// "team a", "teams a, b": how a refusal names a token's teams.
std::string DescribeTeams(const std::vector<std::string>& teams);

}  // namespace placement::services

#endif  // PLACEMENT_SERVICES_AUTH_TEAM_ACCESS_H_
