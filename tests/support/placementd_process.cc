#include "tests/support/placementd_process.h"

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "grpc/health/v1/health.grpc.pb.h"

namespace placement::testing {

std::string PlacementdPath() { return PLACEMENT_TEST_PLACEMENTD; }
std::string SourceDir() { return PLACEMENT_TEST_SOURCE_DIR; }

int RunCommand(const std::string& command, std::string* output) {
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return -1;
  char buffer[4096];
  size_t n;
  while ((n = fread(buffer, 1, sizeof(buffer), pipe)) > 0) {
    if (output != nullptr) output->append(buffer, n);
  }
  const int status = pclose(pipe);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

absl::StatusOr<std::unique_ptr<PlacementdProcess>> PlacementdProcess::Start(
    const std::string& database_url, const std::vector<std::string>& extra_args,
    std::shared_ptr<grpc::ChannelCredentials> credentials) {
  std::unique_ptr<PlacementdProcess> process(new PlacementdProcess);
  char dir_template[] = "/tmp/placementd-test-XXXXXX";
  if (mkdtemp(dir_template) == nullptr) {
    return absl::InternalError("mkdtemp failed");
  }
  process->work_dir_ = dir_template;
  const std::string port_file = process->work_dir_ + "/ports";
  const std::string log_file = process->work_dir_ + "/placementd.log";

  std::vector<std::string> args = {
      PlacementdPath(), absl::StrCat("--database_url=", database_url),
      "--listen=127.0.0.1:0", "--metrics_listen=127.0.0.1:0",
      absl::StrCat("--port_file=", port_file)};
  // Auth has tests of its own (tests/security); elsewhere it is off unless a
  // test asks for it.
  const bool auth_given = std::any_of(
      extra_args.begin(), extra_args.end(),
      [](const std::string& a) { return a.rfind("--auth", 0) == 0; });
  if (!auth_given) args.push_back("--auth=false");
  // The fleet model keeps its first fit (of the evidence at start) unless a
  // test asks for re-fits: what a plan says must not depend on how long the
  // test has run. A later flag in `extra_args` wins.
  args.push_back("--fleet_refit_seconds=86400");
  args.insert(args.end(), extra_args.begin(), extra_args.end());

  const pid_t pid = fork();
  if (pid < 0) return absl::InternalError("fork failed");
  if (pid == 0) {
    const int log = open(log_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (log >= 0) {
      dup2(log, STDERR_FILENO);
      dup2(log, STDOUT_FILENO);
    }
    std::vector<char*> argv;
    for (std::string& arg : args) argv.push_back(arg.data());
    argv.push_back(nullptr);
    execv(argv[0], argv.data());
    _exit(127);
  }
  process->pid_ = pid;

  const absl::Time deadline = absl::Now() + absl::Seconds(30);
  while (absl::Now() < deadline) {
    std::ifstream ports(port_file);
    if (ports >> process->port_ >> process->metrics_port_) break;
    int status;
    if (waitpid(pid, &status, WNOHANG) == pid) {
      process->pid_ = -1;
      return absl::InternalError(
          absl::StrCat("placementd exited early:\n", process->LogTail()));
    }
    absl::SleepFor(absl::Milliseconds(20));
  }
  if (process->port_ == 0) {
    return absl::DeadlineExceededError("placementd did not start listening");
  }
  if (credentials == nullptr) credentials = grpc::InsecureChannelCredentials();
  process->channel_ = grpc::CreateChannel(process->address(), credentials);
  return process;
}

PlacementdProcess::~PlacementdProcess() {
  if (pid_ > 0) Stop(SIGKILL, absl::Seconds(10));
  if (!work_dir_.empty()) RunCommand(absl::StrCat("rm -rf '", work_dir_, "'"));
}

std::string PlacementdProcess::address() const {
  return absl::StrCat("127.0.0.1:", port_);
}

bool PlacementdProcess::WaitForHealth(bool serving, absl::Duration timeout,
                                      const std::string& service) const {
  auto stub = grpc::health::v1::Health::NewStub(channel_);
  const auto want = serving
                        ? grpc::health::v1::HealthCheckResponse::SERVING
                        : grpc::health::v1::HealthCheckResponse::NOT_SERVING;
  const absl::Time deadline = absl::Now() + timeout;
  while (absl::Now() < deadline) {
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() +
                         std::chrono::seconds(2));
    grpc::health::v1::HealthCheckRequest request;
    request.set_service(service);
    grpc::health::v1::HealthCheckResponse response;
    if (stub->Check(&context, request, &response).ok() &&
        response.status() == want) {
      return true;
    }
    absl::SleepFor(absl::Milliseconds(50));
  }
  return false;
}

int PlacementdProcess::Stop(int signal, absl::Duration timeout) {
  if (pid_ <= 0) return -1;
  kill(pid_, signal);
  const absl::Time deadline = absl::Now() + timeout;
  while (absl::Now() < deadline) {
    int status;
    if (waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      if (WIFEXITED(status)) return WEXITSTATUS(status);
      return 128 + WTERMSIG(status);
    }
    absl::SleepFor(absl::Milliseconds(20));
  }
  return -1;
}

std::string PlacementdProcess::LogTail() const {
  std::ifstream log(work_dir_ + "/placementd.log");
  std::stringstream text;
  text << log.rdbuf();
  std::string all = text.str();
  return all.size() > 4000 ? all.substr(all.size() - 4000) : all;
}

}  // namespace placement::testing
