#ifndef PLACEMENT_CLIENTS_AGENT_COMMANDS_FLAGS_H_
#define PLACEMENT_CLIENTS_AGENT_COMMANDS_FLAGS_H_

// placement-agent's flags, defined and parsed in main.cc, read by the
// commands.

#include <string>

#include "absl/flags/declare.h"
#include "absl/time/time.h"

ABSL_DECLARE_FLAG(std::string, server);
ABSL_DECLARE_FLAG(std::string, token_file);
ABSL_DECLARE_FLAG(std::string, ca_file);
ABSL_DECLARE_FLAG(std::string, spool_dir);
ABSL_DECLARE_FLAG(bool, json);
ABSL_DECLARE_FLAG(std::string, nvml_library);
ABSL_DECLARE_FLAG(std::string, nvidia_smi);
ABSL_DECLARE_FLAG(std::string, pool);
ABSL_DECLARE_FLAG(std::string, recipe);
ABSL_DECLARE_FLAG(std::string, sku);
ABSL_DECLARE_FLAG(std::string, plan_id);
ABSL_DECLARE_FLAG(std::string, team);
ABSL_DECLARE_FLAG(std::string, agent_id);
ABSL_DECLARE_FLAG(int, max_retries);
ABSL_DECLARE_FLAG(absl::Duration, attempt_timeout);
ABSL_DECLARE_FLAG(std::string, offload);
ABSL_DECLARE_FLAG(std::string, interconnect);
ABSL_DECLARE_FLAG(bool, exclusive);
ABSL_DECLARE_FLAG(std::string, report_peak);
ABSL_DECLARE_FLAG(absl::Duration, stream_interval);
ABSL_DECLARE_FLAG(absl::Duration, memory_sample_interval);
ABSL_DECLARE_FLAG(int, upload_attempts);
ABSL_DECLARE_FLAG(absl::Duration, backoff_initial);
ABSL_DECLARE_FLAG(absl::Duration, upload_after_stop);

#endif  // PLACEMENT_CLIENTS_AGENT_COMMANDS_FLAGS_H_
