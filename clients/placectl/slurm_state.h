#ifndef PLACEMENT_CLIENTS_PLACECTL_SLURM_STATE_H_
#define PLACEMENT_CLIENTS_PLACECTL_SLURM_STATE_H_

// A Slurm partition's state as a pool's (PoolStateService.ReportPoolState),
// read from what slurmctld prints: `scontrol show job -o` and `scontrol show
// node -d -o` (one record a line, Key=Value fields; -d adds GresUsed, the
// GPUs allocated on the node, whichever partition's jobs hold them: Slurm
// does not track gres/gpu in AllocTRES unless accounting is configured to)
// and the partition's nodes
// (`sinfo -h -N -p PARTITION -o %N`). Pure: `placectl slurm report` runs the
// commands (clients/placectl/slurm_commands.cc).

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "placement/v1/pool_state.pb.h"

namespace placement::placectl {

// One `scontrol show ... -o` line: its fields by key. A value with spaces
// (a job's Command, a Reason) keeps them: a word without "=" continues the
// value before it.
using SlurmRecord = std::map<std::string, std::string>;
std::vector<SlurmRecord> ParseScontrolLines(absl::string_view text);

// GPUs in a Gres or TRES string: "gpu:a100:8(S:0)", "gres:gpu:8",
// "gres/gpu=8", "cpu=1,gres/gpu:a100=2", summed over its GPU entries; 0
// with none.
int GpusIn(absl::string_view text);

// Slurm's times: "2026-12-03T13:49:54" in the controller's time zone
// (`zone`); "Unknown", "None", "N/A" and empty are unset. Its durations:
// "[days-]hours:minutes:seconds", "minutes:seconds", "minutes"; "UNLIMITED"
// and "Partition_Limit" unset.
std::optional<absl::Time> SlurmTime(absl::string_view text,
                                    absl::TimeZone zone);
std::optional<absl::Duration> SlurmDuration(absl::string_view text);

// The state of pool `pool`, whose partition is `partition` with the nodes
// `partition_nodes`, observed `now`: GPUs of its nodes in service (not DOWN,
// DRAIN or FAIL) and allocated on them (GresUsed); its running jobs (GPUs held,
// start, submission, time limit, the plan in AdminComment's placement:plan=),
// its pending jobs in the order slurmctld will consider them (priority, then
// submission, then id; held jobs left out), and its jobs ended with a run
// (COMPLETED, FAILED, TIMEOUT, ... while slurmctld still shows them, MinJobAge)
// as finished. Jobs without a GPU are left out.
v1::PoolState SlurmPoolState(const std::string& pool,
                             const std::string& partition,
                             const std::vector<std::string>& partition_nodes,
                             const std::vector<SlurmRecord>& nodes,
                             const std::vector<SlurmRecord>& jobs,
                             absl::Time now, absl::TimeZone zone);

}  // namespace placement::placectl

#endif  // PLACEMENT_CLIENTS_PLACECTL_SLURM_STATE_H_
