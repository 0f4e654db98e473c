#ifndef PLACEMENT_CLIENTS_PLACECTL_FLAGS_H_
#define PLACEMENT_CLIENTS_PLACECTL_FLAGS_H_

#include <string>

#include "absl/flags/declare.h"

ABSL_DECLARE_FLAG(std::string, server);
ABSL_DECLARE_FLAG(bool, json);

namespace placement::placectl {

// Whether `name` was given on the command line (as opposed to defaulted).
bool FlagGiven(const char* name);

// The server address: --server, else $PLACEMENT_SERVER, else localhost.
std::string ServerAddress();

}  // namespace placement::placectl

#endif  // PLACEMENT_CLIENTS_PLACECTL_FLAGS_H_
