#include "clients/placectl/run_commands.h"

#include <google/protobuf/util/json_util.h>
#include <unistd.h>

#include <fstream>
#include <iostream>

#include "absl/flags/flag.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "clients/common/channel.h"
#include "clients/common/rpc_errors.h"
#include "clients/common/table.h"
#include "clients/placectl/flags.h"
#include "clients/placectl/json.h"
#include "common/proto_time.h"
#include "placement/v1/telemetry.grpc.pb.h"

ABSL_FLAG(std::string, pool, "", "runs list: only runs on this pool");
ABSL_FLAG(std::string, recipe_key, "", "runs list: only runs of this recipe key");
ABSL_FLAG(int, limit, 50, "runs list: at most this many runs");

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

// A one-line progress bar on a terminal; nothing when stderr is a file.
class Progress {
 public:
  explicit Progress(int64_t total) : total_(total), tty_(isatty(2)) {}
  void Update(int64_t done, int64_t failed) {
    if (!tty_) return;
    const int width = 30;
    const int filled =
        total_ > 0 ? static_cast<int>(width * done / total_) : width;
    std::cerr << absl::StrFormat("\r[%s%s] %d/%d uploaded, %d failed",
                                 std::string(filled, '#'),
                                 std::string(width - filled, ' '), done,
                                 total_, failed)
              << std::flush;
  }
  void Done() {
    if (tty_) std::cerr << "\n";
  }

 private:
  const int64_t total_;
  const bool tty_;
};

// Uploads one run per JSON line. Retrying a file is safe: runs are
// idempotent on run_id, and ones already stored are counted as such.
int Upload(const std::string& path) {
  std::ifstream file;
  std::istream* in = &std::cin;
  if (path != "-") {
    file.open(path);
    if (!file) {
      std::cerr << "placectl: cannot read " << path << "\n";
      return 2;
    }
    in = &file;
  }
  std::vector<std::string> lines;
  for (std::string line; std::getline(*in, line);) {
    if (!absl::StripAsciiWhitespace(line).empty()) lines.push_back(line);
  }

  auto stub =
      v1::TelemetryService::NewStub(clients::MakeChannel(ServerAddress()));
  const absl::Time started = absl::Now();
  int64_t stored = 0, already = 0, failed = 0;
  Progress progress(static_cast<int64_t>(lines.size()));
  for (size_t i = 0; i < lines.size(); ++i) {
    v1::UploadBenchmarkRunRequest request;
    google::protobuf::util::JsonParseOptions options;
    options.ignore_unknown_fields = false;
    auto parsed = google::protobuf::util::JsonStringToMessage(
        lines[i], request.mutable_run(), options);
    if (!parsed.ok()) {
      std::cerr << "\nplacectl: line " << i + 1 << ": " << parsed.ToString()
                << "\n";
      ++failed;
      continue;
    }
    v1::UploadBenchmarkRunResponse response;
    grpc::Status status =
        stub->UploadBenchmarkRun(ContextWithDeadline().get(), request, &response);
    if (!status.ok()) {
      std::cerr << "\nplacectl: line " << i + 1 << " (run "
                << request.run().run_id() << "): " << DescribeError(status)
                << "\n";
      ++failed;
    } else if (common::TimeFromProto(response.accept_time()) < started) {
      ++already;
    } else {
      ++stored;
    }
    progress.Update(stored + already, failed);
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
    grpc::Status status =
        stub->ListBenchmarkRuns(ContextWithDeadline().get(), request, &response);
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
  clients::Table table({"RUN", "POOL", "SKU", "MODEL", "METHOD", "GPUS",
                        "STARTED (UTC)", "STEPS OK/TRIED", "PEAK GB",
                        "OFFLOAD", "RETRIES", "OUTCOME", "GPU-H"},
                       {false, false, false, false, false, true, false, true,
                        true, false, true, false, true});
  for (const v1::BenchmarkRunSummary& run : all.runs()) {
    table.AddRow({run.run_id(), run.pool(), run.sku(), run.model(),
                  Name(v1::FineTuneMethod_Name(run.method()),
                       "FINE_TUNE_METHOD_"),
                  absl::StrCat(run.gpu_count()), Time(run.start_time()),
                  absl::StrCat(run.steps_succeeded(), "/",
                               run.steps_attempted()),
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
  std::cerr << "usage: placectl runs upload FILE|- | list [--pool P] "
               "[--recipe_key K] [--limit N] | get RUN_ID\n";
  return 2;
}

}  // namespace placement::placectl
