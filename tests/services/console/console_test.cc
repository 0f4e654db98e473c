// The console's answers that need no database: unknown paths, refused
// queries, missing or wrong tokens, roles, sign-in and sign-out, assets,
// and a full worker queue.
#include "services/console/console.h"

#include <optional>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "services/auth/auth.h"
#include "services/console/http/security_headers.h"

namespace placement::services::console {
namespace {

class FakeTokens : public TokenDirectory {
 public:
  absl::StatusOr<Principal> FindToken(
      absl::string_view secret_hash) const override {
    auto it = by_hash.find(secret_hash);
    if (it == by_hash.end()) return absl::NotFoundError("unknown");
    return it->second;
  }
  absl::flat_hash_map<std::string, Principal> by_hash;
};

class ConsoleTest : public ::testing::Test {
 protected:
  ConsoleTest() {
    for (auto [secret, role] : {std::pair{"plc_agent", Role::kAgent},
                                std::pair{"plc_finance", Role::kFinance},
                                std::pair{"plc_planner", Role::kPlanner}}) {
      tokens_.by_hash[TokenSecretHash(secret)] = {secret, secret, role, {}};
    }
  }

  Console MakeConsole(bool queue_full = true) {
    ConsoleBackend backend;
    backend.submit = [this,
                      queue_full](std::function<void(storage::DbSession&)>) {
      ++submitted_;
      return !queue_full;
    };
    backend.snapshot = [] { return std::make_shared<const CatalogSnapshot>(); };
    backend.tokens = &tokens_;
    return Console(std::move(backend), ConsoleLimits{}, nullptr);
  }

  // Handle() answers at once for everything these tests send.
  HttpResponse Get(Console& console, const std::string& target,
                   const std::string& token = "") {
    HttpRequest request;
    request.method = "GET";
    request.target = target;
    request.host = "127.0.0.1:8080";
    if (!token.empty()) request.authorization = "Bearer " + token;
    return Send(console, request);
  }

  HttpResponse Send(Console& console, const HttpRequest& request) {
    std::optional<HttpResponse> answer;
    console.Handle(request, [&](HttpResponse r) { answer = std::move(r); });
    EXPECT_TRUE(answer.has_value()) << request.target;
    return answer.value_or(HttpResponse());
  }

  static std::string HeaderOf(const HttpResponse& r, const std::string& name) {
    for (const auto& [n, v] : r.headers) {
      if (n == name) return v;
    }
    return "";
  }

  FakeTokens tokens_;
  int submitted_ = 0;
};

TEST_F(ConsoleTest, UnknownPathsGetOneConstantAnswer) {
  Console console = MakeConsole();
  const HttpResponse first = Get(console, "/nope");
  EXPECT_EQ(first.status, 404);
  for (const std::string& path :
       {std::string("/../../etc/passwd"), std::string("/assets/../x"),
        "/x" + std::string(5000, 'a'), std::string("/pools/"),
        std::string("/nope?token=plc_x")}) {
    const HttpResponse r = Get(console, path, "plc_planner");
    EXPECT_EQ(r.status, 404) << path;
    EXPECT_EQ(r.body, first.body) << path;  // nothing of the path in it
  }
  EXPECT_EQ(submitted_, 0);
}

TEST_F(ConsoleTest, EveryPageRefusesWithoutAToken) {
  Console console = MakeConsole();
  for (const Route& route : Routes()) {
    if (route.kind != RouteKind::kPage) continue;
    const HttpResponse r = Get(console, route.path);
    EXPECT_EQ(r.status, 401) << route.path;
    EXPECT_EQ(HeaderOf(r, "WWW-Authenticate"),
              "Bearer realm=\"placement console\"");
    const HttpResponse forged = Get(console, route.path, "plc_forged");
    EXPECT_EQ(forged.status, 401) << route.path;
  }
  EXPECT_EQ(submitted_, 0);
}

TEST_F(ConsoleTest, RolesAreRefusedPagesTheTableDoesNotOpen) {
  Console console = MakeConsole();
  EXPECT_EQ(Get(console, "/cost", "plc_planner").status, 403);
  EXPECT_EQ(Get(console, "/cost.csv", "plc_agent").status, 403);
  EXPECT_EQ(Get(console, "/accuracy", "plc_agent").status, 403);
  EXPECT_EQ(Get(console, "/plans", "plc_finance").status, 403);
  const HttpResponse r = Get(console, "/plans", "plc_finance");
  EXPECT_TRUE(absl::StrContains(r.body, "GetPlan")) << r.body;
  EXPECT_EQ(submitted_, 0);
  // Allowed ones reach the database queue (full here: 503).
  EXPECT_EQ(Get(console, "/cost", "plc_finance").status, 503);
  EXPECT_EQ(Get(console, "/pools", "plc_agent").status, 503);
  EXPECT_EQ(submitted_, 2);
}

TEST_F(ConsoleTest, BadParametersAreRefusedBeforeAnyRead) {
  Console console = MakeConsole();
  HttpResponse r =
      Get(console, "/pools?days=" + std::string(10000, '9'), "plc_finance");
  EXPECT_EQ(r.status, 400);
  EXPECT_TRUE(absl::StrContains(r.body, "data-param=\"days\"")) << r.body;
  r = Get(console, "/cost?from=2026-13-01", "plc_finance");
  EXPECT_EQ(r.status, 400);
  EXPECT_TRUE(absl::StrContains(r.body, "data-param=\"from\""));
  r = Get(console, "/plan", "plc_planner");
  EXPECT_TRUE(absl::StrContains(r.body, "data-param=\"id\""));
  r = Get(console, "/pools?token=plc_finance", "plc_finance");
  EXPECT_EQ(r.status, 400);
  EXPECT_FALSE(absl::StrContains(r.body, "plc_finance"));
  EXPECT_EQ(submitted_, 0);
}

TEST_F(ConsoleTest, SignInSetsAStrictHttpOnlyCookieAndSignOutClearsIt) {
  Console console = MakeConsole();
  HttpRequest login;
  login.method = "POST";
  login.target = "/login";
  login.host = "127.0.0.1:8080";
  login.origin = "http://127.0.0.1:8080";
  login.content_type = "application/x-www-form-urlencoded";
  login.body = "token=plc_planner";
  HttpResponse r = Send(console, login);
  EXPECT_EQ(r.status, 303);
  const std::string cookie = HeaderOf(r, "Set-Cookie");
  EXPECT_TRUE(absl::StartsWith(cookie, "placement_console=plc_planner;"));
  EXPECT_TRUE(absl::StrContains(cookie, "HttpOnly"));
  EXPECT_TRUE(absl::StrContains(cookie, "SameSite=Strict"));

  login.body = "token=plc_wrong";
  r = Send(console, login);
  EXPECT_EQ(r.status, 401);
  EXPECT_EQ(HeaderOf(r, "Set-Cookie"), "");
  EXPECT_FALSE(absl::StrContains(r.body, "plc_wrong"));

  login.body = "token=plc_planner";
  login.origin = "https://evil.example";
  EXPECT_EQ(Send(console, login).status, 403);

  HttpRequest logout = login;
  logout.target = "/logout";
  logout.origin = "http://127.0.0.1:8080";
  r = Send(console, logout);
  EXPECT_EQ(r.status, 303);
  EXPECT_TRUE(absl::StrContains(HeaderOf(r, "Set-Cookie"), "Max-Age=0"));
  logout.method = "GET";
  EXPECT_EQ(Send(console, logout).status, 405);
}

TEST_F(ConsoleTest, TheCookieOpensPagesLikeTheHeader) {
  Console console = MakeConsole();
  HttpRequest request;
  request.method = "GET";
  request.target = "/";
  request.cookie = "placement_console=plc_finance";
  HttpResponse r = Send(console, request);
  EXPECT_EQ(r.status, 303);
  EXPECT_EQ(HeaderOf(r, "Location"), "/pools");
  request.target = "/cost";
  EXPECT_EQ(Send(console, request).status, 503);  // reached the queue
  request.cookie = "";
  request.target = "/";
  EXPECT_EQ(HeaderOf(Send(console, request), "Location"), "/login");
}

TEST_F(ConsoleTest, AssetsAreServedWithoutATokenAndCached) {
  Console console = MakeConsole();
  for (const char* path : {"/assets/console.css", "/assets/console.js"}) {
    const HttpResponse r = Get(console, path);
    EXPECT_EQ(r.status, 200) << path;
    EXPECT_FALSE(r.body.empty());
    EXPECT_TRUE(r.cacheable);
  }
  EXPECT_TRUE(absl::StartsWith(Get(console, "/assets/console.js").content_type,
                               "text/javascript"));
  EXPECT_EQ(Get(console, "/assets/console.js?v=1").status, 400);
}

TEST_F(ConsoleTest, EveryAnswerCarriesTheStrictPolicy) {
  HttpResponse page;
  bool has_csp = false;
  for (const auto& [name, value] : SecureHeaders(page)) {
    if (name == "Content-Security-Policy") {
      has_csp = true;
      EXPECT_TRUE(absl::StrContains(value, "script-src 'self'"));
      EXPECT_FALSE(absl::StrContains(value, "unsafe-inline"));
      EXPECT_FALSE(absl::StrContains(value, "unsafe-eval"));
      EXPECT_FALSE(absl::StrContains(value, "http"));
      EXPECT_TRUE(absl::StrContains(value, "default-src 'none'"));
    }
    if (name == "Cache-Control") {
      EXPECT_EQ(value, "no-store");
    }
  }
  EXPECT_TRUE(has_csp);
}

TEST_F(ConsoleTest, AStoppedConsoleSendsNothingToTheWorkers) {
  Console console = MakeConsole(/*queue_full=*/false);
  console.Stop();
  EXPECT_EQ(Get(console, "/pools", "plc_planner").status, 503);
  EXPECT_EQ(submitted_, 0);
}

}  // namespace
}  // namespace placement::services::console
