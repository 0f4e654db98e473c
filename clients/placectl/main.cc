// placectl: the operator's command line for the placement service.
#include <iostream>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "clients/common/channel.h"
#include "clients/placectl/bakeoff_commands.h"
#include "clients/placectl/catalog_commands.h"
#include "clients/placectl/cost_commands.h"
#include "clients/placectl/eval_criteria_commands.h"
#include "clients/placectl/flags.h"
#include "clients/placectl/plan_commands.h"
#include "clients/placectl/pool_state_commands.h"
#include "clients/placectl/run_commands.h"
#include "clients/placectl/standard_commands.h"
#include "clients/placectl/token_commands.h"

// --server and --json: clients/placectl/flags.cc.
PLACECTL_FLAG(std::string, token_file, "", "*",
              "file holding the bearer token (default: $PLACEMENT_TOKEN, "
              "$PLACEMENT_TOKEN_FILE, then ~/.config/placement/token)");
PLACECTL_FLAG(std::string, ca_file, "", "*",
              "CA certificate (PEM): connect with TLS (default: "
              "$PLACEMENT_CA_FILE)");
PLACECTL_FLAG(std::string, client_cert, "", "*",
              "client certificate (PEM) for mutual TLS (default: "
              "$PLACEMENT_CLIENT_CERT)");
PLACECTL_FLAG(std::string, client_key, "", "*",
              "client private key (PEM) for mutual TLS (default: "
              "$PLACEMENT_CLIENT_KEY)");
PLACECTL_FLAG(absl::Duration, rpc_timeout, absl::Seconds(15), "*",
              "give up on a call after this long, e.g. 300ms or 15s (exit 1, "
              "DEADLINE_EXCEEDED)");

namespace {

constexpr char kOverview[] =
    "placectl [--server HOST:PORT] [--json] [--rpc_timeout 15s] COMMAND\n"
    "Auth: --token_file, $PLACEMENT_TOKEN, $PLACEMENT_TOKEN_FILE or "
    "~/.config/placement/token. TLS: --ca_file [--client_cert --client_key]\n"
    "Exit: 0 done, 1 the server refused or did not answer, 2 usage, 3 plan: "
    "no pool can take the recipe\n"
    "Commands:";

// Every command, for parsing and --help; each one's flags are declared
// beside its code with PLACECTL_FLAG.
const std::vector<placement::placectl::CommandInfo>& Commands() {
  static const auto* const commands =
      new std::vector<placement::placectl::CommandInfo>{
          {"skus", "skus [NAME]", "the SKU catalog, or one exact SKU"},
          {"pools list", "pools list", "every pool"},
          {"pools get", "pools get NAME", "one pool"},
          {"pools create",
           "pools create --name N --sku S --fabric nvlink|pcie --rate R ...",
           "a new pool"},
          {"pools update", "pools update NAME --FIELD VALUE ...",
           "changes only the fields of the flags given"},
          {"pools state", "pools state NAME [--gpu_counts 1,8]",
           "a pool's reported state, its history, and when a job would "
           "start"},
          {"pools report", "pools report FILE|-",
           "reports pool states, one JSON PoolState a line"},
          {"slurm report", "slurm report [--interval 30s]",
           "reports each pool's Slurm partition (scontrol and sinfo on this "
           "host), once or every --interval"},
          {"runs upload", "runs upload FILE|DIR|-",
           "uploads runs, one JSON BenchmarkRun a line (a directory: its "
           "*.jsonl and *.json files)"},
          {"runs list", "runs list [--pool P] [--recipe_key K] [--limit N]",
           "stored runs, newest first"},
          {"runs get", "runs get RUN_ID", "one stored run as JSON"},
          {"cost", "cost [--from D] [--to D] [--group_by ...] [--where ...]",
           "cost per successful step (docs/FINANCE.md)"},
          {"plan", "plan [--recipe FILE] [recipe flags]",
           "a ranked, explained placement"},
          {"plans get", "plans get PLAN_ID", "a recorded plan"},
          {"bakeoff", "bakeoff PLAN_ID status",
           "a plan's bake-off: progress, then its verdict"},
          {"plans accuracy", "plans accuracy [--since T] [--until T]",
           "prediction error per SKU"},
          {"standards list", "standards list [--all]",
           "active standards (--all: retired ones too), newest first"},
          {"standards get", "standards get ID", "one standard"},
          {"standards write",
           "standards write --plan PLAN --pool POOL --reason TEXT",
           "a standard, proven by the plan's bake-off and eval"},
          {"standards retire", "standards retire ID --reason TEXT",
           "retires a standard: plans stop applying it"},
          {"tokens create", "tokens create --role R --name N",
           "a new bearer token, printed once"},
          {"tokens revoke", "tokens revoke TOKEN_ID", "revokes a token"},
          {"tokens list", "tokens list", "every token (never its secret)"},
          {"eval-criteria list", "eval-criteria list",
           "what counts as a passing eval, per pool or label"},
          {"eval-criteria set",
           "eval-criteria set NAME (--pool P | --label K=V) --metric M "
           "[--min_score X] [--max_score Y]",
           "declares (or replaces) an eval criterion"},
          {"eval-criteria delete", "eval-criteria delete NAME",
           "deletes an eval criterion"},
      };
  return *commands;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args;
  if (const int code = placement::placectl::ParseCommandLine(
          argc, argv, kOverview, Commands(), &args);
      code >= 0) {
    return code;
  }
  absl::StatusOr<std::string> token =
      placement::clients::FindToken(absl::GetFlag(FLAGS_token_file));
  if (!token.ok()) {
    std::cerr << "placectl: " << token.status().message() << "\n";
    return 2;
  }
  placement::clients::ConfigureClientSecurity(
      {*token, absl::GetFlag(FLAGS_ca_file), absl::GetFlag(FLAGS_client_cert),
       absl::GetFlag(FLAGS_client_key)});
  const absl::Duration rpc_timeout = absl::GetFlag(FLAGS_rpc_timeout);
  if (rpc_timeout <= absl::ZeroDuration()) {
    std::cerr << "placectl: --rpc_timeout: expected a positive duration like "
                 "500ms or 15s\n";
    return 2;
  }
  placement::clients::SetDefaultCallTimeout(absl::ToChronoMilliseconds(
      absl::Ceil(rpc_timeout, absl::Milliseconds(1))));
  if (args.empty()) {
    std::cerr << "usage: " << kOverview << " (placectl --help lists them)\n";
    return 2;
  }
  const std::string command = args.front();
  args.erase(args.begin());
  if (command == "skus") return placement::placectl::RunSkus(args);
  if (command == "pools") return placement::placectl::RunPools(args);
  if (command == "slurm") return placement::placectl::RunSlurm(args);
  if (command == "runs") return placement::placectl::RunRuns(args);
  if (command == "tokens") return placement::placectl::RunTokens(args);
  if (command == "eval-criteria") {
    return placement::placectl::RunEvalCriteria(args);
  }
  if (command == "plan") return placement::placectl::RunPlan(args);
  if (command == "plans") return placement::placectl::RunPlans(args);
  if (command == "bakeoff") return placement::placectl::RunBakeOff(args);
  if (command == "standards") {
    return placement::placectl::RunStandards(args);
  }
  if (command == "cost") return placement::placectl::RunCost(args);
  std::cerr << "placectl: unknown command '" << command
            << "' (placectl --help lists them)\n";
  return 2;
}
