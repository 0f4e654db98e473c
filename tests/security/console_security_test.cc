// The web console against callers who choose everything they send: no
// token, a wrong role, a token in the URL, path traversal, a huge query
// parameter, huge headers and bodies, slow and too many connections, and
// thousands of unknown paths, which must cost no memory of their own
// (the metrics blow-up of a made-up gRPC path must not come back through a
// new door: security_grpc_metrics_test).
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "common/uuid.h"
#include "gtest/gtest.h"
#include "services/auth/auth.h"
#include "storage/stores/plan_store.h"
#include "storage/stores/token_store.h"
#include "tests/support/in_process_server.h"
#include "tests/support/metrics_scrape.h"

namespace placement {
namespace {

using ::placement::services::Role;
using ::placement::testing::InProcessServer;

struct Answer {
  int status = 0;  // 0: the connection closed without an answer
  std::map<std::string, std::string> headers;  // lower-case names
  std::string body;
};

// One keep-alive HTTP/1.1 connection to the console.
class Connection {
 public:
  explicit Connection(int port) {
    fd_ = socket(AF_INET, SOCK_STREAM, 0);
    timeval timeout{};
    timeout.tv_sec = 10;
    setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(static_cast<uint16_t>(port));
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    connected_ = connect(fd_, reinterpret_cast<sockaddr*>(&address),
                         sizeof(address)) == 0;
  }
  ~Connection() { close(fd_); }

  bool SendRaw(const std::string& bytes) {
    return send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL) ==
           static_cast<ssize_t>(bytes.size());
  }

  Answer Get(const std::string& target, const std::string& token = "") {
    std::string request =
        absl::StrCat("GET ", target, " HTTP/1.1\r\nHost: 127.0.0.1\r\n");
    if (!token.empty())
      absl::StrAppend(&request, "Authorization: Bearer ", token, "\r\n");
    absl::StrAppend(&request, "\r\n");
    if (!SendRaw(request)) return {};
    return Read();
  }

  // Reads one answer (its body by Content-Length).
  Answer Read() {
    Answer answer;
    size_t end;
    while ((end = buffer_.find("\r\n\r\n")) == std::string::npos) {
      if (!Fill()) return answer;
    }
    std::vector<std::string> lines =
        absl::StrSplit(buffer_.substr(0, end), "\r\n");
    std::vector<std::string> status_line = absl::StrSplit(lines[0], ' ');
    if (status_line.size() < 2 ||
        !absl::SimpleAtoi(status_line[1], &answer.status)) {
      return answer;
    }
    size_t length = 0;
    for (size_t i = 1; i < lines.size(); ++i) {
      const size_t colon = lines[i].find(':');
      std::string name = absl::AsciiStrToLower(lines[i].substr(0, colon));
      std::string value(absl::StripAsciiWhitespace(lines[i].substr(colon + 1)));
      if (name == "content-length") (void)absl::SimpleAtoi(value, &length);
      answer.headers[name] = value;
    }
    buffer_.erase(0, end + 4);
    while (buffer_.size() < length) {
      if (!Fill()) break;
    }
    answer.body = buffer_.substr(0, length);
    buffer_.erase(0, length);
    return answer;
  }

  // Whether the server closed the connection (within the receive timeout).
  bool Closed() {
    char c;
    return recv(fd_, &c, 1, 0) <= 0;
  }

  bool connected() const { return connected_; }

 private:
  bool Fill() {
    char chunk[16384];
    const ssize_t n = recv(fd_, chunk, sizeof(chunk), 0);
    if (n <= 0) return false;
    buffer_.append(chunk, static_cast<size_t>(n));
    return true;
  }

  int fd_ = -1;
  bool connected_ = false;
  std::string buffer_;
};

long RssKb() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (absl::StartsWith(line, "VmRSS:")) {
      long kb = 0;
      (void)absl::SimpleAtoi(
          absl::StripAsciiWhitespace(absl::StripSuffix(line.substr(6), "kB")),
          &kb);
      return kb;
    }
  }
  return 0;
}

class ConsoleSecurityTest : public ::testing::Test {
 protected:
  ConsoleSecurityTest()
      : server_([](services::ServerOptions& options) {
          options.auth_enabled = true;
          options.metrics_address = "127.0.0.1:0";
          options.console_address = "127.0.0.1:0";
          options.console_http.read_timeout = absl::Seconds(2);
          options.console_http.idle_timeout = absl::Seconds(2);
          options.console_http.max_connections = 16;
        }) {
    for (Role role :
         {Role::kAgent, Role::kPlanner, Role::kFinance, Role::kAdmin}) {
      storage::TokenRecord token;
      token.token_id = common::NewUuid();
      token.name = absl::StrCat("console-", services::RoleName(role));
      token.role = services::RoleName(role);
      const std::string secret = services::NewTokenSecret();
      token.secret_hash = services::TokenSecretHash(secret);
      storage::DbSession session(server_.db().url());
      EXPECT_TRUE(storage::InsertToken(session, token).ok());
      EXPECT_TRUE(server_.server().evidence().ReloadWith(session).ok());
      tokens_[role] = secret;
    }
    port_ = server_.server().console_port();
  }

  // The checks, grouped into a few tests below: each test starts its own
  // server and database, which costs more than the checks.
  void NoTokenOrAForgedOneOpensNoPage();
  void AWrongRoleIsRefusedTheRoleTablesPages();
  void ATokenInTheUrlIsNeverAccepted();
  void PathTraversalFindsNothing();
  void ALongQueryParameterIsRefusedByName();
  void BodiesAndSlowClientsAreBounded();
  void SignInSetsAStrictHttpOnlyCookie();

  InProcessServer server_;
  std::map<Role, std::string> tokens_;
  int port_ = 0;
};

void ConsoleSecurityTest::NoTokenOrAForgedOneOpensNoPage() {
  Connection c(port_);
  for (const char* page : {"/pools", "/pool?name=a", "/plans",
                           "/plan?id=00000000-0000-7000-8000-000000000000",
                           "/accuracy", "/cost", "/cost.csv", "/standards"}) {
    Answer a = c.Get(page);
    EXPECT_EQ(a.status, 401) << page;
    EXPECT_EQ(a.headers["www-authenticate"],
              "Bearer realm=\"placement console\"");
    EXPECT_TRUE(absl::StrContains(a.headers["content-security-policy"],
                                  "script-src 'self'"));
    EXPECT_EQ(a.headers["cache-control"], "no-store");
    EXPECT_EQ(c.Get(page, "plc_forged").status, 401) << page;
    EXPECT_EQ(c.Get(page, tokens_[Role::kAdmin] + "x").status, 401) << page;
  }
}

void ConsoleSecurityTest::AWrongRoleIsRefusedTheRoleTablesPages() {
  Connection c(port_);
  EXPECT_EQ(c.Get("/cost", tokens_[Role::kPlanner]).status, 403);
  EXPECT_EQ(c.Get("/cost.csv", tokens_[Role::kAgent]).status, 403);
  EXPECT_EQ(c.Get("/accuracy", tokens_[Role::kAgent]).status, 403);
  EXPECT_EQ(c.Get("/plans", tokens_[Role::kFinance]).status, 403);
  EXPECT_EQ(c.Get("/plan?id=00000000-0000-7000-8000-000000000000",
                  tokens_[Role::kFinance])
                .status,
            403);
  EXPECT_EQ(c.Get("/cost", tokens_[Role::kFinance]).status, 200);
  EXPECT_EQ(c.Get("/plans", tokens_[Role::kPlanner]).status, 200);
  const Answer pools = c.Get("/pools", tokens_[Role::kAgent]);
  EXPECT_EQ(pools.status, 200);
  EXPECT_TRUE(absl::StrContains(pools.body,
                                "cost per successful step (GetCostReport)"));
}

void ConsoleSecurityTest::ATokenInTheUrlIsNeverAccepted() {
  Connection c(port_);
  const std::string& admin = tokens_[Role::kAdmin];
  for (const std::string& target : {absl::StrCat("/pools?token=", admin),
                                    absl::StrCat("/pools?access_token=", admin),
                                    absl::StrCat("/pools?days=", admin)}) {
    Answer a = c.Get(target);
    EXPECT_EQ(a.status, 400) << target;
    EXPECT_FALSE(absl::StrContains(a.body, admin));
    // Not even beside a good header.
    a = c.Get(target, admin);
    EXPECT_EQ(a.status, 400) << target;
    EXPECT_FALSE(absl::StrContains(a.body, admin));
  }
  // Nor kept anywhere the operator reads.
  EXPECT_FALSE(absl::StrContains(
      testing::ScrapeMetrics(server_.server().metrics_port()), admin));
}

void ConsoleSecurityTest::PathTraversalFindsNothing() {
  Connection c(port_);
  const std::string& admin = tokens_[Role::kAdmin];
  const Answer known = c.Get("/nope", admin);
  ASSERT_EQ(known.status, 404);
  for (const char* path :
       {"/../../../../etc/passwd", "/assets/../../../../etc/passwd",
        "/assets/%2e%2e/%2e%2e/%2e%2e/etc/passwd",
        "/assets/..%2f..%2fetc%2fpasswd",
        "/assets/console.css/../../../etc/passwd", "//etc/passwd",
        "/assets/./console.css", "/pools/..", "/%2e%2e/migrations"}) {
    const Answer a = c.Get(path, admin);
    EXPECT_EQ(a.status, 404) << path;
    EXPECT_EQ(a.body, known.body) << path;
    EXPECT_FALSE(absl::StrContains(a.body, "root:")) << path;
  }
}

void ConsoleSecurityTest::ALongQueryParameterIsRefusedByName() {
  Connection c(port_);
  const Answer a = c.Get(absl::StrCat("/pools?days=", std::string(10000, '7')),
                         tokens_[Role::kAdmin]);
  EXPECT_EQ(a.status, 400);
  EXPECT_TRUE(absl::StrContains(a.body, "data-param=\"days\""));
  EXPECT_TRUE(absl::StrContains(a.body, "longer than 256 characters"));
  EXPECT_FALSE(absl::StrContains(a.body, "7777"));
  // The connection still serves.
  EXPECT_EQ(c.Get("/assets/console.css").status, 200);
  // Beyond the header limit (16 KiB) the parser refuses before the console
  // sees anything, and the connection is closed.
  Connection big(port_);
  const Answer too_big =
      big.Get(absl::StrCat("/pools?days=", std::string(100000, '7')));
  EXPECT_EQ(too_big.status, 431);
  EXPECT_TRUE(big.Closed());
}

void ConsoleSecurityTest::BodiesAndSlowClientsAreBounded() {
  // A body over the bound (4 KiB) is refused from its Content-Length.
  Connection body(port_);
  ASSERT_TRUE(body.SendRaw(
      "POST /login HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: "
      "application/x-www-form-urlencoded\r\nContent-Length: 100000\r\n\r\n"));
  EXPECT_EQ(body.Read().status, 413);
  EXPECT_TRUE(body.Closed());
  // A client that starts a request and stops is closed after the read
  // timeout (2 s here).
  Connection slow(port_);
  ASSERT_TRUE(slow.SendRaw("GET /pools HTTP/1.1\r\nHost: 12"));
  const absl::Time started = absl::Now();
  EXPECT_TRUE(slow.Closed());
  EXPECT_LT(absl::Now() - started, absl::Seconds(8));
}

TEST_F(ConsoleSecurityTest, ConnectionsBeyondTheBoundAreClosedAtOnce) {
  // Beyond the connection bound (16 here) a new one is closed at once: of
  // 20 held open, 4 at least are closed unanswered.
  std::vector<std::unique_ptr<Connection>> held;
  for (int i = 0; i < 20; ++i) {
    held.push_back(std::make_unique<Connection>(port_));
    ASSERT_TRUE(held.back()->connected());
    absl::SleepFor(absl::Milliseconds(20));  // accepted in this order
  }
  int answered = 0;
  for (auto& c : held) answered += c->Get("/assets/console.css").status == 200;
  EXPECT_LE(answered, 16);
  EXPECT_GE(answered, 12);
}

void ConsoleSecurityTest::SignInSetsAStrictHttpOnlyCookie() {
  Connection c(port_);
  const std::string form = absl::StrCat("token=", tokens_[Role::kFinance]);
  ASSERT_TRUE(c.SendRaw(absl::StrCat(
      "POST /login HTTP/1.1\r\nHost: 127.0.0.1\r\nOrigin: http://127.0.0.1\r\n"
      "Content-Type: application/x-www-form-urlencoded\r\nContent-Length: ",
      form.size(), "\r\n\r\n", form)));
  Answer a = c.Read();
  EXPECT_EQ(a.status, 303);
  const std::string cookie = a.headers["set-cookie"];
  EXPECT_TRUE(absl::StrContains(cookie, "HttpOnly"));
  EXPECT_TRUE(absl::StrContains(cookie, "SameSite=Strict"));
  // A form posted from another site's page does not sign anyone in.
  Connection other(port_);
  ASSERT_TRUE(other.SendRaw(absl::StrCat(
      "POST /login HTTP/1.1\r\nHost: 127.0.0.1\r\nOrigin: "
      "https://evil.example\r\n"
      "Content-Type: application/x-www-form-urlencoded\r\nContent-Length: ",
      form.size(), "\r\n\r\n", form)));
  const Answer refused = other.Read();
  EXPECT_EQ(refused.status, 403);
  EXPECT_EQ(refused.headers.count("set-cookie"), 0u);
}

// 2,000 made-up paths of 2,000 characters: one "unknown" series, /metrics
// a few KB larger at most, and the process's memory flat.
TEST_F(ConsoleSecurityTest, UnknownPathsCostNoMemoryOfTheirOwn) {
  const std::string padding(2000, 'p');
  // A connection serves 1,000 requests at most: a new one every 500.
  std::unique_ptr<Connection> c;
  auto unknown = [&](int i) {
    if (i % 500 == 0) c = std::make_unique<Connection>(port_);
    return c
        ->Get(absl::StrCat("/", padding, i, "?q=", i),
              i % 2 == 0 ? tokens_[Role::kAdmin] : "")
        .status;
  };
  for (int i = 0; i < 200; ++i) ASSERT_EQ(unknown(i), 404);  // warm-up
  const std::string before =
      testing::ScrapeMetrics(server_.server().metrics_port());
  const long rss_before = RssKb();
  constexpr int kPaths = 2000;
  for (int i = 200; i < 200 + kPaths; ++i) ASSERT_EQ(unknown(i), 404) << i;
  const long rss_after = RssKb();
  const std::string after =
      testing::ScrapeMetrics(server_.server().metrics_port());
  std::cout << kPaths << " unknown paths: /metrics " << before.size() << " -> "
            << after.size() << " bytes, RSS " << rss_before << " -> "
            << rss_after << " kB\n";
  EXPECT_FALSE(absl::StrContains(after, padding));
  EXPECT_TRUE(absl::StrContains(
      after,
      "placement_console_requests_total{code=\"404\",page=\"unknown\"} 2200"))
      << after.substr(after.find("placement_console_requests_total"), 400);
  int unknown_series = 0;
  for (absl::string_view line : absl::StrSplit(after, '\n')) {
    if (absl::StartsWith(line, "placement_console_requests_total{") &&
        absl::StrContains(line, "page=\"unknown\"")) {
      ++unknown_series;
    }
  }
  EXPECT_EQ(unknown_series, 1);
  EXPECT_LT(after.size(), before.size() + 4 * 1024);
#if !defined(__SANITIZE_ADDRESS__)
  // Under ASan freed memory sits in quarantine: only the plain build is
  // held to this.
  EXPECT_LT(rss_after - rss_before, 2048) << rss_before << " -> " << rss_after;
#else
  (void)rss_before;
  (void)rss_after;
#endif
}

TEST_F(ConsoleSecurityTest, TokensAndRoles) {
  NoTokenOrAForgedOneOpensNoPage();
  AWrongRoleIsRefusedTheRoleTablesPages();
  ATokenInTheUrlIsNeverAccepted();
  SignInSetsAStrictHttpOnlyCookie();
}

// A token bound to a team sees its team's plans only, as GetPlan and the
// API's listings scope it (services/auth/team_access.h): another team's
// plan is neither listed nor opened.
TEST_F(ConsoleSecurityTest, ATeamBoundTokenSeesItsTeamsPlansOnly) {
  storage::DbSession session(server_.db().url());
  auto result = std::make_shared<storage::PlanResultRecord>();
  result->response = "result";
  result->hash = std::string(32, 'r');
  std::vector<storage::PlacementRecord> plans(2);
  std::vector<const storage::PlacementRecord*> batch;
  const std::vector<std::string> teams = {"team-a", "team-b"};
  for (size_t i = 0; i < plans.size(); ++i) {
    plans[i].plan_id = common::NewTimeOrderedUuid(absl::Now());
    plans[i].team = teams[i];
    plans[i].recipe_key = "rk";
    plans[i].objective = "LOWEST_COST";
    plans[i].request = "request";
    plans[i].result = result;
    plans[i].evidence_time = absl::Now();
    plans[i].created_at = absl::Now();
    batch.push_back(&plans[i]);
  }
  ASSERT_TRUE(storage::InsertPlacements(session, batch, [](const std::string&) {
                return false;
              }).ok());
  storage::TokenRecord token;
  token.token_id = common::NewUuid();
  token.name = "console-planner-team-a";
  token.role = services::RoleName(Role::kPlanner);
  token.teams = {"team-a"};
  const std::string secret = services::NewTokenSecret();
  token.secret_hash = services::TokenSecretHash(secret);
  ASSERT_TRUE(storage::InsertToken(session, token).ok());
  ASSERT_TRUE(server_.server().evidence().ReloadWith(session).ok());

  Connection c(port_);
  Answer listed = c.Get("/plans", secret);
  ASSERT_EQ(listed.status, 200) << listed.body;
  EXPECT_TRUE(absl::StrContains(listed.body, plans[0].plan_id));
  EXPECT_FALSE(absl::StrContains(listed.body, plans[1].plan_id));
  Answer other = c.Get(absl::StrCat("/plan?id=", plans[1].plan_id), secret);
  EXPECT_EQ(other.status, 403) << other.body;
  // An unbound token of the same role lists both.
  Answer unbound = c.Get("/plans", tokens_[Role::kPlanner]);
  ASSERT_EQ(unbound.status, 200);
  EXPECT_TRUE(absl::StrContains(unbound.body, plans[0].plan_id));
  EXPECT_TRUE(absl::StrContains(unbound.body, plans[1].plan_id));
}

TEST_F(ConsoleSecurityTest, HostileRequests) {
  PathTraversalFindsNothing();
  ALongQueryParameterIsRefusedByName();
  BodiesAndSlowClientsAreBounded();
}

}  // namespace
}  // namespace placement
