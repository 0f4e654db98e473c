// The console decides by the API's role table, takes a token only from the
// Authorization header or its HttpOnly, SameSite=Strict cookie.
#include "services/console/access.h"

#include "absl/container/flat_hash_map.h"
#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "services/auth/auth.h"
#include "services/console/routes.h"

namespace placement::services::console {
namespace {

class FakeTokens : public TokenDirectory {
 public:
  absl::StatusOr<Principal> FindToken(
      absl::string_view secret_hash) const override {
    if (!loaded) return absl::UnavailableError("not loaded");
    auto it = by_hash.find(secret_hash);
    if (it == by_hash.end()) return absl::NotFoundError("unknown");
    return it->second;
  }
  void Add(const std::string& secret, Role role) {
    by_hash[TokenSecretHash(secret)] =
        Principal{"id-" + secret, secret, role, {}};
  }
  bool loaded = true;
  absl::flat_hash_map<std::string, Principal> by_hash;
};

TEST(AccessTest, EveryMethodTheConsoleReadsAsIsInTheRoleTable) {
  for (const char* method :
       {reads_as::kListPools, reads_as::kGetPool, reads_as::kGetCostReport,
        reads_as::kListBenchmarkRuns, reads_as::kGetPlan,
        reads_as::kGetBakeOffStatus, reads_as::kGetPlanAccuracy,
        reads_as::kListStandards}) {
    bool found = false;
    for (const MethodRule& rule : MethodRules())
      found |= rule.method == std::string(method);
    EXPECT_TRUE(found) << method;
  }
  for (const Route& route : Routes()) {
    if (route.kind != RouteKind::kPage) continue;
    EXPECT_TRUE(RoleMayCall(Role::kAdmin, route.reads_as)) << route.path;
  }
}

// The same answers the gRPC role table gives (docs/SECURITY.md).
TEST(AccessTest, PagesFollowTheRoleTable) {
  const Viewer finance = Viewer::Of({"f", "f", Role::kFinance, {}});
  const Viewer planner = Viewer::Of({"p", "p", Role::kPlanner, {}});
  const Viewer agent = Viewer::Of({"a", "a", Role::kAgent, {}});
  EXPECT_TRUE(finance.MayRead(RouteOf(PageId::kCost).reads_as));
  EXPECT_TRUE(finance.MayRead(RouteOf(PageId::kAccuracy).reads_as));
  EXPECT_FALSE(finance.MayRead(RouteOf(PageId::kPlans).reads_as));
  EXPECT_FALSE(planner.MayRead(RouteOf(PageId::kCost).reads_as));
  EXPECT_FALSE(planner.MayRead(RouteOf(PageId::kCostCsv).reads_as));
  EXPECT_TRUE(planner.MayRead(RouteOf(PageId::kPlan).reads_as));
  EXPECT_TRUE(agent.MayRead(RouteOf(PageId::kPools).reads_as));
  EXPECT_TRUE(agent.MayRead(RouteOf(PageId::kStandards).reads_as));
  EXPECT_FALSE(agent.MayRead(RouteOf(PageId::kAccuracy).reads_as));
  // A token bound to teams reads what its role opens, except a method of
  // the whole fleet's, as the Authorizer refuses it.
  const Viewer team_planner =
      Viewer::Of({"t", "t", Role::kPlanner, {"team-a"}});
  EXPECT_TRUE(team_planner.MayRead(RouteOf(PageId::kPlans).reads_as));
  const char kListTokens[] = "/placement.v1.CatalogService/ListTokens";
  EXPECT_FALSE(
      Viewer::Of({"t", "t", Role::kAdmin, {"team-a"}}).MayRead(kListTokens));
  EXPECT_TRUE(Viewer::Of({"u", "u", Role::kAdmin, {}}).MayRead(kListTokens));
  EXPECT_FALSE(agent.MayRead(RouteOf(PageId::kCost).reads_as));
  EXPECT_FALSE(agent.MayRead(reads_as::kGetCostReport));
  EXPECT_TRUE(Viewer::Unauthenticated().MayRead(reads_as::kGetCostReport));
}

TEST(AccessTest, TokenComesFromTheHeaderOrTheCookieOnly) {
  HttpRequest request;
  EXPECT_EQ(PresentedToken(request), "");
  request.cookie = "a=b; placement_console=plc_cookie; c=d";
  EXPECT_EQ(PresentedToken(request), "plc_cookie");
  request.authorization = "Bearer plc_header";
  EXPECT_EQ(PresentedToken(request), "plc_header");
  request.authorization = "bearer plc_header";
  EXPECT_EQ(PresentedToken(request), "plc_header");
  request.authorization = "Basic dXNlcjpwYXNz";
  EXPECT_EQ(PresentedToken(request), "");  // a header that is not ours wins
  request = HttpRequest();
  request.target = "/pools?token=plc_url";
  EXPECT_EQ(PresentedToken(request), "");
}

TEST(AccessTest, AuthenticatesAsTheAuthorizerDoes) {
  FakeTokens tokens;
  tokens.Add("plc_good", Role::kPlanner);
  absl::StatusOr<Viewer> viewer = Authenticate("plc_good", tokens, true);
  ASSERT_TRUE(viewer.ok());
  EXPECT_EQ(viewer->Describe(), "plc_good (PLANNER)");
  EXPECT_TRUE(absl::IsUnauthenticated(Authenticate("", tokens, true).status()));
  EXPECT_TRUE(
      absl::IsUnauthenticated(Authenticate("plc_bad", tokens, true).status()));
  tokens.loaded = false;
  EXPECT_TRUE(
      absl::IsUnavailable(Authenticate("plc_good", tokens, true).status()));
  EXPECT_TRUE(Authenticate("", tokens, false).ok());
}

TEST(AccessTest, SessionCookieIsHttpOnlyAndStrict) {
  const std::string cookie = SessionCookie("plc_x");
  EXPECT_TRUE(absl::StrContains(cookie, "; HttpOnly"));
  EXPECT_TRUE(absl::StrContains(cookie, "; SameSite=Strict"));
  EXPECT_TRUE(absl::StrContains(cookie, "; Path=/"));
  const std::string cleared = ClearedSessionCookie();
  EXPECT_TRUE(absl::StrContains(cleared, "Max-Age=0"));
  EXPECT_TRUE(absl::StrContains(cleared, "; HttpOnly"));
}

TEST(RoutesTest, OnlyExactPathsAreFound) {
  EXPECT_NE(FindRoute("/pools"), nullptr);
  EXPECT_NE(FindRoute("/assets/console.css"), nullptr);
  for (const char* path :
       {"/pools/", "/POOLS", "/pools/../cost", "/../etc/passwd",
        "/assets/../../etc/passwd", "/assets/console.css/..",
        "/assets/%2e%2e/console.css", "//pools", "/assets/", "/assets",
        "/metrics", ""}) {
    EXPECT_EQ(FindRoute(path), nullptr) << path;
  }
}

TEST(RoutesTest, LabelsAreFewAndEveryPageHasOne) {
  std::set<std::string> labels;
  for (const Route& route : Routes()) labels.insert(route.label);
  EXPECT_LE(labels.size(), 16u);
  for (PageId page : {PageId::kPools, PageId::kPool, PageId::kPlans,
                      PageId::kPlan, PageId::kAccuracy, PageId::kCost,
                      PageId::kCostCsv, PageId::kStandards}) {
    EXPECT_EQ(RouteOf(page).kind, RouteKind::kPage);
    EXPECT_EQ(RouteOf(page).page, page);
  }
}

}  // namespace
}  // namespace placement::services::console
