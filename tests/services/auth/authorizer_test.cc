// The Authorizer decides from the TokenDirectory it is given: no snapshot,
// no server and no database are needed to check its decisions.
#include <optional>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "services/auth/auth.h"
#include "services/auth/token_directory.h"

namespace placement::services {
namespace {

constexpr char kPlacePlan[] = "/placement.v1.PlacementService/PlacePlan";
constexpr char kUpload[] = "/placement.v1.TelemetryService/UploadBenchmarkRun";

class FakeDirectory : public TokenDirectory {
 public:
  void Add(const std::string& secret, Principal principal) {
    tokens_[TokenSecretHash(secret)] = std::move(principal);
  }
  bool loaded = true;

  absl::StatusOr<Principal> FindToken(
      absl::string_view secret_hash) const override {
    if (!loaded) return absl::UnavailableError("tokens are not loaded yet");
    auto it = tokens_.find(secret_hash);
    if (it == tokens_.end()) return absl::NotFoundError("unknown");
    return it->second;
  }

 private:
  absl::flat_hash_map<std::string, Principal> tokens_;
};

class AuthorizerTest : public ::testing::Test {
 protected:
  AuthorizerTest() {
    directory_.Add("plc_planner", {"t1", "planner", Role::kPlanner, {}});
    directory_.Add("plc_agent", {"t2", "agent", Role::kAgent, {}});
    directory_.Add("plc_admin", {"t3", "admin", Role::kAdmin, {}});
    directory_.Add("plc_team_admin",
                   {"t4", "team-admin", Role::kAdmin, {"a", "b"}});
  }

  absl::Status Decide(Authorizer& auth, const char* method,
                      const std::string& authorization) {
    grpc::ServerContext context;
    Authorizer::Metadata metadata;
    if (!authorization.empty()) {
      metadata.emplace("authorization", authorization);
    }
    auth.Decide(context, method, metadata);
    absl::Status decision = auth.Decision(context);
    auth.Forget(context);
    return decision;
  }

  FakeDirectory directory_;
};

TEST_F(AuthorizerTest, KnownTokenWithAnAllowedRoleIsAdmitted) {
  Authorizer auth(directory_, /*enabled=*/true, 10, 10);
  EXPECT_TRUE(Decide(auth, kPlacePlan, "Bearer plc_planner").ok());
}

TEST_F(AuthorizerTest, UnknownTokenIsUnauthenticated) {
  Authorizer auth(directory_, /*enabled=*/true, 10, 10);
  const absl::Status decision = Decide(auth, kPlacePlan, "Bearer plc_other");
  EXPECT_EQ(decision.code(), absl::StatusCode::kUnauthenticated);
  EXPECT_EQ(decision.message(), "unknown or revoked token");
  EXPECT_EQ(Decide(auth, kPlacePlan, "").code(),
            absl::StatusCode::kUnauthenticated);
}

TEST_F(AuthorizerTest, TokensNotLoadedYetIsUnavailable) {
  directory_.loaded = false;
  Authorizer auth(directory_, /*enabled=*/true, 10, 10);
  EXPECT_EQ(Decide(auth, kPlacePlan, "Bearer plc_planner").code(),
            absl::StatusCode::kUnavailable);
}

TEST_F(AuthorizerTest, WrongRoleIsPermissionDenied) {
  Authorizer auth(directory_, /*enabled=*/true, 10, 10);
  const absl::Status decision = Decide(auth, kUpload, "Bearer plc_planner");
  EXPECT_EQ(decision.code(), absl::StatusCode::kPermissionDenied);
  EXPECT_NE(decision.message().find("PLANNER"), absl::string_view::npos);
}

// Pools, tokens and eval criteria are the fleet's: an admin bound to teams
// may not change (nor list) them, whatever its role allows.
TEST_F(AuthorizerTest, FleetWideMethodsAreRefusedToTokensBoundToTeams) {
  // A burst above the number of write methods: the rate limit is not what
  // this test asks about.
  Authorizer auth(directory_, /*enabled=*/true, 10, 100);
  for (const MethodRule& rule : MethodRules()) {
    SCOPED_TRACE(rule.method);
    const absl::Status bound =
        Decide(auth, rule.method, "Bearer plc_team_admin");
    EXPECT_TRUE(Decide(auth, rule.method, "Bearer plc_admin").ok());
    if (rule.fleet) {
      EXPECT_EQ(bound.code(), absl::StatusCode::kPermissionDenied);
      EXPECT_NE(bound.message().find("teams a, b"), absl::string_view::npos)
          << bound.message();
    } else {
      EXPECT_TRUE(bound.ok()) << bound;
    }
  }
}

TEST_F(AuthorizerTest, WritesOverTheBurstAreRefused) {
  Authorizer auth(directory_, /*enabled=*/true, /*writes_per_second=*/0.001,
                  /*write_burst=*/2);
  EXPECT_TRUE(Decide(auth, kUpload, "Bearer plc_agent").ok());
  EXPECT_TRUE(Decide(auth, kUpload, "Bearer plc_agent").ok());
  EXPECT_EQ(Decide(auth, kUpload, "Bearer plc_agent").code(),
            absl::StatusCode::kResourceExhausted);
}

// Fail closed: a method the table does not name is refused to every token,
// admins' too, and a call the interceptor never decided is refused.
TEST_F(AuthorizerTest, AMethodWithoutARuleIsRefusedToEveryRole) {
  Authorizer auth(directory_, /*enabled=*/true, 10, 10);
  constexpr char kUnruled[] = "/placement.v1.CatalogService/DropEverything";
  for (const char* secret : {"Bearer plc_admin", "Bearer plc_planner",
                             "Bearer plc_agent", "Bearer plc_team_admin"}) {
    const absl::Status decision = Decide(auth, kUnruled, secret);
    EXPECT_EQ(decision.code(), absl::StatusCode::kPermissionDenied) << secret;
    EXPECT_EQ(decision.message(),
              absl::StrCat(kUnruled, " is not open to any role"));
  }
}

TEST_F(AuthorizerTest, ACallNothingDecidedIsRefused) {
  Authorizer auth(directory_, /*enabled=*/true, 10, 10);
  grpc::ServerContext context;
  EXPECT_EQ(auth.Decision(context).code(), absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(auth.Caller(context), std::nullopt);
}

TEST_F(AuthorizerTest, DisabledAdmitsEverything) {
  directory_.loaded = false;
  Authorizer auth(directory_, /*enabled=*/false, 10, 10);
  EXPECT_TRUE(Decide(auth, kUpload, "").ok());
}

}  // namespace
}  // namespace placement::services
