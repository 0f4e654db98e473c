#include "clients/agent/commands/command_support.h"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "clients/agent/commands/flags.h"
#include "clients/agent/spool.h"
#include "clients/common/channel.h"

namespace placement::agent {

std::string ServerAddress() {
  return clients::ServerAddress(absl::GetFlag(FLAGS_server));
}

std::string FlagOrEnv(const std::string& flag,
                      std::initializer_list<const char*> variables) {
  if (!flag.empty()) return flag;
  for (const char* name : variables) {
    const char* value = std::getenv(name);
    if (value != nullptr && *value != '\0') return value;
  }
  return "";
}

absl::StatusOr<std::string> SpoolDir() {
  const std::string dir = absl::GetFlag(FLAGS_spool_dir);
  if (!dir.empty()) return dir;
  return DefaultSpoolDir();
}

std::string HostName() {
  char name[256] = {};
  if (gethostname(name, sizeof(name) - 1) != 0 || name[0] == '\0') {
    return "unknown-host";
  }
  return name;
}

absl::StatusOr<Uploader> MakeUploader() {
  absl::StatusOr<std::string> token =
      ResolveToken(absl::GetFlag(FLAGS_token_file));
  if (!token.ok()) return token.status();
  absl::StatusOr<Connection> connection =
      Connection::Make(ServerAddress(), *token, absl::GetFlag(FLAGS_ca_file));
  if (!connection.ok()) return connection.status();
  Backoff backoff;
  backoff.attempts = std::max(1, absl::GetFlag(FLAGS_upload_attempts));
  backoff.initial = absl::GetFlag(FLAGS_backoff_initial);
  return Uploader(*std::move(connection), backoff);
}

std::unique_ptr<Nvml> MaybeLoadNvml(std::string* problem) {
  const std::string library = absl::GetFlag(FLAGS_nvml_library);
  if (library.empty()) {
    if (problem != nullptr) *problem = "not tried: --nvml_library is empty";
    return nullptr;
  }
  absl::StatusOr<std::unique_ptr<Nvml>> nvml = LoadNvml(library);
  if (!nvml.ok()) {
    if (problem != nullptr) *problem = std::string(nvml.status().message());
    return nullptr;
  }
  return *std::move(nvml);
}

std::string DescribeSeen(const NodeDetection& d) {
  std::vector<std::string> seen;
  for (size_t i = 0; i < d.gpus.size(); ++i) {
    seen.push_back(absl::StrCat(
        "GPU ", i, ": '", d.gpus[i].name, "' ", d.gpus[i].memory_mib, " MiB, ",
        d.gpus[i].nvlink_active_links, " NVLink links active"));
  }
  return absl::StrJoin(seen, "\n");
}

}  // namespace placement::agent
