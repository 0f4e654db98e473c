#ifndef PLACEMENT_CLIENTS_PLACECTL_FLAGS_H_
#define PLACEMENT_CLIENTS_PLACECTL_FLAGS_H_

#include <string>
#include <vector>

#include "absl/flags/declare.h"
#include "absl/flags/flag.h"

ABSL_DECLARE_FLAG(std::string, server);
ABSL_DECLARE_FLAG(bool, json);

// A flag of some placectl commands, in one line:
//
//   PLACECTL_FLAG(int, limit, 50, "runs list", "at most this many runs");
//
// `commands` is "|"-separated command paths ("pools create|pools update"),
// or "*" for a flag every command takes (--server). The value is read with
// absl::GetFlag(FLAGS_limit). A command refuses the flags it does not list,
// and `--help` shows its own, one a line.
#define PLACECTL_FLAG(type, name, default_value, commands, help) \
  ABSL_FLAG(type, name, default_value, help);                    \
  PLACECTL_FLAG_ALSO(name, commands, help)

// The same flag (defined once with PLACECTL_FLAG) for other commands, with
// what it means for them: --labels is a pool's labels for `pools create`,
// the labels a pool must carry for `plan`.
#define PLACECTL_FLAG_ALSO(name, commands, help)                              \
  [[maybe_unused]] static const bool PLACECTL_FLAG_CONCAT(placectl_flag_for_, \
                                                          __LINE__) =         \
      ::placement::placectl::RegisterFlag(#name, commands, help)
#define PLACECTL_FLAG_CONCAT(a, b) PLACECTL_FLAG_CONCAT_INNER(a, b)
#define PLACECTL_FLAG_CONCAT_INNER(a, b) a##b

namespace placement::placectl {

// Records that the commands in `commands` take --`name`, meaning `help`.
// Returns true (for the static initializer above).
bool RegisterFlag(const char* name, const char* commands, const char* help);

// One command: its path ("pools create"), a usage line of its operands and
// main flags, and what it does.
struct CommandInfo {
  std::string path;
  std::string usage;
  std::string summary;
};

// Parses argv against `commands`: sets the flags given (each must be one the
// command takes, or a global one), and returns the positional words in
// `args` (the command and its operands). Handles --help for placectl, a
// command group ("pools") or one command: prints it and returns 0. Returns
// -1 to go on, 0 after help, 2 after printing a usage error.
// `overview` heads `placectl --help`.
int ParseCommandLine(int argc, char** argv, const std::string& overview,
                     const std::vector<CommandInfo>& commands,
                     std::vector<std::string>* args);

// Whether `name` was given on the command line (as opposed to defaulted).
bool FlagGiven(const char* name);

// The server address: --server, else $PLACEMENT_SERVER, else localhost.
std::string ServerAddress();

}  // namespace placement::placectl

#endif  // PLACEMENT_CLIENTS_PLACECTL_FLAGS_H_
