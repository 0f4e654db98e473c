#ifndef PLACEMENT_CLIENTS_PLACECTL_POOL_STATE_COMMANDS_H_
#define PLACEMENT_CLIENTS_PLACECTL_POOL_STATE_COMMANDS_H_

#include <string>
#include <vector>

namespace placement::placectl {

// `placectl pools state NAME [--gpus 1,8]`: a pool's last reported state,
// what its reports taught, and when a new job would start.
int RunPoolState(const std::vector<std::string>& args);

// `placectl pools report FILE|-`: reports pool states, one JSON
// placement.v1.PoolState a line (or one in the whole file).
int RunPoolReport(const std::vector<std::string>& args);

// `placectl slurm report [--interval 30s]`: reports the state of each pool's
// Slurm partition (its label slurm-partition, else its name), read from
// scontrol and sinfo on this host; once, or every --interval.
int RunSlurm(const std::vector<std::string>& args);

}  // namespace placement::placectl

#endif  // PLACEMENT_CLIENTS_PLACECTL_POOL_STATE_COMMANDS_H_
