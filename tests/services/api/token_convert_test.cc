// services/api/token_convert: roles both ways (an undeclared or
// unspecified role is none), and a stored token as the API shows it:
// never its secret's hash, a revoke time only once revoked.
#include "services/api/token_convert.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "common/proto_time.h"
#include "gtest/gtest.h"

namespace placement::services {
namespace {

TEST(RoleConvertTest, EveryRoleRoundTrips) {
  for (Role role :
       {Role::kAgent, Role::kPlanner, Role::kFinance, Role::kAdmin}) {
    EXPECT_EQ(RoleFromProto(RoleToProto(role)), role);
  }
  EXPECT_EQ(RoleToProto(Role::kAgent), v1::ROLE_AGENT);
  EXPECT_EQ(RoleToProto(Role::kPlanner), v1::ROLE_PLANNER);
  EXPECT_EQ(RoleToProto(Role::kFinance), v1::ROLE_FINANCE);
  EXPECT_EQ(RoleToProto(Role::kAdmin), v1::ROLE_ADMIN);
}

TEST(RoleConvertTest, UnspecifiedAndUndeclaredRolesAreNone) {
  EXPECT_EQ(RoleFromProto(v1::ROLE_UNSPECIFIED), std::nullopt);
  EXPECT_EQ(RoleFromProto(static_cast<v1::Role>(5)), std::nullopt);
  EXPECT_EQ(RoleFromProto(static_cast<v1::Role>(99)), std::nullopt);
}

storage::TokenRecord Stored() {
  storage::TokenRecord t;
  t.token_id = "0190f3c2-7a4b-7c3d-8e5f-123456789abc";
  t.name = "ci-agent";
  t.role = "AGENT";
  t.secret_hash = std::string(32, '\x5a');
  t.created_at = absl::FromUnixMicros(1'700'000'000'123'456);
  return t;
}

TEST(TokenToProtoTest, ShowsIdNameRoleAndCreateTime) {
  const v1::ApiToken out = TokenToProto(Stored());
  EXPECT_EQ(out.token_id(), "0190f3c2-7a4b-7c3d-8e5f-123456789abc");
  EXPECT_EQ(out.name(), "ci-agent");
  EXPECT_EQ(out.role(), v1::ROLE_AGENT);
  EXPECT_EQ(common::TimeFromProto(out.create_time()),
            absl::FromUnixMicros(1'700'000'000'123'456));
  EXPECT_FALSE(out.has_revoke_time());
}

TEST(TokenToProtoTest, NeverCarriesTheSecretHash) {
  const storage::TokenRecord stored = Stored();
  const std::string bytes = TokenToProto(stored).SerializeAsString();
  EXPECT_EQ(bytes.find(stored.secret_hash), std::string::npos);
}

TEST(TokenToProtoTest, ARevokedTokenShowsWhen) {
  storage::TokenRecord stored = Stored();
  stored.revoked_at = stored.created_at + absl::Hours(2);
  const v1::ApiToken out = TokenToProto(stored);
  ASSERT_TRUE(out.has_revoke_time());
  EXPECT_EQ(common::TimeFromProto(out.revoke_time()),
            stored.created_at + absl::Hours(2));
}

TEST(TokenToProtoTest, StoredRoleNamesMapInEitherCase) {
  storage::TokenRecord stored = Stored();
  for (const auto& [name, role] :
       {std::pair<const char*, v1::Role>{"PLANNER", v1::ROLE_PLANNER},
        {"finance", v1::ROLE_FINANCE},
        {"ADMIN", v1::ROLE_ADMIN},
        {"", v1::ROLE_UNSPECIFIED},
        {"root", v1::ROLE_UNSPECIFIED}}) {
    stored.role = name;
    EXPECT_EQ(TokenToProto(stored).role(), role) << name;
  }
}

// A token's teams: shown in name order, each once; at most 32, none empty.
TEST(TokenTeamsTest, AreSortedUniqueAndBounded) {
  storage::TokenRecord stored = Stored();
  stored.teams = {"a", "b"};
  const v1::ApiToken out = TokenToProto(stored);
  ASSERT_EQ(out.teams_size(), 2);
  EXPECT_EQ(out.teams(1), "b");

  v1::CreateTokenRequest request;
  for (const char* team : {"ml", "infra", "ml"}) request.add_teams(team);
  core::FieldViolations violations;
  EXPECT_EQ(TokenTeamsFromProto(request.teams(), &violations),
            (std::vector<std::string>{"infra", "ml"}));
  EXPECT_TRUE(violations.empty());
  request.add_teams("");
  TokenTeamsFromProto(request.teams(), &violations);
  ASSERT_EQ(violations.size(), 1u);
  EXPECT_EQ(violations[0].field, "teams[3]");
  request.clear_teams();
  for (int i = 0; i <= kMaxTokenTeams; ++i) {
    request.add_teams(absl::StrCat("t", i));
  }
  violations.clear();
  TokenTeamsFromProto(request.teams(), &violations);
  ASSERT_EQ(violations.size(), 1u);
  EXPECT_EQ(violations[0].field, "teams");
}

}  // namespace
}  // namespace placement::services
