#ifndef PLACEMENT_CLIENTS_AGENT_COMMAND_RUNNER_H_
#define PLACEMENT_CLIENTS_AGENT_COMMAND_RUNNER_H_

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "clients/agent/run_record.h"

namespace placement::agent {

struct CommandResult {
  AttemptEnd end;
  // The last 64 KiB of what the command wrote (stdout and stderr), for
  // classifying how it ended.
  std::string output_tail;
};

// Runs `argv` (PATH is searched) in its own process group with `extra_env`
// added to the environment. Its stdout and stderr are copied to ours as they
// come; every stdout line is also handed to `on_stdout_line`. After
// `timeout` (zero: none) the group gets SIGTERM, then SIGKILL 10 s later.
// A command that cannot be started ends with exit code 127.
CommandResult RunTrainingCommand(
    const std::vector<std::string>& argv,
    const std::vector<std::pair<std::string, std::string>>& extra_env,
    absl::Duration timeout,
    const std::function<void(absl::string_view)>& on_stdout_line);

}  // namespace placement::agent

#endif  // PLACEMENT_CLIENTS_AGENT_COMMAND_RUNNER_H_
