// services/auth/team_access: what a caller reaches by team. Unbound callers
// (and every call with auth off) reach every team and what carries none;
// bound ones their teams only, and a refusal names the team.
#include "services/auth/team_access.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace placement::services {
namespace {

using ::testing::HasSubstr;

const std::optional<Principal> kAuthOff;
const std::optional<Principal> kUnbound =
    Principal{"t1", "ops", Role::kAdmin, {}};
const std::optional<Principal> kTeamA =
    Principal{"t2", "agent-a", Role::kAgent, {"a"}};
const std::optional<Principal> kTeamsAB =
    Principal{"t3", "planner-ab", Role::kPlanner, {"a", "b"}};

TEST(TeamAccessTest, BoundCallersReachTheirTeamsOnly) {
  for (const auto& caller : {kAuthOff, kUnbound}) {
    EXPECT_TRUE(MayReachTeam(caller, "a"));
    EXPECT_TRUE(MayReachTeam(caller, ""));
    EXPECT_TRUE(TeamsOfListing(caller).empty());
  }
  EXPECT_TRUE(MayReachTeam(kTeamA, "a"));
  EXPECT_FALSE(MayReachTeam(kTeamA, "b"));
  EXPECT_FALSE(MayReachTeam(kTeamA, ""));  // no team is not team a
  EXPECT_FALSE(MayReachTeam(kTeamA, "A"));
  EXPECT_TRUE(MayReachTeam(kTeamsAB, "b"));
  EXPECT_EQ(TeamsOfListing(kTeamsAB), (std::vector<std::string>{"a", "b"}));
}

TEST(TeamAccessTest, RefusalsArePermissionDeniedNamingTheTeam) {
  const absl::Status refused = CheckTeam(kTeamA, "b", "plan 42");
  EXPECT_EQ(refused.code(), absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(refused.message(),
            "plan 42 belongs to team 'b'; token 'agent-a' is bound to team a");
  EXPECT_THAT(CheckTeam(kTeamsAB, "", "run 7").message(),
              HasSubstr("belongs to no team; token 'planner-ab' is bound to "
                        "teams a, b"));
  // What applies to the whole fleet is read by every team.
  EXPECT_TRUE(CheckTeamOrFleet(kTeamA, "", "standard 1").ok());
  EXPECT_FALSE(CheckTeamOrFleet(kTeamA, "b", "standard 1").ok());
}

TEST(TeamAccessTest, ARequestTakesTheOnlyTeamOfItsCaller) {
  EXPECT_EQ(*TeamOfRequest(kTeamA, "", "the plan"), "a");
  EXPECT_EQ(*TeamOfRequest(kUnbound, "", "the plan"), "");
  EXPECT_EQ(*TeamOfRequest(kAuthOff, "x", "the plan"), "x");
  EXPECT_EQ(TeamOfRequest(kTeamA, "b", "the plan").status().code(),
            absl::StatusCode::kPermissionDenied);
  // Bound to two, it must say which.
  const absl::StatusOr<std::string> which =
      TeamOfRequest(kTeamsAB, "", "the plan");
  EXPECT_EQ(which.status().code(), absl::StatusCode::kPermissionDenied);
  EXPECT_THAT(which.status().message(), HasSubstr("name one of them"));
  EXPECT_EQ(*TeamOfRequest(kTeamsAB, "b", "the plan"), "b");
  EXPECT_EQ(OnlyTeam(kTeamsAB), "");
}

}  // namespace
}  // namespace placement::services
