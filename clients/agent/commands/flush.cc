#include <iostream>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/str_format.h"
#include "clients/agent/commands/command_support.h"
#include "clients/agent/commands/commands.h"
#include "clients/agent/uploader.h"

namespace placement::agent {

int Flush() {
  absl::StatusOr<Uploader> uploader = MakeUploader();
  if (!uploader.ok()) {
    std::cerr << "placement-agent: " << uploader.status().message() << "\n";
    return kExitUsage;
  }
  const absl::StatusOr<std::string> spool_dir = SpoolDir();
  if (!spool_dir.ok()) {
    std::cerr << "placement-agent: " << spool_dir.status().message() << "\n";
    return kExitUsage;
  }
  const FlushReport r = uploader->FlushSpool(*spool_dir, std::cerr);
  std::cout << absl::StrFormat(
      "uploaded %d, left in the spool %d, rejected %d, kept (refused, not "
      "the run's fault) %d, in progress %d, incomplete %d\n",
      r.uploaded, r.left, r.rejected, r.kept, r.in_progress, r.incomplete);
  return r.exit_code();
}

}  // namespace placement::agent
