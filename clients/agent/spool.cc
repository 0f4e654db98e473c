#include "clients/agent/spool.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <google/protobuf/util/json_util.h>
#include <pwd.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"

namespace placement::agent {
namespace {

constexpr char kSamples[] = "samples.jsonl";
constexpr char kRun[] = "run.pb";
constexpr char kLock[] = "lock";

absl::Status Errno(const std::string& what) {
  return absl::InternalError(absl::StrCat(what, ": ", strerror(errno)));
}

absl::Status MakeDirs(const std::string& path) {
  std::string prefix;
  for (absl::string_view part : absl::StrSplit(path, '/')) {
    prefix += std::string(part) + "/";
    if (part.empty()) continue;
    if (mkdir(prefix.c_str(), 0700) != 0 && errno != EEXIST) {
      return Errno(absl::StrCat("mkdir ", prefix));
    }
  }
  return absl::OkStatus();
}

absl::Status WriteAll(int fd, const std::string& data) {
  size_t done = 0;
  while (done < data.size()) {
    const ssize_t n = write(fd, data.data() + done, data.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      return Errno("write");
    }
    done += static_cast<size_t>(n);
  }
  return absl::OkStatus();
}

void SyncDir(const std::string& dir) {
  const int fd = open(dir.c_str(), O_RDONLY | O_DIRECTORY);
  if (fd >= 0) {
    fsync(fd);
    close(fd);
  }
}

absl::StatusOr<int> Lock(const std::string& dir) {
  const std::string path = dir + "/" + kLock;
  const int fd = open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0) return Errno(absl::StrCat("open ", path));
  if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
    const int error = errno;
    close(fd);
    if (error == EWOULDBLOCK) {
      return absl::UnavailableError(
          absl::StrCat(dir, " is locked by a run in progress"));
    }
    errno = error;
    return Errno(absl::StrCat("flock ", path));
  }
  return fd;
}

}  // namespace

SpoolRun::SpoolRun(std::string spool_dir, std::string run_id, int lock_fd)
    : spool_dir_(std::move(spool_dir)),
      run_id_(std::move(run_id)),
      dir_(spool_dir_ + "/" + run_id_),
      lock_fd_(lock_fd) {}

SpoolRun::~SpoolRun() {
  if (lock_fd_ >= 0) close(lock_fd_);
}

absl::StatusOr<std::unique_ptr<SpoolRun>> SpoolRun::Create(
    const std::string& spool_dir, const std::string& run_id) {
  if (absl::Status s = MakeDirs(spool_dir); !s.ok()) return s;
  if (absl::Status s = CheckSpoolDir(spool_dir); !s.ok()) return s;
  const std::string dir = spool_dir + "/" + run_id;
  if (mkdir(dir.c_str(), 0700) != 0) {
    if (errno == EEXIST) {
      return absl::AlreadyExistsError(absl::StrCat(dir, " exists"));
    }
    return Errno(absl::StrCat("mkdir ", dir));
  }
  SyncDir(spool_dir);
  absl::StatusOr<int> fd = Lock(dir);
  if (!fd.ok()) return fd.status();
  return std::unique_ptr<SpoolRun>(new SpoolRun(spool_dir, run_id, *fd));
}

absl::StatusOr<std::unique_ptr<SpoolRun>> SpoolRun::Open(
    const std::string& spool_dir, const std::string& run_id) {
  if (absl::Status s = CheckSpoolDir(spool_dir); !s.ok()) return s;
  const std::string dir = spool_dir + "/" + run_id;
  struct stat st;
  if (stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    return absl::NotFoundError(absl::StrCat("no spooled run ", dir));
  }
  absl::StatusOr<int> fd = Lock(dir);
  if (!fd.ok()) return fd.status();
  return std::unique_ptr<SpoolRun>(new SpoolRun(spool_dir, run_id, *fd));
}

absl::Status SpoolRun::AppendSamples(
    const std::vector<v1::StepSample>& samples) {
  if (samples.empty()) return absl::OkStatus();
  std::string lines;
  google::protobuf::util::JsonPrintOptions options;
  options.preserve_proto_field_names = true;
  for (const v1::StepSample& s : samples) {
    std::string json;
    if (!google::protobuf::util::MessageToJsonString(s, &json, options).ok()) {
      return absl::InternalError("cannot encode a sample");
    }
    absl::StrAppend(&lines, json, "\n");
  }
  const std::string path = dir_ + "/" + kSamples;
  const int fd =
      open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
  if (fd < 0) return Errno(absl::StrCat("open ", path));
  absl::Status status = WriteAll(fd, lines);
  if (status.ok() && fsync(fd) != 0) status = Errno("fsync");
  close(fd);
  return status;
}

absl::StatusOr<std::vector<v1::StepSample>> SpoolRun::ReadSamples() const {
  std::vector<v1::StepSample> samples;
  std::ifstream file(dir_ + "/" + kSamples);
  if (!file) return samples;
  std::stringstream text;
  text << file.rdbuf();
  const std::string all = text.str();
  size_t begin = 0;
  google::protobuf::util::JsonParseOptions options;
  options.ignore_unknown_fields = true;  // newer recorders may add fields
  while (begin < all.size()) {
    const size_t end = all.find('\n', begin);
    if (end == std::string::npos) break;  // torn last line
    const std::string line = all.substr(begin, end - begin);
    begin = end + 1;
    if (line.empty()) continue;
    v1::StepSample sample;
    if (!google::protobuf::util::JsonStringToMessage(line, &sample, options)
             .ok()) {
      return absl::DataLossError(
          absl::StrCat(dir_, "/", kSamples, ": unreadable line '", line, "'"));
    }
    samples.push_back(std::move(sample));
  }
  return samples;
}

absl::Status SpoolRun::WriteRun(const v1::BenchmarkRun& run) {
  const std::string path = dir_ + "/" + kRun;
  if (access(path.c_str(), F_OK) == 0) {
    return absl::AlreadyExistsError(absl::StrCat(path, " exists"));
  }
  const std::string tmp = path + ".tmp";
  const int fd =
      open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) return Errno(absl::StrCat("open ", tmp));
  absl::Status status = WriteAll(fd, run.SerializeAsString());
  if (status.ok() && fsync(fd) != 0) status = Errno("fsync");
  close(fd);
  if (!status.ok()) return status;
  if (rename(tmp.c_str(), path.c_str()) != 0) return Errno("rename");
  SyncDir(dir_);
  return absl::OkStatus();
}

absl::StatusOr<absl::optional<v1::BenchmarkRun>> SpoolRun::ReadRun() const {
  std::ifstream file(dir_ + "/" + kRun, std::ios::binary);
  if (!file) return absl::optional<v1::BenchmarkRun>();
  v1::BenchmarkRun run;
  if (!run.ParseFromIstream(&file)) {
    return absl::DataLossError(absl::StrCat(dir_, "/", kRun, " is unreadable"));
  }
  return absl::optional<v1::BenchmarkRun>(std::move(run));
}

absl::Status SpoolRun::Remove() {
  for (const char* name : {kSamples, kRun, kLock}) {
    const std::string path = dir_ + "/" + name;
    if (unlink(path.c_str()) != 0 && errno != ENOENT) {
      return Errno(absl::StrCat("unlink ", path));
    }
  }
  if (rmdir(dir_.c_str()) != 0) return Errno(absl::StrCat("rmdir ", dir_));
  SyncDir(spool_dir_);
  return absl::OkStatus();
}

absl::Status SpoolRun::Reject(const std::string& why) {
  const std::string rejected = spool_dir_ + "/rejected";
  if (absl::Status s = MakeDirs(rejected); !s.ok()) return s;
  {
    std::ofstream note(dir_ + "/rejected.txt");
    note << why << "\n";
  }
  const std::string target = rejected + "/" + run_id_;
  if (rename(dir_.c_str(), target.c_str()) != 0) {
    return Errno(absl::StrCat("rename ", dir_));
  }
  dir_ = target;
  return absl::OkStatus();
}

std::vector<std::string> ListSpooledRuns(const std::string& spool_dir) {
  std::vector<std::string> runs;
  DIR* dir = opendir(spool_dir.c_str());
  if (dir == nullptr) return runs;
  while (const dirent* entry = readdir(dir)) {
    const std::string name = entry->d_name;
    // Run folders are UUIDs; "rejected" and dot entries are not.
    if (name.size() == 36 && name[8] == '-') runs.push_back(name);
  }
  closedir(dir);
  std::sort(runs.begin(), runs.end());
  return runs;
}

absl::Status CheckSpoolDir(const std::string& spool_dir) {
  struct stat st;
  if (stat(spool_dir.c_str(), &st) != 0) {
    if (errno == ENOENT) return absl::OkStatus();  // created 0700 when used
    return Errno(absl::StrCat("stat ", spool_dir));
  }
  if (!S_ISDIR(st.st_mode)) {
    return absl::FailedPreconditionError(
        absl::StrCat("spool ", spool_dir, " is not a directory"));
  }
  // Whatever is spooled is uploaded with this user's token: a folder that
  // someone else owns or may write into could hold forged runs.
  if (st.st_uid != geteuid()) {
    return absl::PermissionDeniedError(
        absl::StrCat("refusing spool ", spool_dir, ": owned by uid ", st.st_uid,
                     ", not by this user (uid ", geteuid(),
                     "); its runs would be uploaded with this user's token"));
  }
  if ((st.st_mode & (S_IWGRP | S_IWOTH)) != 0) {
    return absl::PermissionDeniedError(absl::StrFormat(
        "refusing spool %s: mode %04o lets other users write into it; its "
        "runs would be uploaded with this user's token (chmod 700 %s)",
        spool_dir, st.st_mode & 07777, spool_dir));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> DefaultSpoolDir() {
  if (const char* dir = std::getenv("PLACEMENT_SPOOL_DIR"); dir && *dir) {
    return std::string(dir);
  }
  if (const char* state = std::getenv("XDG_STATE_HOME"); state && *state) {
    return absl::StrCat(state, "/placement/spool");
  }
  std::string home;
  if (const char* env = std::getenv("HOME"); env && *env) {
    home = env;
  } else {
    // No shared fallback (such as /tmp): the account's own home, or none.
    struct passwd entry;
    struct passwd* found = nullptr;
    char buffer[4096];
    if (getpwuid_r(getuid(), &entry, buffer, sizeof(buffer), &found) == 0 &&
        found != nullptr && found->pw_dir != nullptr && *found->pw_dir) {
      home = found->pw_dir;
    }
  }
  if (home.empty()) {
    return absl::FailedPreconditionError(
        "no spool folder: HOME is unset and this user has no home directory; "
        "name one with --spool_dir or $PLACEMENT_SPOOL_DIR");
  }
  return absl::StrCat(home, "/.local/state/placement/spool");
}

}  // namespace placement::agent
