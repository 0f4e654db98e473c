#ifndef PLACEMENT_TESTS_SUPPORT_PLACEMENTD_PROCESS_H_
#define PLACEMENT_TESTS_SUPPORT_PLACEMENTD_PROCESS_H_

#include <grpcpp/grpcpp.h>
#include <sys/types.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace placement::testing {

// A real placementd process on loopback (free ports), for end-to-end tests.
// The destructor kills it if it is still running.
class PlacementdProcess {
 public:
  // Starts the placementd built with the tests against `database_url` and
  // waits until it listens (not until it is SERVING). Auth is off unless
  // `extra_args` says otherwise (e.g. "--auth=true").
  static absl::StatusOr<std::unique_ptr<PlacementdProcess>> Start(
      const std::string& database_url,
      const std::vector<std::string>& extra_args = {},
      std::shared_ptr<grpc::ChannelCredentials> credentials = nullptr);
  ~PlacementdProcess();

  int port() const { return port_; }
  int metrics_port() const { return metrics_port_; }
  std::string address() const;
  std::shared_ptr<grpc::Channel> channel() const { return channel_; }
  pid_t pid() const { return pid_; }

  // Polls grpc.health.v1 until it reports `serving` (true: SERVING) for
  // `service` ("" is the server as a whole) or `timeout` passes; returns
  // whether it did.
  bool WaitForHealth(bool serving, absl::Duration timeout,
                     const std::string& service = "") const;

  // Sends `signal` and waits up to `timeout` for the exit; returns the exit
  // code (128 + signal if killed by one), or -1 if it did not exit in time.
  int Stop(int signal, absl::Duration timeout);

  // The last lines placementd wrote to stderr.
  std::string LogTail() const;

 private:
  PlacementdProcess() = default;

  pid_t pid_ = -1;
  int port_ = 0;
  int metrics_port_ = 0;
  std::string work_dir_;
  std::shared_ptr<grpc::Channel> channel_;
};

// Runs a command line through /bin/sh; returns its exit code and puts its
// stdout into `output` when given.
int RunCommand(const std::string& command, std::string* output = nullptr);

// The placementd binary the tests were built with.
std::string PlacementdPath();
// The project's source folder (for scripts/).
std::string SourceDir();

}  // namespace placement::testing

#endif  // PLACEMENT_TESTS_SUPPORT_PLACEMENTD_PROCESS_H_
