// placectl: the operator's command line for the placement service.
#include <cstdlib>
#include <iostream>
#include <set>
#include <string>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/strings/match.h"
#include "absl/strings/strip.h"
#include "absl/flags/usage.h"
#include "clients/placectl/catalog_commands.h"
#include "clients/common/channel.h"
#include "clients/placectl/cost_commands.h"
#include "clients/placectl/token_commands.h"
#include "clients/placectl/flags.h"
#include "clients/placectl/plan_commands.h"
#include "clients/placectl/run_commands.h"

ABSL_FLAG(std::string, server, "",
          "placementd address host:port (default: $PLACEMENT_SERVER, else "
          "127.0.0.1:50051)");
ABSL_FLAG(bool, json, false, "print JSON for machines instead of tables");
ABSL_FLAG(std::string, token_file, "",
          "file holding the bearer token (default: $PLACEMENT_TOKEN, "
          "$PLACEMENT_TOKEN_FILE, then ~/.config/placement/token)");
ABSL_FLAG(std::string, ca_file, "", "CA certificate (PEM): connect with TLS");
ABSL_FLAG(std::string, client_cert, "", "client certificate (PEM) for mutual TLS");
ABSL_FLAG(std::string, client_key, "", "client private key (PEM) for mutual TLS");

namespace placement::placectl {

namespace {

// Names of the flags given on the command line. (Debian's Abseil keeps
// CommandLineFlag::IsSpecifiedOnCommandLine private.)
std::set<std::string>& GivenFlags() {
  static auto* const given = new std::set<std::string>;
  return *given;
}

void RecordGivenFlags(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    absl::string_view arg = argv[i];
    if (arg == "--") break;
    if (!absl::ConsumePrefix(&arg, "--") && !absl::ConsumePrefix(&arg, "-")) {
      continue;
    }
    std::string name(arg.substr(0, arg.find('=')));
    GivenFlags().insert(name);
    if (absl::ConsumePrefix(&arg, "no")) GivenFlags().insert(std::string(arg));
  }
}

}  // namespace

bool FlagGiven(const char* name) { return GivenFlags().contains(name); }

std::string ServerAddress() {
  return clients::ServerAddress(absl::GetFlag(FLAGS_server));
}

}  // namespace placement::placectl

int main(int argc, char** argv) {
  constexpr char kUsage[] =
      "placectl [--server HOST:PORT] [--json] COMMAND\n"
      "  skus [NAME]                 the SKU catalog, or one exact SKU\n"
      "  pools list                  every pool\n"
      "  pools get NAME              one pool\n"
      "  pools create --name N --sku S --nodes N --gpus_per_node G\n"
      "               --fabric nvlink|pcie --purpose training|serving\n"
      "               --rate 2.10 [--list_price 4.10] [--quota Q]\n"
      "               [--labels team=x,region=y] [--exclusive=false]\n"
      "  pools update NAME [--quota Q] [--rate R] [...]   changes only the "
      "flags given\n"
      "  runs upload FILE|-          upload runs, one JSON BenchmarkRun a line\n"
      "  runs list [--pool P] [--recipe_key K] [--limit N]\n"
      "  runs get RUN_ID             one stored run as JSON\n"
      "  cost [--from D] [--to D] [--group_by sku,pool,day,...]\n"
      "       [--where team=x,outcome=failed,...] [--csv]   cost per "
      "successful step\n"
      "  plan [--recipe FILE] [recipe flags]   a ranked, explained placement\n"
      "  plans get PLAN_ID | accuracy          a recorded plan; prediction "
      "error per SKU\n"
      "  tokens create --role agent|planner|finance|admin --name N | revoke "
      "ID | list\n"
      "Auth: --token_file, $PLACEMENT_TOKEN, $PLACEMENT_TOKEN_FILE or "
      "~/.config/placement/token. TLS: --ca_file [--client_cert --client_key]";
  absl::SetProgramUsageMessage(kUsage);
  placement::placectl::RecordGivenFlags(argc, argv);
  std::vector<char*> positional = absl::ParseCommandLine(argc, argv);
  std::vector<std::string> args(positional.begin() + 1, positional.end());
  absl::StatusOr<std::string> token =
      placement::clients::FindToken(absl::GetFlag(FLAGS_token_file));
  if (!token.ok()) {
    std::cerr << "placectl: " << token.status().message() << "\n";
    return 2;
  }
  placement::clients::ConfigureClientSecurity(
      {*token, absl::GetFlag(FLAGS_ca_file), absl::GetFlag(FLAGS_client_cert),
       absl::GetFlag(FLAGS_client_key)});
  if (args.empty()) {
    std::cerr << "usage: " << kUsage << "\n";
    return 2;
  }
  const std::string command = args.front();
  args.erase(args.begin());
  if (command == "skus") return placement::placectl::RunSkus(args);
  if (command == "pools") return placement::placectl::RunPools(args);
  if (command == "runs") return placement::placectl::RunRuns(args);
  if (command == "tokens") return placement::placectl::RunTokens(args);
  if (command == "plan") return placement::placectl::RunPlan(args);
  if (command == "plans") return placement::placectl::RunPlans(args);
  if (command == "cost") return placement::placectl::RunCost(args);
  std::cerr << "placectl: unknown command '" << command << "'\nusage: "
            << kUsage << "\n";
  return 2;
}
