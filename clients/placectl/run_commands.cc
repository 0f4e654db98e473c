#include "clients/placectl/run_commands.h"

#include <google/protobuf/util/json_util.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "clients/common/channel.h"
#include "clients/common/progress.h"
#include "clients/common/rpc_errors.h"
#include "clients/common/table.h"
#include "clients/placectl/flags.h"
#include "clients/placectl/json.h"
#include "clients/placectl/recipe_file.h"
#include "common/proto_time.h"
#include "placement/v1/telemetry.grpc.pb.h"

PLACECTL_FLAG(std::string, pool, "", "runs list", "only runs on this pool");
PLACECTL_FLAG(std::string, recipe_key, "", "runs list",
              "only runs of this recipe key");
PLACECTL_FLAG(int, limit, 50, "runs list", "at most this many runs");

namespace placement::placectl {
namespace {

using clients::ContextWithDeadline;
using clients::DescribeError;

std::string Time(const google::protobuf::Timestamp& t) {
  return absl::FormatTime("%Y-%m-%d %H:%M", common::TimeFromProto(t),
                          absl::UTCTimeZone());
}

std::string Name(const std::string& enum_name, const std::string& prefix) {
  return std::string(absl::StripPrefix(enum_name, prefix));
}

// The runs of an upload file, one proto-JSON BenchmarkRun a line; enum values
// may be short as in recipe files ("succeeded", "lora"). Each bad line is
// added to `problems` as "NAME line N: ...".
void ReadRuns(const std::string& name, std::istream& in,
              std::vector<v1::UploadBenchmarkRunRequest>* requests,
              std::vector<std::string>* problems) {
  int line_number = 0;
  for (std::string line; std::getline(in, line);) {
    ++line_number;
    if (absl::StripAsciiWhitespace(line).empty()) continue;
    v1::UploadBenchmarkRunRequest request;
    absl::StatusOr<std::string> json =
        YamlToProtoJson(line, *v1::BenchmarkRun::descriptor());
    absl::Status status = json.status();
    if (json.ok()) {
      google::protobuf::util::JsonParseOptions options;
      options.ignore_unknown_fields = false;
      auto parsed = google::protobuf::util::JsonStringToMessage(
          *json, request.mutable_run(), options);
      if (!parsed.ok()) {
        status = absl::InvalidArgumentError(std::string(parsed.message()));
      }
    }
    if (!status.ok()) {
      // Each line is parsed alone: its own "line 1" would mislead.
      problems->push_back(absl::StrCat(
          name, " line ", line_number, ": ",
          absl::StrReplaceAll(status.message(), {{" (line 1)", ""}})));
      continue;
    }
    requests->push_back(std::move(request));
  }
}

// The runs of `path`: a file, "-" for stdin, or a directory (every *.jsonl
// and *.json file in it, by name). A bad file is refused whole, before
// anything is sent: it is the caller's to fix, not a refusal by the service.
absl::StatusOr<std::vector<v1::UploadBenchmarkRunRequest>> ReadRunsPath(
    const std::string& path) {
  std::vector<v1::UploadBenchmarkRunRequest> requests;
  std::vector<std::string> problems;
  std::error_code error;
  if (path == "-") {
    ReadRuns("stdin", std::cin, &requests, &problems);
  } else if (std::filesystem::is_directory(path, error)) {
    std::vector<std::filesystem::path> files;
    for (const auto& entry : std::filesystem::directory_iterator(path, error)) {
      const std::string ext = entry.path().extension().string();
      if (entry.is_regular_file() && (ext == ".jsonl" || ext == ".json")) {
        files.push_back(entry.path());
      }
    }
    if (error) {
      return absl::InvalidArgumentError(
          absl::StrCat("cannot list ", path, ": ", error.message()));
    }
    std::sort(files.begin(), files.end());
    if (files.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat(path, " holds no *.jsonl or *.json file"));
    }
    for (const auto& file_path : files) {
      std::ifstream file(file_path);
      if (!file) {
        problems.push_back(absl::StrCat("cannot read ", file_path.string(),
                                        ": ", std::strerror(errno)));
        continue;
      }
      ReadRuns(file_path.string(), file, &requests, &problems);
    }
  } else {
    std::ifstream file(path);
    if (!file) {
      return absl::InvalidArgumentError(
          absl::StrCat("cannot read ", path, ": ", std::strerror(errno)));
    }
    ReadRuns(path, file, &requests, &problems);
  }
  if (!problems.empty()) {
    return absl::InvalidArgumentError(absl::StrJoin(problems, "\n"));
  }
  if (requests.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(path == "-" ? "stdin" : path,
                     " holds no runs (expected one JSON BenchmarkRun a line)"));
  }
  return requests;
}

// Uploads one run per JSON line. Retrying a file is safe: runs are
// idempotent on run_id, and ones already stored are counted as such.
int Upload(const std::string& path) {
  absl::StatusOr<std::vector<v1::UploadBenchmarkRunRequest>> requests =
      ReadRunsPath(path);
  if (!requests.ok()) {
    std::cerr << "placectl: runs upload: nothing was sent:\n"
              << requests.status().message() << "\n";
    return 2;
  }

  auto stub =
      v1::TelemetryService::NewStub(clients::MakeChannel(ServerAddress()));
  const absl::Time started = absl::Now();
  int64_t stored = 0, already = 0, failed = 0;
  clients::ProgressBar progress("runs", static_cast<int64_t>(requests->size()));
  for (const v1::UploadBenchmarkRunRequest& request : *requests) {
    v1::UploadBenchmarkRunResponse response;
    grpc::Status status = stub->UploadBenchmarkRun(ContextWithDeadline().get(),
                                                   request, &response);
    if (!status.ok()) {
      progress.Interrupt();
      std::cerr << "placectl: run " << request.run().run_id()
                << " refused: " << DescribeError(status) << "\n";
      ++failed;
    } else if (common::TimeFromProto(response.accept_time()) < started) {
      ++already;
    } else {
      ++stored;
    }
    progress.Update(stored + already,
                    absl::StrCat("uploaded, ", failed, " failed"));
  }
  progress.Done();
  std::cout << "stored " << stored << ", already stored " << already
            << ", failed " << failed << "\n";
  return failed == 0 ? 0 : 1;
}

int List() {
  auto stub =
      v1::TelemetryService::NewStub(clients::MakeChannel(ServerAddress()));
  v1::ListBenchmarkRunsResponse all;
  std::string token;
  const int limit = std::max(1, absl::GetFlag(FLAGS_limit));
  do {
    v1::ListBenchmarkRunsRequest request;
    request.set_page_size(std::min(limit - all.runs_size(), 1000));
    request.set_page_token(token);
    request.set_pool(absl::GetFlag(FLAGS_pool));
    request.set_recipe_key(absl::GetFlag(FLAGS_recipe_key));
    v1::ListBenchmarkRunsResponse response;
    grpc::Status status = stub->ListBenchmarkRuns(ContextWithDeadline().get(),
                                                  request, &response);
    if (!status.ok()) {
      std::cerr << "placectl: " << DescribeError(status) << "\n";
      return 1;
    }
    for (const auto& run : response.runs()) *all.add_runs() = run;
    token = response.next_page_token();
  } while (!token.empty() && all.runs_size() < limit);
  if (absl::GetFlag(FLAGS_json)) {
    std::cout << ToJson(all);
    return 0;
  }
  clients::Table table(
      {"RUN", "POOL", "SKU", "MODEL", "METHOD", "GPUS", "STARTED (UTC)",
       "STEPS OK/TRIED", "PEAK GB", "OFFLOAD", "RETRIES", "OUTCOME", "GPU-H"},
      {false, false, false, false, false, true, false, true, true, false, true,
       false, true});
  for (const v1::BenchmarkRunSummary& run : all.runs()) {
    table.AddRow(
        {run.run_id(), run.pool(), run.sku(), run.model(),
         Name(v1::FineTuneMethod_Name(run.method()), "FINE_TUNE_METHOD_"),
         absl::StrCat(run.gpu_count()), Time(run.start_time()),
         absl::StrCat(run.steps_succeeded(), "/", run.steps_attempted()),
         absl::StrFormat("%.1f", run.peak_memory_gb()),
         Name(v1::Offload_Name(run.offload()), "OFFLOAD_"),
         absl::StrCat(run.retries()),
         Name(v1::RunOutcome_Name(run.outcome()), "RUN_OUTCOME_"),
         absl::StrFormat("%.2f", run.gpu_hours())});
  }
  table.Print(std::cout);
  return 0;
}

int Get(const std::string& run_id) {
  auto stub =
      v1::TelemetryService::NewStub(clients::MakeChannel(ServerAddress()));
  v1::GetBenchmarkRunRequest request;
  request.set_run_id(run_id);
  v1::GetBenchmarkRunResponse response;
  grpc::Status status =
      stub->GetBenchmarkRun(ContextWithDeadline().get(), request, &response);
  if (!status.ok()) {
    std::cerr << "placectl: " << DescribeError(status) << "\n";
    return 1;
  }
  std::cout << ToJson(response);
  return 0;
}

}  // namespace

int RunRuns(const std::vector<std::string>& args) {
  if (args.size() == 2 && args[0] == "upload") return Upload(args[1]);
  if (args.size() == 1 && args[0] == "list") return List();
  if (args.size() == 2 && args[0] == "get") return Get(args[1]);
  std::cerr << "usage: placectl runs upload FILE|DIR|- | list [--pool P] "
               "[--recipe_key K] [--limit N] | get RUN_ID\n";
  return 2;
}

}  // namespace placement::placectl
