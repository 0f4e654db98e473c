#ifndef PLACEMENT_CLIENTS_AGENT_SPOOL_H_
#define PLACEMENT_CLIENTS_AGENT_SPOOL_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/optional.h"
#include "placement/v1/telemetry.pb.h"

namespace placement::agent {

// The local, append-only record of runs not yet acknowledged by the
// service, so that no measurement is lost when it is unreachable. One
// folder per run, named by its run id (docs/AGENT.md):
//
//   <spool>/<run_id>/lock           flock()ed by the process recording it
//   <spool>/<run_id>/samples.jsonl  one StepSample (proto JSON) a line
//   <spool>/<run_id>/run.pb         the finished BenchmarkRun, written once
//
// The Python RunRecorder writes the same layout, so either can flush the
// other's runs. A run folder disappears once the service has committed its
// samples and acknowledged its summary.
class SpoolRun {
 public:
  ~SpoolRun();
  SpoolRun(const SpoolRun&) = delete;
  SpoolRun& operator=(const SpoolRun&) = delete;

  // Creates the folder of a new run (and `spool_dir` if needed) and locks
  // it. AlreadyExists if the run id is taken.
  static absl::StatusOr<std::unique_ptr<SpoolRun>> Create(
      const std::string& spool_dir, const std::string& run_id);

  // Opens and locks a spooled run. Unavailable while another process
  // (a run still in progress) holds its lock.
  static absl::StatusOr<std::unique_ptr<SpoolRun>> Open(
      const std::string& spool_dir, const std::string& run_id);

  const std::string& run_id() const { return run_id_; }
  const std::string& dir() const { return dir_; }

  // Appends samples and fsyncs them before returning.
  absl::Status AppendSamples(const std::vector<v1::StepSample>& samples);

  // Every complete sample line, in file order. A torn last line (the
  // recorder died mid-write) is ignored.
  absl::StatusOr<std::vector<v1::StepSample>> ReadSamples() const;

  // Stores the summary's bytes once (write, fsync, rename): a re-upload
  // sends exactly what was first built. AlreadyExists if one is stored.
  absl::Status WriteRun(const v1::BenchmarkRun& run);

  // The stored summary, nullopt if the run has none (still in progress, or
  // its recorder died).
  absl::StatusOr<absl::optional<v1::BenchmarkRun>> ReadRun() const;

  // Deletes the run's folder (after the service acknowledged everything).
  absl::Status Remove();

  // Moves the folder to <spool>/rejected/ with `why` in rejected.txt, for
  // runs the service refused as invalid (a retry would be refused again).
  absl::Status Reject(const std::string& why);

 private:
  SpoolRun(std::string spool_dir, std::string run_id, int lock_fd);

  std::string spool_dir_;
  std::string run_id_;
  std::string dir_;
  int lock_fd_;
};

// The run ids spooled in `spool_dir`, sorted (empty if it does not exist).
std::vector<std::string> ListSpooledRuns(const std::string& spool_dir);

// The default spool folder: $PLACEMENT_SPOOL_DIR, else
// $XDG_STATE_HOME/placement/spool, else ~/.local/state/placement/spool with
// ~ from $HOME or, when unset, the passwd entry. Never a shared folder:
// FailedPrecondition when there is no home.
absl::StatusOr<std::string> DefaultSpoolDir();

// OK when `spool_dir` does not exist yet, or is a directory owned by the
// effective user and writable by no group or other user. PermissionDenied
// otherwise: its runs would be uploaded with this user's token. Create and
// Open check it.
absl::Status CheckSpoolDir(const std::string& spool_dir);

}  // namespace placement::agent

#endif  // PLACEMENT_CLIENTS_AGENT_SPOOL_H_
