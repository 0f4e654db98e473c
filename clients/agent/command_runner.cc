#include "clients/agent/command_runner.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"

extern char** environ;

namespace placement::agent {
namespace {

constexpr size_t kTailBytes = 64 * 1024;
constexpr absl::Duration kKillGrace = absl::Seconds(10);

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

}  // namespace

CommandResult RunTrainingCommand(
    const std::vector<std::string>& argv,
    const std::vector<std::pair<std::string, std::string>>& extra_env,
    absl::Duration timeout,
    const std::function<void(absl::string_view)>& on_stdout_line) {
  CommandResult result;
  // Everything the child needs is built before fork(): between fork and
  // exec only async-signal-safe calls are allowed (gRPC has threads).
  std::vector<std::string> env_strings;
  for (char** e = environ; *e != nullptr; ++e) env_strings.emplace_back(*e);
  for (const auto& [name, value] : extra_env) {
    env_strings.push_back(absl::StrCat(name, "=", value));
  }
  std::vector<char*> envp;
  for (std::string& e : env_strings) envp.push_back(e.data());
  envp.push_back(nullptr);
  std::vector<std::string> args = argv;
  std::vector<char*> argp;
  for (std::string& a : args) argp.push_back(a.data());
  argp.push_back(nullptr);

  int out_pipe[2], err_pipe[2];
  if (pipe2(out_pipe, O_CLOEXEC) != 0 || pipe2(err_pipe, O_CLOEXEC) != 0) {
    result.end.exit_code = 127;
    result.output_tail = "placement-agent: pipe failed";
    return result;
  }
  const pid_t pid = fork();
  if (pid == 0) {
    setpgid(0, 0);
    dup2(out_pipe[1], STDOUT_FILENO);
    dup2(err_pipe[1], STDERR_FILENO);
    execvpe(argp[0], argp.data(), envp.data());
    const char* message = "placement-agent: cannot execute the command\n";
    WriteFully(STDERR_FILENO, message, strlen(message));
    _exit(127);
  }
  close(out_pipe[1]);
  close(err_pipe[1]);
  if (pid < 0) {
    close(out_pipe[0]);
    close(err_pipe[0]);
    result.end.exit_code = 127;
    result.output_tail = "placement-agent: fork failed";
    return result;
  }
  setpgid(pid, pid);  // also from here, so the group exists before a kill

  const absl::Time deadline = timeout > absl::ZeroDuration()
                                  ? absl::Now() + timeout
                                  : absl::InfiniteFuture();
  absl::Time kill_at = absl::InfiniteFuture();
  std::string partial_out;
  pollfd fds[2] = {{out_pipe[0], POLLIN, 0}, {err_pipe[0], POLLIN, 0}};
  int open_fds = 2;
  char buffer[16384];
  while (open_fds > 0) {
    const absl::Time now = absl::Now();
    if (now >= deadline && !result.end.timed_out) {
      result.end.timed_out = true;
      kill(-pid, SIGTERM);
      kill_at = now + kKillGrace;
    }
    if (now >= kill_at) {
      kill(-pid, SIGKILL);
      kill_at = absl::InfiniteFuture();
    }
    const int ready = poll(fds, 2, 200);
    if (ready < 0 && errno != EINTR) break;
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 ||
          (fds[i].revents & (POLLIN | POLLHUP | POLLERR)) == 0) {
        continue;
      }
      const ssize_t n = read(fds[i].fd, buffer, sizeof(buffer));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        close(fds[i].fd);
        fds[i].fd = -1;
        --open_fds;
        continue;
      }
      WriteFully(i == 0 ? STDOUT_FILENO : STDERR_FILENO, buffer,
                 static_cast<size_t>(n));
      result.output_tail.append(buffer, static_cast<size_t>(n));
      if (result.output_tail.size() > 2 * kTailBytes) {
        result.output_tail.erase(0, result.output_tail.size() - kTailBytes);
      }
      if (i == 0) {
        partial_out.append(buffer, static_cast<size_t>(n));
        size_t start = 0;
        for (size_t nl;
             (nl = partial_out.find('\n', start)) != std::string::npos;
             start = nl + 1) {
          on_stdout_line(
              absl::string_view(partial_out).substr(start, nl - start));
        }
        partial_out.erase(0, start);
      }
    }
  }
  if (!partial_out.empty()) on_stdout_line(partial_out);
  for (const pollfd& f : fds) {
    if (f.fd >= 0) close(f.fd);
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
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
