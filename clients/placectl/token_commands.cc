#include "clients/placectl/token_commands.h"

#include <iostream>

#include "absl/flags/declare.h"
#include "absl/flags/flag.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/time/time.h"
#include "clients/common/channel.h"
#include "clients/common/rpc_errors.h"
#include "clients/common/table.h"
#include "clients/placectl/flags.h"
#include "clients/placectl/json.h"
#include "placement/v1/catalog.grpc.pb.h"

ABSL_DECLARE_FLAG(std::string, name);
ABSL_DECLARE_FLAG(std::string, team);
PLACECTL_FLAG_ALSO(name, "tokens create",
                   "the token's name, e.g. the host or team that uses it");
PLACECTL_FLAG_ALSO(team, "tokens create",
                   "bind the token to these teams (comma-separated): it then "
                   "plans, uploads and reads for them only; unset: every team");
PLACECTL_FLAG(std::string, role, "", "tokens create",
              "agent, planner, finance or admin");

namespace placement::placectl {
namespace {

using clients::ContextWithDeadline;
using clients::DescribeError;

std::string Time(const google::protobuf::Timestamp& t) {
  if (t.seconds() == 0) return "-";
  return absl::FormatTime("%Y-%m-%d %H:%M", absl::FromUnixSeconds(t.seconds()),
                          absl::UTCTimeZone());
}

int Fail(const grpc::Status& status) {
  std::cerr << "placectl: " << DescribeError(status) << "\n";
  return 1;
}

// `tokens create`: the secret alone on stdout (or the JSON answer).
int CreateToken(v1::CatalogService::Stub& stub) {
  v1::CreateTokenRequest request;
  request.set_name(absl::GetFlag(FLAGS_name));
  v1::Role role = v1::ROLE_UNSPECIFIED;
  if (!v1::Role_Parse(absl::StrCat("ROLE_", absl::AsciiStrToUpper(
                                                absl::GetFlag(FLAGS_role))),
                      &role)) {
    std::cerr << "placectl: --role must be agent, planner, finance or admin\n";
    return 2;
  }
  request.set_role(role);
  for (absl::string_view team :
       absl::StrSplit(absl::GetFlag(FLAGS_team), ',', absl::SkipWhitespace())) {
    request.add_teams(std::string(absl::StripAsciiWhitespace(team)));
  }
  v1::CreateTokenResponse response;
  grpc::Status status =
      stub.CreateToken(ContextWithDeadline().get(), request, &response);
  if (!status.ok()) return Fail(status);
  if (absl::GetFlag(FLAGS_json)) {
    std::cout << ToJson(response);
  } else {
    // The secret alone on stdout, so that it can be piped to a file.
    std::cout << response.secret() << "\n";
    std::cerr << "created " << v1::Role_Name(response.token().role())
              << " token " << response.token().token_id()
              << (response.token().teams().empty()
                      ? " for every team"
                      : absl::StrCat(
                            " bound to ",
                            absl::StrJoin(response.token().teams(), ", ")))
              << "; its secret is shown only now\n";
  }
  return 0;
}

int RevokeToken(v1::CatalogService::Stub& stub, const std::string& token_id) {
  v1::RevokeTokenRequest request;
  request.set_token_id(token_id);
  v1::RevokeTokenResponse response;
  grpc::Status status =
      stub.RevokeToken(ContextWithDeadline().get(), request, &response);
  if (!status.ok()) return Fail(status);
  std::cout << "revoked " << response.token().token_id() << " ("
            << response.token().name() << ")\n";
  return 0;
}

int ListTokens(v1::CatalogService::Stub& stub) {
  v1::ListTokensResponse all;
  std::string page;
  do {
    v1::ListTokensRequest request;
    request.set_page_token(page);
    v1::ListTokensResponse response;
    grpc::Status status =
        stub.ListTokens(ContextWithDeadline().get(), request, &response);
    if (!status.ok()) return Fail(status);
    for (const auto& token : response.tokens()) *all.add_tokens() = token;
    page = response.next_page_token();
  } while (!page.empty());
  if (absl::GetFlag(FLAGS_json)) {
    std::cout << ToJson(all);
    return 0;
  }
  clients::Table table(
      {"TOKEN", "NAME", "ROLE", "TEAMS", "CREATED (UTC)", "REVOKED"});
  for (const v1::ApiToken& token : all.tokens()) {
    table.AddRow(
        {token.token_id(), token.name(),
         std::string(absl::StripPrefix(v1::Role_Name(token.role()), "ROLE_")),
         token.teams().empty() ? "(all)" : absl::StrJoin(token.teams(), ","),
         Time(token.create_time()), Time(token.revoke_time())});
  }
  table.Print(std::cout);
  return 0;
}

}  // namespace

int RunTokens(const std::vector<std::string>& args) {
  auto stub =
      v1::CatalogService::NewStub(clients::MakeChannel(ServerAddress()));
  if (args.size() == 1 && args[0] == "create") return CreateToken(*stub);
  if (args.size() == 2 && args[0] == "revoke")
    return RevokeToken(*stub, args[1]);
  if (args.size() == 1 && args[0] == "list") return ListTokens(*stub);
  std::cerr << "usage: placectl tokens create --role "
               "agent|planner|finance|admin --name N [--team T1,T2] | revoke "
               "TOKEN_ID | list\n";
  return 2;
}

}  // namespace placement::placectl
