// The spool is trusted only when it is the caller's own: a folder another
// user created or may write into could hold forged runs, which a flush would
// upload with the caller's token. And it never falls back to a shared path.
#include "clients/agent/spool.h"

#include <pwd.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "clients/agent/uploader.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace placement::agent {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

constexpr char kRunId[] = "00000000-0000-4000-8000-000000000001";

class SpoolOwnershipTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/placement-spool-test-XXXXXX";
    root_ = mkdtemp(tmpl);
    spool_ = root_ + "/spool";
    ASSERT_EQ(mkdir(spool_.c_str(), 0700), 0);
  }
  void TearDown() override { fs::remove_all(root_); }

  // Spools a finished run the way a forger would: files in the folder.
  void PlantRun() {
    fs::create_directories(spool_ + "/" + kRunId);
    std::ofstream(spool_ + "/" + kRunId + "/samples.jsonl")
        << "{\"step\": \"0\", \"step_time_seconds\": 0.5}\n";
  }

  // What a flush does with the spool (no service: it must not get that far).
  FlushReport Flush(std::string* log) {
    absl::StatusOr<Connection> connection =
        Connection::Make("127.0.0.1:1", "token", "");
    EXPECT_TRUE(connection.ok());
    Backoff backoff;
    backoff.attempts = 1;
    Uploader uploader(*connection, backoff);
    std::ostringstream out;
    FlushReport report = uploader.FlushSpool(spool_, out);
    *log = out.str();
    return report;
  }

  std::string root_;
  std::string spool_;
};

TEST_F(SpoolOwnershipTest, AFolderOthersMayWriteIsRefused) {
  PlantRun();
  ASSERT_EQ(chmod(spool_.c_str(), 0777), 0);
  const absl::Status created =
      SpoolRun::Create(spool_, "00000000-0000-4000-8000-000000000002").status();
  EXPECT_TRUE(absl::IsPermissionDenied(created)) << created;
  EXPECT_THAT(std::string(created.message()), HasSubstr("0777"));
  EXPECT_TRUE(
      absl::IsPermissionDenied(SpoolRun::Open(spool_, kRunId).status()));
  std::string log;
  const FlushReport report = Flush(&log);
  EXPECT_EQ(report.exit_code(), 2);
  EXPECT_TRUE(report.runs.empty());
  EXPECT_THAT(log, HasSubstr("refusing spool"));

  // Made the owner's own again, it is used.
  ASSERT_EQ(chmod(spool_.c_str(), 0700), 0);
  EXPECT_TRUE(SpoolRun::Open(spool_, kRunId).ok());
}

TEST_F(SpoolOwnershipTest, AFolderAnotherUserOwnsIsRefused) {
  if (geteuid() != 0 || chown(spool_.c_str(), 65534, 65534) != 0) {
    GTEST_SKIP() << "chown to another uid needs root: the case of a spool "
                    "another user owns is not exercised here";
  }
  const absl::Status opened = SpoolRun::Open(spool_, kRunId).status();
  EXPECT_TRUE(absl::IsPermissionDenied(opened)) << opened;
  EXPECT_THAT(std::string(opened.message()), HasSubstr("owned by uid 65534"));
  EXPECT_TRUE(
      absl::IsPermissionDenied(SpoolRun::Create(spool_, kRunId).status()));
  std::string log;
  EXPECT_EQ(Flush(&log).exit_code(), 2);
  EXPECT_THAT(log, HasSubstr("not by this user"));
}

TEST(DefaultSpoolDirTest, WithoutHomeItIsTheAccountsHomeNeverTmp) {
  const char* saved_home = getenv("HOME");
  const std::string home = saved_home != nullptr ? saved_home : "";
  unsetenv("HOME");
  unsetenv("PLACEMENT_SPOOL_DIR");
  unsetenv("XDG_STATE_HOME");
  const absl::StatusOr<std::string> dir = DefaultSpoolDir();
  if (saved_home != nullptr) setenv("HOME", home.c_str(), 1);
  const passwd* entry = getpwuid(getuid());
  if (entry == nullptr || entry->pw_dir == nullptr || *entry->pw_dir == 0) {
    EXPECT_TRUE(absl::IsFailedPrecondition(dir.status())) << dir.status();
    return;
  }
  ASSERT_TRUE(dir.ok()) << dir.status();
  EXPECT_EQ(*dir, absl::StrCat(entry->pw_dir, "/.local/state/placement/spool"));
  EXPECT_FALSE(absl::StartsWith(*dir, "/tmp/")) << *dir;
}

}  // namespace
}  // namespace placement::agent
