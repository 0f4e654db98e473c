#include "clients/agent/command_runner.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>

#include "absl/strings/str_cat.h"

extern char** environ;

namespace placement::agent {
namespace {

using SteadyClock = std::chrono::steady_clock;

constexpr size_t kTailBytes = 64 * 1024;
constexpr SteadyClock::duration kKillGrace = std::chrono::seconds(10);

volatile sig_atomic_t stop_requested = 0;
// CLOCK_MONOTONIC (steady_clock's clock) at the first stop request, in
// nanoseconds; 0 before. Lock-free, so a signal handler may set it.
std::atomic<int64_t> stop_requested_ns{0};
static_assert(std::atomic<int64_t>::is_always_lock_free);

void WriteFully(int fd, const char* data, size_t size) {
  while (size > 0) {
    const ssize_t n = write(fd, data, size);
    if (n < 0) {
      if (errno == EINTR) continue;
      return;
    }
    data += n;
    size -= static_cast<size_t>(n);
  }
}

// argv and envp for execvpe, built before fork(): between fork and exec
// only async-signal-safe calls are allowed (gRPC has threads).
struct ExecArgs {
  std::vector<std::string> env_strings;
  std::vector<std::string> args;
  std::vector<char*> envp;
  std::vector<char*> argp;
};

void BuildExecArgs(
    const std::vector<std::string>& argv,
    const std::vector<std::pair<std::string, std::string>>& extra_env,
    ExecArgs& exec) {
  for (char** e = environ; *e != nullptr; ++e) {
    exec.env_strings.emplace_back(*e);
  }
  for (const auto& [name, value] : extra_env) {
    exec.env_strings.push_back(absl::StrCat(name, "=", value));
  }
  for (std::string& e : exec.env_strings) exec.envp.push_back(e.data());
  exec.envp.push_back(nullptr);
  exec.args = argv;
  for (std::string& a : exec.args) exec.argp.push_back(a.data());
  exec.argp.push_back(nullptr);
}

// Forks the command in its own process group with its stdout and stderr on
// pipes; `out_fds` gets the read ends. -1 when it could not.
pid_t StartChild(ExecArgs& exec, int out_fds[2]) {
  int out_pipe[2], err_pipe[2];
  if (pipe2(out_pipe, O_CLOEXEC) != 0) return -1;
  if (pipe2(err_pipe, O_CLOEXEC) != 0) {
    close(out_pipe[0]);
    close(out_pipe[1]);
    return -1;
  }
  const pid_t pid = fork();
  if (pid == 0) {
    setpgid(0, 0);
    dup2(out_pipe[1], STDOUT_FILENO);
    dup2(err_pipe[1], STDERR_FILENO);
    execvpe(exec.argp[0], exec.argp.data(), exec.envp.data());
    const char* message = "placement-agent: cannot execute the command\n";
    WriteFully(STDERR_FILENO, message, strlen(message));
    _exit(127);
  }
  close(out_pipe[1]);
  close(err_pipe[1]);
  if (pid < 0) {
    close(out_pipe[0]);
    close(err_pipe[0]);
    return -1;
  }
  setpgid(pid, pid);  // also from here, so the group exists before a kill
  out_fds[0] = out_pipe[0];
  out_fds[1] = err_pipe[0];
  return pid;
}

// Splits stdout into lines for the callback, with a bounded buffer: the
// rest of a line over kMaxLineBytes is dropped up to its newline.
class LineSplitter {
 public:
  explicit LineSplitter(const std::function<void(absl::string_view)>& on_line)
      : on_line_(on_line) {}

  void Add(const char* data, size_t size) {
    absl::string_view rest(data, size);
    for (size_t nl; (nl = rest.find('\n')) != absl::string_view::npos;
         rest.remove_prefix(nl + 1)) {
      if (!overlong_) {
        partial_.append(rest.data(), nl);
        on_line_(partial_);
      }
      partial_.clear();
      overlong_ = false;
    }
    if (overlong_) return;
    partial_.append(rest.data(), rest.size());
    if (partial_.size() > kMaxLineBytes) {
      partial_.clear();
      overlong_ = true;
    }
  }

  void Finish() {
    if (!partial_.empty() && !overlong_) on_line_(partial_);
    partial_.clear();
  }

 private:
  const std::function<void(absl::string_view)>& on_line_;
  std::string partial_;
  bool overlong_ = false;
};

// Reads the command's pipes, passing output through, until the command has
// exited and the pipes are at EOF or kDrainAfterExit has passed; timeouts
// and stop requests signal its process group. Returns its wait status.
// Every interval is measured on the monotonic clock: a step of the wall
// clock (NTP, a VM resumed) neither cuts an attempt short nor lengthens it.
class OutputPump {
 public:
  OutputPump(pid_t pid, const int fds[2], absl::Duration timeout,
             const std::function<void(absl::string_view)>& on_stdout_line,
             CommandResult& result)
      : pid_(pid),
        deadline_(timeout > absl::ZeroDuration()
                      ? SteadyClock::now() + absl::ToChronoNanoseconds(timeout)
                      : SteadyClock::time_point::max()),
        lines_(on_stdout_line),
        result_(result) {
    fds_[0] = {fds[0], POLLIN, 0};
    fds_[1] = {fds[1], POLLIN, 0};
  }

  int Run() {
    int status = 0;
    SteadyClock::time_point drain_until = SteadyClock::time_point::max();
    while (!exited_ || (open_fds_ > 0 && SteadyClock::now() < drain_until)) {
      SignalIfDue();
      const int ready = poll(fds_, 2, 200);
      if (ready < 0 && errno != EINTR) break;
      if (ready > 0) ReadReady();
      if (!exited_ && waitpid(pid_, &status, WNOHANG) == pid_) {
        exited_ = true;
        drain_until =
            SteadyClock::now() + absl::ToChronoNanoseconds(kDrainAfterExit);
      }
    }
    lines_.Finish();
    for (pollfd& f : fds_) {
      if (f.fd >= 0) close(f.fd);
    }
    if (!exited_) {
      while (waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
      }
    }
    return status;
  }

 private:
  void SignalIfDue() {
    const SteadyClock::time_point now = SteadyClock::now();
    if (exited_) return;
    if (stop_requested && !result_.end.preempted) {
      result_.end.preempted = true;
      Terminate(now);
    }
    if (now >= deadline_ && !result_.end.timed_out) {
      result_.end.timed_out = true;
      Terminate(now);
    }
    if (now >= kill_at_) {
      kill(-pid_, SIGKILL);
      kill_at_ = SteadyClock::time_point::max();
    }
  }

  void Terminate(SteadyClock::time_point now) {
    kill(-pid_, SIGTERM);
    if (kill_at_ == SteadyClock::time_point::max()) kill_at_ = now + kKillGrace;
  }

  void ReadReady() {
    char buffer[16384];
    for (int i = 0; i < 2; ++i) {
      if (fds_[i].fd < 0 ||
          (fds_[i].revents & (POLLIN | POLLHUP | POLLERR)) == 0) {
        continue;
      }
      const ssize_t n = read(fds_[i].fd, buffer, sizeof(buffer));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        close(fds_[i].fd);
        fds_[i].fd = -1;
        --open_fds_;
        continue;
      }
      const size_t size = static_cast<size_t>(n);
      WriteFully(i == 0 ? STDOUT_FILENO : STDERR_FILENO, buffer, size);
      std::string& tail = result_.output_tail;
      tail.append(buffer, size);
      if (tail.size() > 2 * kTailBytes) {
        tail.erase(0, tail.size() - kTailBytes);
      }
      if (i == 0) lines_.Add(buffer, size);
    }
  }

  const pid_t pid_;
  const SteadyClock::time_point deadline_;
  SteadyClock::time_point kill_at_ = SteadyClock::time_point::max();
  pollfd fds_[2];
  int open_fds_ = 2;
  bool exited_ = false;
  LineSplitter lines_;
  CommandResult& result_;
};

}  // namespace

void StopCommands() {
  if (stop_requested_ns.load(std::memory_order_relaxed) == 0) {
    timespec now{};
    clock_gettime(CLOCK_MONOTONIC, &now);  // async-signal-safe
    stop_requested_ns.store(
        std::max<int64_t>(1, int64_t{now.tv_sec} * 1'000'000'000 + now.tv_nsec),
        std::memory_order_relaxed);
  }
  stop_requested = 1;
}

bool StopRequested() { return stop_requested != 0; }

std::chrono::steady_clock::time_point StopRequestedAt() {
  return std::chrono::steady_clock::time_point(
      std::chrono::nanoseconds(stop_requested_ns.load()));
}

CommandResult RunTrainingCommand(
    const std::vector<std::string>& argv,
    const std::vector<std::pair<std::string, std::string>>& extra_env,
    absl::Duration timeout,
    const std::function<void(absl::string_view)>& on_stdout_line) {
  CommandResult result;
  ExecArgs exec;
  BuildExecArgs(argv, extra_env, exec);
  int fds[2];
  const pid_t pid = StartChild(exec, fds);
  if (pid < 0) {
    result.end.exit_code = 127;
    result.output_tail = "placement-agent: cannot start the command: " +
                         std::string(strerror(errno));
    return result;
  }
  const int status =
      OutputPump(pid, fds, timeout, on_stdout_line, result).Run();
  if (WIFEXITED(status)) {
    result.end.exit_code = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    result.end.exit_code = -1;
    result.end.term_signal = WTERMSIG(status);
  }
  if (result.output_tail.size() > kTailBytes) {
    result.output_tail.erase(0, result.output_tail.size() - kTailBytes);
  }
  return result;
}

}  // namespace placement::agent
