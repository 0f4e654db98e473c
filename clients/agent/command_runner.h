#ifndef PLACEMENT_CLIENTS_AGENT_COMMAND_RUNNER_H_
#define PLACEMENT_CLIENTS_AGENT_COMMAND_RUNNER_H_

#include <chrono>
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

// How long a command's output is still read after it exited: a process it
// left behind in the background (`tensorboard &`) may keep the pipes open
// for ever, and the attempt is over when the command is.
inline constexpr absl::Duration kDrainAfterExit = absl::Seconds(2);

// A stdout line longer than this is no step record: it is passed through
// but not handed to `on_stdout_line` (the buffer stays bounded).
inline constexpr size_t kMaxLineBytes = 1 << 20;

// Runs `argv` (PATH is searched) in its own process group with `extra_env`
// added to the environment. Its stdout and stderr are copied to ours as they
// come; every stdout line is also handed to `on_stdout_line`. After
// `timeout` (zero: none; by the monotonic clock) the group gets SIGTERM,
// then SIGKILL 10 s later; the same when StopCommands() is called (then
// `end.preempted` is set).
// Returns once the command has exited and its output is drained (at most
// kDrainAfterExit later). A command that cannot be started ends with exit
// code 127.
CommandResult RunTrainingCommand(
    const std::vector<std::string>& argv,
    const std::vector<std::pair<std::string, std::string>>& extra_env,
    absl::Duration timeout,
    const std::function<void(absl::string_view)>& on_stdout_line);

// Asks the running command (and any started later) to stop: its process
// group gets SIGTERM, then SIGKILL after the grace period. Async-signal-safe:
// for a SIGTERM handler, so that a job's preemption reaches the command and
// the attempt is recorded as PREEMPTED.
void StopCommands();

// Whether StopCommands() was called.
bool StopRequested();

// When StopCommands() was first called, by the monotonic clock
// (steady_clock); meaningful only once StopRequested().
std::chrono::steady_clock::time_point StopRequestedAt();

}  // namespace placement::agent

#endif  // PLACEMENT_CLIENTS_AGENT_COMMAND_RUNNER_H_
