// RunTrainingCommand: the attempt ends when the command does, even if
// something it started in the background keeps the output pipes open; a
// stdout line without a newline never grows without bound.
#include "clients/agent/command_runner.h"

#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"

namespace placement::agent {
namespace {

namespace fs = std::filesystem;

// Sends what the command writes to stdout to /dev/null while alive (it is
// passed through to ours).
class QuietStdout {
 public:
  QuietStdout() : saved_(dup(STDOUT_FILENO)) {
    fflush(stdout);
    const int null = open("/dev/null", O_WRONLY);
    dup2(null, STDOUT_FILENO);
    close(null);
  }
  ~QuietStdout() {
    dup2(saved_, STDOUT_FILENO);
    close(saved_);
  }

 private:
  int saved_;
};

TEST(CommandRunnerTest, ABackgroundChildHoldingThePipesDoesNotHangIt) {
  char tmpl[] = "/tmp/placement-runner-test-XXXXXX";
  const std::string dir = mkdtemp(tmpl);
  const std::string pid_file = dir + "/pid";
  // As `tensorboard &` in a training script: it inherits stdout and stderr.
  const std::string script =
      absl::StrCat("sleep 60 & echo $! > ", pid_file,
                   "; echo '{\"step\": 0, \"step_time_s\": 0.5}'; exit 3");
  std::vector<std::string> lines;
  const absl::Time start = absl::Now();
  const CommandResult result = RunTrainingCommand(
      {"/bin/sh", "-c", script}, {}, absl::ZeroDuration(),
      [&](absl::string_view line) { lines.emplace_back(line); });
  const absl::Duration took = absl::Now() - start;
  std::ifstream pid_in(pid_file);
  pid_t background = 0;
  pid_in >> background;
  if (background > 0) kill(background, SIGKILL);
  fs::remove_all(dir);

  EXPECT_LT(took, kDrainAfterExit + absl::Seconds(5));
  EXPECT_EQ(result.end.exit_code, 3);
  EXPECT_FALSE(result.end.timed_out);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0], "{\"step\": 0, \"step_time_s\": 0.5}");
}

TEST(CommandRunnerTest, ALineWithoutANewlineStaysBounded) {
  // 3 MiB without a newline, then a step record: the record still counts;
  // no line over the cap reaches the callback.
  const std::string script =
      "head -c 3145728 /dev/zero | tr '\\000' x; echo; "
      "echo '{\"step\": 0, \"step_time_s\": 0.5}'; head -c 2097152 /dev/zero "
      "| tr '\\000' y";
  size_t longest = 0;
  std::vector<std::string> short_lines;
  CommandResult result;
  {
    QuietStdout quiet;
    result =
        RunTrainingCommand({"/bin/sh", "-c", script}, {}, absl::ZeroDuration(),
                           [&](absl::string_view line) {
                             longest = std::max(longest, line.size());
                             if (line.size() < 100)
                               short_lines.emplace_back(line);
                           });
  }
  EXPECT_EQ(result.end.exit_code, 0);
  EXPECT_LE(longest, kMaxLineBytes);
  EXPECT_EQ(short_lines,
            std::vector<std::string>{"{\"step\": 0, \"step_time_s\": 0.5}"});
  EXPECT_LE(result.output_tail.size(), 64u * 1024);
}

TEST(CommandRunnerTest, TheAttemptTimeoutStopsTheGroup) {
  const absl::Time start = absl::Now();
  const CommandResult result =
      RunTrainingCommand({"/bin/sh", "-c", "sleep 60"}, {},
                         absl::Milliseconds(300), [](absl::string_view) {});
  EXPECT_LT(absl::Now() - start, absl::Seconds(15));
  EXPECT_TRUE(result.end.timed_out);
  EXPECT_EQ(result.end.term_signal, SIGTERM);
}

}  // namespace
}  // namespace placement::agent
