#include "clients/placectl/slurm_state.h"

#include <algorithm>
#include <set>
#include <tuple>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "common/proto_time.h"

namespace placement::placectl {
namespace {

std::string Field(const SlurmRecord& record, const std::string& key) {
  auto it = record.find(key);
  return it == record.end() ? "" : it->second;
}

// The GPU count of one entry: "gpu:a100:8(S:0)", "gres:gpu:8", "gres/gpu=8",
// "gres/gpu:a100=2".
int GpusOfEntry(absl::string_view entry) {
  entry = entry.substr(0, entry.find('('));
  if (!absl::StrContains(entry, "gpu")) return 0;
  // "gres/gpu:a100=2": "gres/gpu=8" counts typed and untyped alike, so only
  // the untyped total is taken.
  if (absl::StrContains(entry, "=")) {
    const std::pair<absl::string_view, absl::string_view> kv =
        absl::StrSplit(entry, absl::MaxSplits('=', 1));
    if (kv.first != "gres/gpu") return 0;
    int n = 0;
    return absl::SimpleAtoi(kv.second, &n) ? n : 0;
  }
  const size_t colon = entry.rfind(':');
  int n = 0;
  if (colon == absl::string_view::npos) return 0;
  return absl::SimpleAtoi(entry.substr(colon + 1), &n) ? n : 0;
}

bool InService(const SlurmRecord& node) {
  const std::string state = absl::AsciiStrToUpper(Field(node, "State"));
  return !absl::StrContains(state, "DOWN") &&
         !absl::StrContains(state, "DRAIN") &&
         !absl::StrContains(state, "FAIL") &&
         !absl::StrContains(state, "FUTURE");
}

// GPUs of a job: per node x nodes, else per job, else what it was given.
int JobGpus(const SlurmRecord& job) {
  int nodes = 1;
  if (!absl::SimpleAtoi(Field(job, "NumNodes"), &nodes) || nodes < 1) {
    nodes = 1;
  }
  if (int per_node = GpusIn(Field(job, "TresPerNode")); per_node > 0) {
    return per_node * nodes;
  }
  if (int per_job = GpusIn(Field(job, "TresPerJob")); per_job > 0) {
    return per_job;
  }
  if (int given = GpusIn(Field(job, "AllocTRES")); given > 0) return given;
  return GpusIn(Field(job, "ReqTRES"));
}

// The plan id a job_submit hook wrote: "placement:plan=ID".
std::string PlanId(const SlurmRecord& job) {
  const std::string comment = Field(job, "AdminComment");
  const size_t at = comment.find("placement:plan=");
  if (at == std::string::npos) return "";
  std::string id = comment.substr(at + 15);
  const size_t end = id.find_first_of(" ,;");
  return end == std::string::npos ? id : id.substr(0, end);
}

void FillJob(const SlurmRecord& record, int gpus, absl::TimeZone zone,
             bool started, v1::PoolJob* job) {
  job->set_job_id(Field(record, "JobId"));
  job->set_gpus(gpus);
  if (auto t = SlurmTime(Field(record, "SubmitTime"), zone)) {
    common::TimeToProto(*t, job->mutable_submit_time());
  }
  if (started) {
    if (auto t = SlurmTime(Field(record, "StartTime"), zone)) {
      common::TimeToProto(*t, job->mutable_start_time());
    }
  }
  if (auto limit = SlurmDuration(Field(record, "TimeLimit"))) {
    common::DurationToProto(*limit, job->mutable_time_limit());
  }
  job->set_plan_id(PlanId(record));
}

bool Ended(const std::string& state) {
  return state == "COMPLETED" || state == "FAILED" || state == "TIMEOUT" ||
         state == "CANCELLED" || state == "NODE_FAIL" ||
         state == "OUT_OF_MEMORY" || state == "PREEMPTED" ||
         state == "BOOT_FAIL" || state == "DEADLINE";
}

}  // namespace

std::vector<SlurmRecord> ParseScontrolLines(absl::string_view text) {
  std::vector<SlurmRecord> records;
  for (absl::string_view line : absl::StrSplit(text, '\n', absl::SkipEmpty())) {
    SlurmRecord record;
    std::string last;
    for (absl::string_view word :
         absl::StrSplit(line, ' ', absl::SkipWhitespace())) {
      const size_t eq = word.find('=');
      if (eq == absl::string_view::npos || eq == 0) {
        if (!last.empty()) absl::StrAppend(&record[last], " ", word);
        continue;
      }
      last = std::string(word.substr(0, eq));
      record[last] = std::string(word.substr(eq + 1));
    }
    if (!record.empty()) records.push_back(std::move(record));
  }
  return records;
}

int GpusIn(absl::string_view text) {
  int total = 0;
  for (absl::string_view entry : absl::StrSplit(text, ',')) {
    total += GpusOfEntry(entry);
  }
  return total;
}

std::optional<absl::Time> SlurmTime(absl::string_view text,
                                    absl::TimeZone zone) {
  absl::Time t;
  std::string error;
  if (text.empty() ||
      !absl::ParseTime("%Y-%m-%dT%H:%M:%S", text, zone, &t, &error)) {
    return std::nullopt;  // Unknown, None, N/A
  }
  return t;
}

std::optional<absl::Duration> SlurmDuration(absl::string_view text) {
  int64_t days = 0;
  absl::string_view rest = text;
  if (const size_t dash = text.find('-'); dash != absl::string_view::npos) {
    if (!absl::SimpleAtoi(text.substr(0, dash), &days)) return std::nullopt;
    rest = text.substr(dash + 1);
  }
  std::vector<int64_t> parts;
  for (absl::string_view p : absl::StrSplit(rest, ':')) {
    int64_t n = 0;
    if (!absl::SimpleAtoi(p, &n) || n < 0) return std::nullopt;
    parts.push_back(n);
  }
  absl::Duration d = absl::Hours(24 * days);
  if (text.find('-') != absl::string_view::npos) {
    // days-hours[:minutes[:seconds]]
    const absl::Duration units[] = {absl::Hours(1), absl::Minutes(1),
                                    absl::Seconds(1)};
    for (size_t i = 0; i < parts.size() && i < 3; ++i) d += parts[i] * units[i];
  } else if (parts.size() == 3) {
    d += absl::Hours(parts[0]) + absl::Minutes(parts[1]) +
         absl::Seconds(parts[2]);
  } else if (parts.size() == 2) {
    d += absl::Minutes(parts[0]) + absl::Seconds(parts[1]);
  } else if (parts.size() == 1) {
    d += absl::Minutes(parts[0]);
  } else {
    return std::nullopt;
  }
  if (d <= absl::ZeroDuration()) return std::nullopt;
  return d;
}

v1::PoolState SlurmPoolState(const std::string& pool,
                             const std::string& partition,
                             const std::vector<std::string>& partition_nodes,
                             const std::vector<SlurmRecord>& nodes,
                             const std::vector<SlurmRecord>& jobs,
                             absl::Time now, absl::TimeZone zone) {
  v1::PoolState state;
  state.set_pool(pool);
  common::TimeToProto(now, state.mutable_observe_time());
  const std::set<std::string> mine(partition_nodes.begin(),
                                   partition_nodes.end());
  int total = 0;
  int allocated = 0;
  for (const SlurmRecord& node : nodes) {
    if (!mine.contains(Field(node, "NodeName")) || !InService(node)) continue;
    total += GpusIn(Field(node, "Gres"));
    allocated += GpusIn(Field(node, "GresUsed"));
  }
  struct Pending {
    int64_t priority;
    absl::Time submitted;
    int64_t id;
    const SlurmRecord* record;
    int gpus;
  };
  std::vector<Pending> pending;
  int running_gpus = 0;
  for (const SlurmRecord& job : jobs) {
    const std::vector<std::string> partitions =
        absl::StrSplit(Field(job, "Partition"), ',');
    if (std::find(partitions.begin(), partitions.end(), partition) ==
        partitions.end()) {
      continue;
    }
    const int gpus = JobGpus(job);
    if (gpus < 1) continue;
    const std::string job_state = Field(job, "JobState");
    if (job_state == "RUNNING" || job_state == "COMPLETING" ||
        job_state == "SUSPENDED") {
      FillJob(job, gpus, zone, /*started=*/true, state.add_running());
      running_gpus += gpus;
    } else if (job_state == "PENDING") {
      int64_t priority = 0;
      int64_t id = 0;
      (void)absl::SimpleAtoi(Field(job, "Priority"), &priority);
      // A held job (priority 0, JobHeldUser/JobHeldAdmin) is not in line.
      if (priority == 0 || absl::StartsWith(Field(job, "Reason"), "JobHeld")) {
        continue;
      }
      (void)absl::SimpleAtoi(Field(job, "JobId"), &id);
      pending.push_back(
          {priority, SlurmTime(Field(job, "SubmitTime"), zone).value_or(now),
           id, &job, gpus});
    } else if (Ended(job_state)) {
      auto start = SlurmTime(Field(job, "StartTime"), zone);
      auto end = SlurmTime(Field(job, "EndTime"), zone);
      // A job cancelled while it waited never ran: no run time to learn.
      if (!start || !end || *end <= *start || *end > now) continue;
      v1::PoolJob* done = state.add_finished();
      FillJob(job, gpus, zone, /*started=*/true, done);
      common::TimeToProto(*end, done->mutable_end_time());
    }
  }
  std::sort(pending.begin(), pending.end(),
            [](const Pending& a, const Pending& b) {
              return std::make_tuple(-a.priority, a.submitted, a.id) <
                     std::make_tuple(-b.priority, b.submitted, b.id);
            });
  for (const Pending& p : pending) {
    FillJob(*p.record, p.gpus, zone, /*started=*/false, state.add_pending());
  }
  state.set_gpus_total(total);
  // Jobs the report lists hold at least what they hold, whatever the nodes
  // printed.
  state.set_gpus_allocated(std::min(total, std::max(allocated, running_gpus)));
  return state;
}

}  // namespace placement::placectl
