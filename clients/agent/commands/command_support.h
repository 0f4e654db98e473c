#ifndef PLACEMENT_CLIENTS_AGENT_COMMANDS_COMMAND_SUPPORT_H_
#define PLACEMENT_CLIENTS_AGENT_COMMANDS_COMMAND_SUPPORT_H_

// What more than one of placement-agent's commands uses: the exit codes, the
// service's address and an uploader for it, the spool folder, the host name
// and NVML.

#include <initializer_list>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "clients/agent/gpu_probe.h"
#include "clients/agent/sku_naming.h"
#include "clients/agent/uploader.h"

namespace placement::agent {

// The exit codes main.cc's usage text explains.
inline constexpr int kExitOk = 0;
inline constexpr int kExitFailed = 1;
inline constexpr int kExitUsage = 2;
inline constexpr int kExitSpooled = 3;
inline constexpr int kExitKept = 4;

std::string ServerAddress();

// The flag's value when given, else the first environment variable set.
std::string FlagOrEnv(const std::string& flag,
                      std::initializer_list<const char*> variables);

absl::StatusOr<std::string> SpoolDir();

std::string HostName();

absl::StatusOr<Uploader> MakeUploader();

// NVML, or null with why in `problem` (for the detection's message).
std::unique_ptr<Nvml> MaybeLoadNvml(std::string* problem = nullptr);

std::string DescribeSeen(const NodeDetection& d);

}  // namespace placement::agent

#endif  // PLACEMENT_CLIENTS_AGENT_COMMANDS_COMMAND_SUPPORT_H_
