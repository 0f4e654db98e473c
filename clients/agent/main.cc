// placement-agent: names a GPU node's exact SKU and records benchmark runs
// of training commands as evidence for the placement service. See
// docs/AGENT.md.
#include <iostream>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/time/time.h"
#include "clients/agent/commands/commands.h"
#include "clients/agent/commands/flags.h"

ABSL_FLAG(std::string, server, "",
          "placementd host:port (default: $PLACEMENT_SERVER, else "
          "127.0.0.1:50051)");
ABSL_FLAG(
    std::string, token_file, "",
    "file holding the bearer token (default: $PLACEMENT_TOKEN, else "
    "$PLACEMENT_TOKEN_FILE, else ~/.config/placement/token if it exists)");
ABSL_FLAG(std::string, ca_file, "",
          "PEM CA bundle: connect with TLS (default: plaintext)");
ABSL_FLAG(std::string, spool_dir, "",
          "where runs wait for upload (default: $PLACEMENT_SPOOL_DIR, else "
          "~/.local/state/placement/spool)");
ABSL_FLAG(bool, json, false, "detect: print JSON");
ABSL_FLAG(std::string, nvml_library, "libnvidia-ml.so.1",
          "NVML library to dlopen (\"\" skips NVML)");
ABSL_FLAG(std::string, nvidia_smi, "nvidia-smi",
          "nvidia-smi binary for the fallback");
ABSL_FLAG(std::string, pool, "",
          "run: the pool this node belongs to (default: $PLACEMENT_POOL, "
          "else $SLURM_JOB_PARTITION)");
ABSL_FLAG(std::string, recipe, "", "run: recipe file (YAML or JSON)");
ABSL_FLAG(std::string, sku, "",
          "run: the node's exact catalog SKU, stated by the operator instead "
          "of detected; checked against the catalog, never guessed");
ABSL_FLAG(std::string, plan_id, "",
          "run: the plan this run carries out (default: $PLACEMENT_PLAN_ID, "
          "which the Slurm plugin sets)");
ABSL_FLAG(std::string, team, "", "run: team charged (default: the pool's)");
ABSL_FLAG(std::string, agent_id, "",
          "run: this agent's id (default: host name)");
ABSL_FLAG(int, max_retries, 2, "run: restarts of a failed command");
ABSL_FLAG(absl::Duration, attempt_timeout, absl::Hours(24),
          "run: stop an attempt after this long (SIGTERM to its process "
          "group, SIGKILL 10 s later; recorded as FAILED, timed out); 0: "
          "never");
ABSL_FLAG(std::string, offload, "none",
          "run: none|cpu|nvme, the offload the job was configured with");
ABSL_FLAG(std::string, interconnect, "",
          "run: nvlink|pcie|host-memory, the link multi-GPU collectives used "
          "(default: from detection)");
ABSL_FLAG(bool, exclusive, true, "run: the GPUs were dedicated to the run");
ABSL_FLAG(std::string, report_peak, "",
          "run: which peak memory to report: allocated, reserved or "
          "device-used (default: the largest measured; a kind that was not "
          "measured falls back to it)");
ABSL_FLAG(absl::Duration, stream_interval, absl::Seconds(2),
          "run: how often samples are streamed while the command runs");
ABSL_FLAG(absl::Duration, memory_sample_interval, absl::Seconds(1),
          "run: how often NVML memory is sampled");
ABSL_FLAG(int, upload_attempts, 6,
          "calls per upload before leaving it in the spool (UNAVAILABLE is "
          "retried with jittered exponential backoff)");
ABSL_FLAG(absl::Duration, backoff_initial, absl::Milliseconds(250),
          "first backoff delay (it doubles, up to 10 s)");
ABSL_FLAG(absl::Duration, upload_after_stop, absl::Seconds(20),
          "run: once told to stop (SIGTERM, SIGINT), how long after the "
          "signal the agent may spend uploading before it leaves the run in "
          "the spool and exits 3 (Slurm kills a job KillWait, 30 s by "
          "default, after its SIGTERM); the run is spooled before any upload");

int main(int argc, char** argv) {
  constexpr char kUsage[] =
      "placement-agent [flags] COMMAND\n"
      "  detect                    name this node's exact SKU, GPU count and "
      "NVLink state\n"
      "  run --pool P --recipe FILE [--sku S] [--plan_id ID] [--report_peak K] "
      "-- COMMAND...\n"
      "                            run a training command, record and upload "
      "the run\n"
      "  flush                     upload every spooled run\n"
      "  bakeoff PLAN_ID           print the commands of a plan's bake-off\n"
      "Exit codes: 0 done; 1 the command failed / the node cannot be named / "
      "a run was refused as invalid; 2 usage; 3 spooled, not uploaded (run "
      "flush "
      "later); 4 kept in the spool: the service refused the upload for a "
      "reason not the run's (token, server fault), or a sample is missing.";
  absl::SetProgramUsageMessage(kUsage);
  std::vector<char*> positional = absl::ParseCommandLine(argc, argv);
  std::vector<std::string> args(positional.begin() + 1, positional.end());
  if (args.empty()) {
    std::cerr << "usage: " << kUsage << "\n";
    return 2;
  }
  const std::string command = args.front();
  args.erase(args.begin());
  using namespace placement::agent;  // NOLINT
  if (command == "detect" && args.empty()) return Detect();
  if (command == "run") return Run(args);
  if (command == "flush" && args.empty()) return Flush();
  if (command == "bakeoff" && args.size() == 1) return BakeOff(args[0]);
  std::cerr << "usage: " << kUsage << "\n";
  return 2;
}
