#include "clients/placectl/pool_state_commands.h"

#include <google/protobuf/util/json_util.h>
#include <stdio.h>
#include <sys/wait.h>

#include <fstream>
#include <iostream>
#include <sstream>
#include <thread>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "clients/common/channel.h"
#include "clients/common/rpc_errors.h"
#include "clients/common/table.h"
#include "clients/placectl/flags.h"
#include "clients/placectl/json.h"
#include "clients/placectl/slurm_state.h"
#include "common/proto_time.h"
#include "placement/v1/catalog.grpc.pb.h"
#include "placement/v1/pool_state.grpc.pb.h"

PLACECTL_FLAG(std::string, gpu_counts, "", "pools state",
              "the GPU counts to forecast a start for, comma-separated "
              "(default: 1 and a node's)");
PLACECTL_FLAG(absl::Duration, interval, absl::ZeroDuration(), "slurm report",
              "report again every this long (0: once), e.g. 30s");
PLACECTL_FLAG(std::string, partition_label, "slurm-partition", "slurm report",
              "the pool label naming its partition (else the pool's name)");
PLACECTL_FLAG(std::string, scontrol, "scontrol", "slurm report",
              "the scontrol to run");
PLACECTL_FLAG(std::string, sinfo, "sinfo", "slurm report", "the sinfo to run");

namespace placement::placectl {
namespace {

using clients::ContextWithDeadline;
using clients::DescribeError;

int Fail(const grpc::Status& status) {
  std::cerr << "placectl: " << DescribeError(status) << "\n";
  return 1;
}

std::string Span(const google::protobuf::Duration& d) {
  const absl::Duration duration = common::DurationFromProto(d);
  if (duration <= absl::ZeroDuration()) return "now";
  return absl::FormatDuration(absl::Trunc(duration, absl::Seconds(1)));
}

void PrintPoolState(const v1::GetPoolStateResponse& r) {
  std::cout << "pool " << r.pool();
  if (!r.has_state()) {
    std::cout << ": no state reported\n";
  } else {
    const v1::PoolState& s = r.state();
    int pending_gpus = 0;
    for (const v1::PoolJob& j : s.pending()) pending_gpus += j.gpus();
    std::cout << ": " << s.gpus_allocated() << " of " << s.gpus_total()
              << " GPUs allocated, " << s.running_size() << " running, "
              << s.pending_size() << " waiting (" << pending_gpus
              << " GPUs); observed "
              << absl::FormatTime("%Y-%m-%dT%H:%M:%SZ",
                                  common::TimeFromProto(s.observe_time()),
                                  absl::UTCTimeZone())
              << ", arrived " << Span(r.age()) << " ago"
              << (r.stale() ? " (STALE)" : "") << "\n";
  }
  const v1::QueueHistorySummary& h = r.history();
  std::cout << "  history: " << h.finished_jobs() << " finished jobs (run p50 "
            << Span(h.run_time_p50()) << ", p90 " << Span(h.run_time_p90())
            << "), " << h.waits() << " waits (p50 " << Span(h.wait_p50())
            << ", p90 " << Span(h.wait_p90()) << "), " << h.checked_forecasts()
            << " plans' forecasts checked against their jobs' starts\n";
  if (h.calibration_size() > 0) {
    std::vector<std::string> points;
    for (const v1::CalibrationPoint& p : h.calibration()) {
      points.push_back(absl::StrFormat("p%.0f %.0f%%", 100 * p.probability(),
                                       100 * p.share_started()));
    }
    std::cout << "  started by the forecast's quantile (raw): "
              << absl::StrJoin(points, ", ") << "\n";
  }
  for (const v1::StartForecast& f : r.forecasts()) {
    std::cout << "  " << f.gpu_count() << " GPU(s): ";
    if (f.status() != v1::START_STATUS_KNOWN) {
      std::cout << f.reason() << "\n";
      continue;
    }
    std::vector<std::string> quantiles;
    for (const v1::StartQuantile& q : f.quantiles()) {
      quantiles.push_back(absl::StrFormat(
          "%.0f%% within %s", 100 * q.probability(), Span(q.within())));
    }
    std::cout << "start " << absl::StrJoin(quantiles, ", ") << "\n";
  }
}

std::string ReportLine(const v1::PoolState& s,
                       const v1::ReportPoolStateResponse& r) {
  int pending_gpus = 0;
  for (const v1::PoolJob& j : s.pending()) pending_gpus += j.gpus();
  std::string line = absl::StrCat(
      "pool ", s.pool(), ": ", s.gpus_allocated(), " of ", s.gpus_total(),
      " GPUs allocated, ", s.running_size(), " running, ", s.pending_size(),
      " waiting (", pending_gpus, " GPUs), ", s.finished_size(), " finished; ",
      r.duplicate() ? "already stored"
                    : absl::StrCat("stored (evidence version ",
                                   r.evidence_version(), ")"));
  for (const std::string& w : r.warnings()) absl::StrAppend(&line, "; ", w);
  return line;
}

int Report(v1::PoolStateService::Stub& stub, const v1::PoolState& state) {
  v1::ReportPoolStateRequest request;
  *request.mutable_state() = state;
  v1::ReportPoolStateResponse response;
  grpc::Status status =
      stub.ReportPoolState(ContextWithDeadline().get(), request, &response);
  if (!status.ok()) {
    std::cerr << "placectl: pool " << state.pool() << ": "
              << DescribeError(status) << "\n";
    return 1;
  }
  if (absl::GetFlag(FLAGS_json)) {
    std::cout << ToJson(response);
  } else {
    std::cout << ReportLine(state, response) << "\n";
  }
  return 0;
}

// What `command` prints; an error naming it when it cannot run or fails.
absl::StatusOr<std::string> Output(const std::string& command) {
  FILE* pipe = popen((command + " 2>&1").c_str(), "r");
  if (pipe == nullptr) {
    return absl::UnavailableError(absl::StrCat("cannot run ", command));
  }
  std::string out;
  char buffer[65536];
  size_t n;
  while ((n = fread(buffer, 1, sizeof(buffer), pipe)) > 0)
    out.append(buffer, n);
  const int status = pclose(pipe);
  if (status != 0) {
    return absl::UnavailableError(absl::StrCat(
        command, " exited ", WIFEXITED(status) ? WEXITSTATUS(status) : status,
        ": ", out.substr(0, 300)));
  }
  return out;
}

// Partition and command names go to a shell: plain characters only.
bool Plain(absl::string_view text) {
  return !text.empty() && std::all_of(text.begin(), text.end(), [](char c) {
    return absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '-' ||
           c == '_' || c == '.' || c == '/';
  });
}

// One pass: every pool with a partition reported.
int SlurmPass(v1::CatalogService::Stub& catalog,
              v1::PoolStateService::Stub& states) {
  std::vector<v1::Pool> pools;
  std::string token;
  do {
    v1::ListPoolsRequest request;
    request.set_page_token(token);
    v1::ListPoolsResponse response;
    grpc::Status status =
        catalog.ListPools(ContextWithDeadline().get(), request, &response);
    if (!status.ok()) return Fail(status);
    pools.insert(pools.end(), response.pools().begin(), response.pools().end());
    token = response.next_page_token();
  } while (!token.empty());
  const std::string scontrol = absl::GetFlag(FLAGS_scontrol);
  const std::string sinfo = absl::GetFlag(FLAGS_sinfo);
  if (!Plain(scontrol) || !Plain(sinfo)) {
    std::cerr << "placectl: --scontrol and --sinfo must be plain paths\n";
    return 2;
  }
  const absl::Time now = absl::Now();
  absl::StatusOr<std::string> jobs = Output(scontrol + " show job -o");
  absl::StatusOr<std::string> nodes = Output(scontrol + " show node -d -o");
  for (const absl::StatusOr<std::string>* out : {&jobs, &nodes}) {
    if (!out->ok()) {
      std::cerr << "placectl: " << out->status().message() << "\n";
      return 1;
    }
  }
  // "No jobs in the system" is printed when there are none.
  const std::vector<SlurmRecord> job_records = ParseScontrolLines(*jobs);
  const std::vector<SlurmRecord> node_records = ParseScontrolLines(*nodes);
  int code = 0;
  for (const v1::Pool& pool : pools) {
    auto label = pool.labels().find(absl::GetFlag(FLAGS_partition_label));
    const std::string partition =
        label != pool.labels().end() ? label->second : pool.name();
    if (!Plain(partition)) continue;
    absl::StatusOr<std::string> members =
        Output(absl::StrCat(sinfo, " -h -N -p ", partition, " -o %N"));
    if (!members.ok() || members->empty()) continue;  // no such partition
    std::vector<std::string> names;
    for (absl::string_view name :
         absl::StrSplit(*members, '\n', absl::SkipWhitespace())) {
      names.emplace_back(absl::StripAsciiWhitespace(name));
    }
    code = std::max(
        code, Report(states,
                     SlurmPoolState(pool.name(), partition, names, node_records,
                                    job_records, now, absl::LocalTimeZone())));
  }
  return code;
}

}  // namespace

int RunPoolState(const std::vector<std::string>& args) {
  if (args.size() != 1) {
    std::cerr << "usage: placectl pools state NAME [--gpu_counts 1,8]\n";
    return 2;
  }
  v1::GetPoolStateRequest request;
  request.set_pool(args[0]);
  for (absl::string_view g : absl::StrSplit(absl::GetFlag(FLAGS_gpu_counts),
                                            ',', absl::SkipEmpty())) {
    int n = 0;
    if (!absl::SimpleAtoi(g, &n)) {
      std::cerr << "placectl: --gpu_counts: expected numbers, got \"" << g
                << "\"\n";
      return 2;
    }
    request.add_gpu_counts(n);
  }
  auto stub =
      v1::PoolStateService::NewStub(clients::MakeChannel(ServerAddress()));
  v1::GetPoolStateResponse response;
  grpc::Status status =
      stub->GetPoolState(ContextWithDeadline().get(), request, &response);
  if (!status.ok()) return Fail(status);
  if (absl::GetFlag(FLAGS_json)) {
    std::cout << ToJson(response);
  } else {
    PrintPoolState(response);
  }
  return 0;
}

int RunPoolReport(const std::vector<std::string>& args) {
  if (args.size() != 1) {
    std::cerr << "usage: placectl pools report FILE|-\n";
    return 2;
  }
  std::stringstream text;
  if (args[0] == "-") {
    text << std::cin.rdbuf();
  } else {
    std::ifstream file(args[0]);
    if (!file) {
      std::cerr << "placectl: cannot read " << args[0] << "\n";
      return 2;
    }
    text << file.rdbuf();
  }
  // One JSON state a line, or one in the whole text.
  std::vector<std::string> documents;
  const std::string all = text.str();
  v1::PoolState whole;
  if (google::protobuf::util::JsonStringToMessage(all, &whole).ok()) {
    documents.push_back(all);
  } else {
    for (absl::string_view line :
         absl::StrSplit(all, '\n', absl::SkipWhitespace())) {
      documents.emplace_back(line);
    }
  }
  auto stub =
      v1::PoolStateService::NewStub(clients::MakeChannel(ServerAddress()));
  int code = 0;
  for (size_t i = 0; i < documents.size(); ++i) {
    v1::PoolState state;
    if (auto parsed =
            google::protobuf::util::JsonStringToMessage(documents[i], &state);
        !parsed.ok()) {
      std::cerr << "placectl: " << args[0] << ": state " << i + 1
                << " is not a PoolState: " << parsed.message() << "\n";
      return 2;
    }
    code = std::max(code, Report(*stub, state));
  }
  return code;
}

int RunSlurm(const std::vector<std::string>& args) {
  if (args.size() != 1 || args[0] != "report") {
    std::cerr << "usage: placectl slurm report [--interval 30s] "
                 "[--partition_label slurm-partition]\n";
    return 2;
  }
  auto channel = clients::MakeChannel(ServerAddress());
  auto catalog = v1::CatalogService::NewStub(channel);
  auto states = v1::PoolStateService::NewStub(channel);
  const absl::Duration interval = absl::GetFlag(FLAGS_interval);
  while (true) {
    const absl::Time started = absl::Now();
    const int code = SlurmPass(*catalog, *states);
    if (interval <= absl::ZeroDuration()) return code;
    // A failed pass is reported and the next one tried: a reporter beside
    // slurmctld outlives a restart of either side.
    absl::SleepFor(
        std::max(absl::ZeroDuration(), interval - (absl::Now() - started)));
  }
}

}  // namespace placement::placectl
