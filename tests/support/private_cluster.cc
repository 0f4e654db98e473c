#include "tests/support/private_cluster.h"

#include <stdlib.h>
#include <sys/stat.h>

#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "tests/support/placementd_process.h"

namespace placement::testing {

PrivateCluster::PrivateCluster() {
  char dir[] = "/tmp/placement-pg-XXXXXX";
  dir_ = mkdtemp(dir);
  chmod(dir_.c_str(), 0755);  // the server runs as an unprivileged user
  Run("create");
  std::string url;
  if (Run("start", &url) == 0) {
    url_ = std::string(absl::StripTrailingAsciiWhitespace(url));
  }
}

PrivateCluster::~PrivateCluster() { Run("destroy"); }

int PrivateCluster::Run(const std::string& command, std::string* output,
                        const std::string& mode) {
  return RunCommand(absl::StrCat(SourceDir(), "/scripts/pg ", command, " ",
                                 dir_, "/cluster ", mode),
                    output);
}

}  // namespace placement::testing
