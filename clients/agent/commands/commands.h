#ifndef PLACEMENT_CLIENTS_AGENT_COMMANDS_COMMANDS_H_
#define PLACEMENT_CLIENTS_AGENT_COMMANDS_COMMANDS_H_

// placement-agent's commands (docs/AGENT.md). Each reads its flags and
// returns the process's exit code (command_support.h).

#include <string>
#include <vector>

namespace placement::agent {

// detect: names this node's exact SKU, GPU count and NVLink state.
int Detect();

// run -- COMMAND...: runs a training command, records and uploads the run.
int Run(const std::vector<std::string>& command);

// flush: uploads every spooled run.
int Flush();

// bakeoff PLAN_ID: prints the commands of a plan's bake-off.
int BakeOff(const std::string& plan_id);

}  // namespace placement::agent

#endif  // PLACEMENT_CLIENTS_AGENT_COMMANDS_COMMANDS_H_
