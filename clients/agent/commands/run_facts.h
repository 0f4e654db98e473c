#ifndef PLACEMENT_CLIENTS_AGENT_COMMANDS_RUN_FACTS_H_
#define PLACEMENT_CLIENTS_AGENT_COMMANDS_RUN_FACTS_H_

// What `run` knows before its command starts: its inputs read from the
// flags, the node's SKU named (never guessed) and checked against the pool,
// and the link its collectives use.

#include <string>

#include "absl/status/statusor.h"
#include "clients/agent/gpu_probe.h"
#include "clients/agent/run_record.h"
#include "clients/agent/uploader.h"
#include "placement/v1/placement.pb.h"

namespace placement::agent {

// What `run` is given: the pool, recipe and offload, read and checked.
struct RunInputs {
  std::string pool;
  v1::Recipe recipe;
  v1::Offload offload = v1::OFFLOAD_NONE;
};

// The run's inputs, or a usage error to print.
absl::StatusOr<RunInputs> ReadRunInputs();

// The facts known before the command starts: the SKU named (never guessed),
// checked against the pool.
absl::StatusOr<RunFacts> NameTheRun(const Uploader& uploader, Nvml* nvml,
                                    const std::string& nvml_problem,
                                    const RunInputs& inputs);

}  // namespace placement::agent

#endif  // PLACEMENT_CLIENTS_AGENT_COMMANDS_RUN_FACTS_H_
