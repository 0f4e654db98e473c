// Failover of the PostgreSQL primary under load, with a real HA manager: one
// etcd member and two Patroni nodes (primary and synchronous standby, the
// configuration of deploy/patroni/) started by patroni_cluster.sh, and two
// placementd replicas given the libpq multi-host URL with
// target_session_attrs=read-write. Agents stream samples, upload runs and
// ask for plans (durable records) through the public API on both replicas
// while the primary's postmaster is killed with SIGKILL, and again while
// the primary is switched over cleanly. In both cases: every acknowledged
// write is on the new primary (nothing lost), nothing is stored twice, both
// replicas serve again without a restart, and clients saw only codes they
// retry. The client-visible error window and the throughput before and
// after are printed, as is the cost of synchronous replication.
//
// One cluster serves the whole suite (it takes seconds to start): ctest runs
// the binary as one test. Skipped, with the reason, where Patroni or etcd is
// not installed (scripts/install-test-deps installs them).
#include <signal.h>

#include <algorithm>
#include <atomic>
#include <iostream>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "placement/v1/catalog.grpc.pb.h"
#include "placement/v1/placement.grpc.pb.h"
#include "placement/v1/telemetry.grpc.pb.h"
#include "tests/support/api_client.h"
#include "tests/support/fixtures.h"
#include "tests/support/placementd_process.h"

namespace placement {
namespace {

using ::placement::testing::Deadline;
using ::placement::testing::NewUuid;
using ::placement::testing::PlacementdPath;
using ::placement::testing::PlacementdProcess;
using ::placement::testing::RunCommand;
using ::placement::testing::SourceDir;
using ::placement::testing::SucceededRun;
using ::placement::testing::TrainingPool;

constexpr char kSku[] = "L40S-PCIE-48GB";
constexpr char kPool[] = "l40s";

std::string ClusterScript() {
  return SourceDir() + "/tests/failover/patroni_cluster.sh";
}

// The cluster of the suite; its folder is removed by Stop().
class PatroniCluster {
 public:
  // Exit code of `patroni_cluster.sh COMMAND DIR ARGS`, stdout in `output`.
  int Run(const std::string& command, std::string* output = nullptr,
          const std::string& args = "") const {
    std::string text;
    const int code = RunCommand(
        absl::StrCat(ClusterScript(), " ", command, " ", dir_, " ", args),
        &text);
    if (output != nullptr) {
      *output = std::string(absl::StripTrailingAsciiWhitespace(text));
    }
    return code;
  }

  bool Start(std::string* error) {
    char dir[] = "/tmp/placement-patroni-XXXXXX";
    if (mkdtemp(dir) == nullptr) return false;
    dir_ = dir;
    std::string output;
    if (Run("start", &output) != 0) {
      *error = output;
      return false;
    }
    url_ = output;
    return true;
  }
  void Stop() {
    if (!dir_.empty()) Run("stop");
    dir_.clear();
  }

  // The multi-host URL of the "postgres" database.
  const std::string& url() const { return url_; }

  // The first column of the first row of `sql` on the primary.
  std::string Query(const std::string& sql) const {
    std::string output;
    RunCommand(absl::StrCat("psql '", url_, "' -qtAc \"", sql, "\" 2>&1"),
               &output);
    return std::string(absl::StripTrailingAsciiWhitespace(output));
  }

 private:
  std::string dir_;
  std::string url_;
};

// What one client call came to.
struct Call {
  absl::Time start;
  absl::Time end;
  grpc::StatusCode code;
  bool write;           // an acknowledged write when code is OK
  std::string message;  // the error's, with the call's name
};

// Every call of the load, for the error window and the throughput.
class CallLog {
 public:
  void Add(absl::Time start, const grpc::Status& status, bool write,
           const char* call) {
    absl::MutexLock lock(&mu_);
    calls_.push_back(
        {start, absl::Now(), status.error_code(), write,
         status.ok() ? "" : absl::StrCat(call, ": ", status.error_message())});
  }
  std::vector<Call> Calls() {
    absl::MutexLock lock(&mu_);
    return calls_;
  }

 private:
  absl::Mutex mu_;
  std::vector<Call> calls_;
};

// `text` as an integer; fails the test (and returns 0) when it is not one,
// e.g. psql's error when no primary answers.
int64_t Integer(const std::string& text) {
  int64_t value = 0;
  if (!absl::SimpleAtoi(text, &value)) {
    ADD_FAILURE() << "not a number: " << text;
  }
  return value;
}

bool Retryable(grpc::StatusCode code) {
  // UNAVAILABLE: no primary, or the connection broke (a COMMIT in doubt
  // too). DEADLINE_EXCEEDED: a commit waiting for the synchronous standby
  // outlived the call. ABORTED: a transaction conflict. RESOURCE_EXHAUSTED:
  // the database queue filled while commits waited ("retry with backoff").
  return code == grpc::StatusCode::UNAVAILABLE ||
         code == grpc::StatusCode::DEADLINE_EXCEEDED ||
         code == grpc::StatusCode::ABORTED ||
         code == grpc::StatusCode::RESOURCE_EXHAUSTED;
}

bool HasWarning(const v1::PlacePlanResponse& plan, const std::string& prefix) {
  for (const std::string& w : plan.warnings()) {
    if (absl::StartsWith(w, prefix)) return true;
  }
  return false;
}

v1::StreamStepSamplesRequest Batch(const std::string& run_id, int64_t first,
                                   int64_t count) {
  v1::StreamStepSamplesRequest request;
  request.set_run_id(run_id);
  // A hundred steps a second, from a day ago: never in the future.
  const int64_t start = absl::ToUnixSeconds(absl::Now()) - 86400;
  for (int64_t step = first; step < first + count; ++step) {
    v1::StepSample* s = request.add_samples();
    s->set_step(step);
    s->mutable_time()->set_seconds(start + step / 100);
    s->set_step_time_seconds(0.1);
    s->set_memory_allocated_gb(30);
    s->set_memory_reserved_gb(32);
    s->set_tokens(4096);
  }
  return request;
}

// What the clients were told was stored.
struct Acknowledged {
  absl::Mutex mu;
  std::map<std::string, int64_t> samples_through;  // run -> last step acked
  std::set<std::string> runs;                      // uploads acknowledged
  std::set<std::string> runs_attempted;
  std::set<std::string> plans;     // plans answered with their record
  int64_t plans_not_recorded = 0;  // answered, record refused (said so)
  std::map<grpc::StatusCode, int64_t> refusals;
  std::map<grpc::StatusCode, std::string> first_message;  // of each code
};

// Agents on both replicas: sample streams (resumed from the committed step
// after a failure), uploads retried under their run_id until acknowledged,
// and PlacePlan calls. Runs until Stop().
class Load {
 public:
  Load(std::vector<std::shared_ptr<grpc::Channel>> channels, CallLog& log,
       Acknowledged& acked)
      : channels_(std::move(channels)), log_(log), acked_(acked) {}
  ~Load() { Stop(); }

  void Start() {
    for (int i = 0; i < 4; ++i) {
      threads_.emplace_back([this, i] { Stream(channels_[i % 2]); });
    }
    for (int i = 0; i < 2; ++i) {
      threads_.emplace_back([this, i] { Upload(channels_[i % 2]); });
      threads_.emplace_back([this, i] { Plan(channels_[(i + 1) % 2]); });
    }
  }
  void Stop() {
    stop_ = true;
    for (std::thread& t : threads_) t.join();
    threads_.clear();
  }

 private:
  void Refused(const grpc::Status& status, const std::string& call) {
    absl::MutexLock lock(&acked_.mu);
    if (acked_.refusals[status.error_code()]++ == 0) {
      acked_.first_message[status.error_code()] =
          absl::StrCat(call, ": ", status.error_message());
    }
  }

  void Stream(std::shared_ptr<grpc::Channel> channel) {
    constexpr int64_t kBatch = 50;
    auto telemetry = v1::TelemetryService::NewStub(channel);
    const std::string run_id = NewUuid();
    int64_t next = 0;
    while (!stop_) {
      const absl::Time start = absl::Now();
      auto context = Deadline(5);
      v1::StreamStepSamplesResponse response;
      auto writer = telemetry->StreamStepSamples(context.get(), &response);
      for (int i = 0; i < 2; ++i) {
        if (!writer->Write(Batch(run_id, next + i * kBatch, kBatch))) break;
      }
      writer->WritesDone();
      const grpc::Status status = writer->Finish();
      log_.Add(start, status, true, "StreamStepSamples");
      if (status.ok()) {
        absl::MutexLock lock(&acked_.mu);
        acked_.samples_through[run_id] = response.committed_through_step();
        next = response.committed_through_step() + 1;
        continue;
      }
      Refused(status, "StreamStepSamples");
      // Resume from what the service committed: the tail is re-sent.
      absl::SleepFor(absl::Milliseconds(100));
      v1::GetSampleProgressRequest request;
      request.set_run_id(run_id);
      v1::GetSampleProgressResponse progress;
      if (telemetry->GetSampleProgress(Deadline(5).get(), request, &progress)
              .ok()) {
        next = progress.committed_through_step() + 1;
      }
    }
  }

  void Upload(std::shared_ptr<grpc::Channel> channel) {
    auto telemetry = v1::TelemetryService::NewStub(channel);
    std::string pending;
    while (!stop_) {
      if (pending.empty()) pending = NewUuid();
      v1::UploadBenchmarkRunRequest upload;
      *upload.mutable_run() = SucceededRun(kPool, kSku);
      upload.mutable_run()->set_run_id(pending);
      upload.mutable_run()->mutable_start_time()->set_seconds(1'790'000'000);
      upload.mutable_run()->mutable_end_time()->set_seconds(1'790'003'600);
      {
        absl::MutexLock lock(&acked_.mu);
        acked_.runs_attempted.insert(pending);
      }
      const absl::Time start = absl::Now();
      v1::UploadBenchmarkRunResponse ack;
      const grpc::Status status =
          telemetry->UploadBenchmarkRun(Deadline(5).get(), upload, &ack);
      log_.Add(start, status, true, "UploadBenchmarkRun");
      if (status.ok()) {
        absl::MutexLock lock(&acked_.mu);
        acked_.runs.insert(pending);
        pending.clear();
      } else {
        Refused(status, "UploadBenchmarkRun");
        absl::SleepFor(absl::Milliseconds(100));
      }
    }
  }

  void Plan(std::shared_ptr<grpc::Channel> channel) {
    auto placement = v1::PlacementService::NewStub(channel);
    v1::PlacePlanRequest request;
    *request.mutable_recipe() = SucceededRun(kPool, kSku).recipe();
    request.set_total_steps(1000);
    while (!stop_) {
      const absl::Time start = absl::Now();
      v1::PlacePlanResponse plan;
      const grpc::Status status =
          placement->PlacePlan(Deadline(5).get(), request, &plan);
      const bool recorded = status.ok() && !HasWarning(plan, "not_recorded");
      log_.Add(start, status, recorded, "PlacePlan");
      if (!status.ok()) {
        Refused(status, "PlacePlan");
      } else {
        absl::MutexLock lock(&acked_.mu);
        if (recorded) {
          acked_.plans.insert(plan.plan_id());
        } else {
          ++acked_.plans_not_recorded;
        }
      }
      if (!recorded) absl::SleepFor(absl::Milliseconds(100));
    }
  }

  std::vector<std::shared_ptr<grpc::Channel>> channels_;
  CallLog& log_;
  Acknowledged& acked_;
  std::atomic<bool> stop_{false};
  std::vector<std::thread> threads_;
};

// Acknowledged writes per second that ended in [from, to).
double WritesPerSecond(const std::vector<Call>& calls, absl::Time from,
                       absl::Time to) {
  int64_t n = 0;
  for (const Call& c : calls) {
    if (c.write && c.code == grpc::StatusCode::OK && c.end >= from &&
        c.end < to) {
      ++n;
    }
  }
  return n / absl::ToDoubleSeconds(to - from);
}

struct Window {
  absl::Duration failed_span;  // the fault to the last failed call's end
  absl::Duration write_gap;    // longest time without an acknowledged write
  int64_t failed_calls = 0;
  std::string last_failure;  // the message of the call that ended it
};

Window ErrorWindow(std::vector<Call> calls, absl::Time fault) {
  Window w;
  absl::Time last_failed = absl::InfinitePast();
  for (const Call& c : calls) {
    if (c.code == grpc::StatusCode::OK) continue;
    ++w.failed_calls;
    if (c.end > last_failed) {
      last_failed = c.end;
      w.last_failure =
          absl::StrFormat("%.1f s after the fault: %s",
                          absl::ToDoubleSeconds(c.end - fault), c.message);
    }
  }
  // From the fault until the last failed call ended: every call that
  // ended later succeeded.
  w.failed_span =
      w.failed_calls == 0 ? absl::ZeroDuration() : last_failed - fault;
  std::sort(calls.begin(), calls.end(),
            [](const Call& a, const Call& b) { return a.end < b.end; });
  absl::Time previous = fault;
  w.write_gap = absl::ZeroDuration();
  for (const Call& c : calls) {
    if (!c.write || c.code != grpc::StatusCode::OK || c.end < fault) continue;
    w.write_gap = std::max(w.write_gap, c.end - previous);
    previous = c.end;
  }
  return w;
}

class FailoverTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    std::string output;
    if (RunCommand(ClusterScript() + " check", &output) != 0) {
      skip_reason_ = new std::string(
          absl::StripTrailingAsciiWhitespace(output).empty()
              ? "patroni_cluster.sh check failed"
              : std::string(absl::StripTrailingAsciiWhitespace(output)));
      return;
    }
    cluster_ = new PatroniCluster;
    std::string error;
    if (!cluster_->Start(&error)) {
      setup_error_ =
          new std::string("the Patroni cluster did not start:\n" + error);
      return;
    }
    if (RunCommand(
            absl::StrCat(PlacementdPath(), " migrate up --database_url='",
                         cluster_->url(), "' 2>&1"),
            &output) != 0) {
      setup_error_ = new std::string("migrate up failed:\n" + output);
    }
  }
  static void TearDownTestSuite() {
    if (cluster_ != nullptr) cluster_->Stop();
    delete cluster_;
    cluster_ = nullptr;
  }

  void SetUp() override {
    if (skip_reason_ != nullptr) GTEST_SKIP() << *skip_reason_;
    ASSERT_EQ(setup_error_, nullptr) << *setup_error_;
    ASSERT_EQ(cluster_->Run("wait-healthy", nullptr, "60"), 0);
    for (int i = 0; i < 2; ++i) {
      auto process = PlacementdProcess::Start(cluster_->url());
      ASSERT_TRUE(process.ok()) << process.status();
      ASSERT_TRUE((*process)->WaitForHealth(true, absl::Seconds(20)))
          << (*process)->LogTail();
      replicas_.push_back(*std::move(process));
    }
    v1::CreatePoolRequest request;
    *request.mutable_pool() = TrainingPool(kPool, kSku, 4, 8);
    v1::CreatePoolResponse response;
    const grpc::Status status =
        v1::CatalogService::NewStub(replicas_[0]->channel())
            ->CreatePool(Deadline().get(), request, &response);
    ASSERT_TRUE(status.ok() ||
                status.error_code() == grpc::StatusCode::ALREADY_EXISTS)
        << status.error_message();
    // The pool reaches each replica's memory through NOTIFY.
    for (const auto& replica : replicas_) {
      testing::ApiClient client(replica->channel());
      v1::PlacePlanRequest plan;
      *plan.mutable_recipe() = SucceededRun(kPool, kSku).recipe();
      plan.set_total_steps(1000);
      client.PlanUntil(
          plan,
          [](const v1::PlacePlanResponse& r) {
            return r.candidates_size() > 0;
          },
          absl::Seconds(10));
    }
  }

  std::vector<std::shared_ptr<grpc::Channel>> Channels() const {
    return {replicas_[0]->channel(), replicas_[1]->channel()};
  }

  // What a fault came to, as the cluster reported it.
  struct Switch {
    std::string old_primary;
    std::string new_primary;
    absl::Time load_start;
    absl::Time fault;
    absl::Duration promoted;  // until a new primary was seen
    absl::Duration healthy;   // until the old one was its standby
    absl::Time load_end;
  };

  // Load, then `fault_command` (which prints the old primary's name), then
  // load until the cluster is healthy again and a second of calls all
  // succeeded, and 3 s more.
  void RunThroughFault(const std::string& what,
                       const std::string& fault_command, CallLog& log,
                       Acknowledged& acked, Switch& fault) {
    Load load(Channels(), log, acked);
    load.Start();
    fault.load_start = absl::Now();
    absl::SleepFor(absl::Seconds(4));
    fault.fault = absl::Now();
    ASSERT_EQ(cluster_->Run(fault_command, &fault.old_primary), 0)
        << fault.old_primary;
    // The standby promoted, then the old primary back as the synchronous
    // standby (strict synchronous mode on two nodes: writes wait for it).
    if (cluster_->Run("wait-new-leader", &fault.new_primary,
                      fault.old_primary + " 30") != 0) {
      // Patroni restarts a crashed primary in place instead when it cannot
      // confirm that the standby is fit to take over (its REST API must
      // answer within 2 s, its WAL be within maximum_lag_on_failover):
      // nothing is lost that way either, but it is not the failover under
      // test. Say why, and fail.
      std::string why;
      cluster_->Run("failover-log", &why);
      ADD_FAILURE() << what << ": " << fault.old_primary
                    << " is still the primary; Patroni said:\n"
                    << why;
    }
    fault.promoted = absl::Now() - fault.fault;
    EXPECT_EQ(cluster_->Run("wait-healthy", nullptr, "60"), 0);
    fault.healthy = absl::Now() - fault.fault;
    bool recovered = false;
    const absl::Time give_up = absl::Now() + absl::Seconds(60);
    while (!recovered && absl::Now() < give_up) {
      absl::SleepFor(absl::Seconds(1));
      const absl::Time now = absl::Now();
      bool clean = true;
      int64_t writes = 0;
      for (const Call& c : log.Calls()) {
        if (c.end < now - absl::Seconds(1)) continue;
        clean = clean && c.code == grpc::StatusCode::OK;
        writes += c.write && c.code == grpc::StatusCode::OK;
      }
      recovered = clean && writes > 0;
    }
    ASSERT_TRUE(recovered) << "calls still fail";
    absl::SleepFor(absl::Seconds(3));
    fault.load_end = absl::Now();
  }

  // Every acknowledged sample, run and plan record against what the new
  // primary holds.
  struct Stored {
    int64_t samples = 0;     // acknowledged
    int64_t lost = 0;        // acknowledged but not stored
    int64_t duplicated = 0;  // stored more than once
  };
  Stored CheckStored(const Acknowledged& acked) const {
    Stored stored;
    for (const auto& [run, through] : acked.samples_through) {
      // count, distinct steps, steps up to the acknowledged one
      const std::string got = cluster_->Query(absl::StrCat(
          "SELECT count(*) || '/' || count(DISTINCT step) || '/' || "
          "count(*) FILTER (WHERE step <= ",
          through, ") FROM step_samples WHERE run_id = '", run, "'"));
      const std::vector<std::string> parts = absl::StrSplit(got, '/');
      if (parts.size() != 3) {
        ADD_FAILURE() << got;
        continue;
      }
      stored.lost += (through + 1) - Integer(parts[2]);
      stored.duplicated += Integer(parts[0]) - Integer(parts[1]);
      stored.samples += through + 1;
    }
    auto stored_of = [&](const std::set<std::string>& ids,
                         const std::string& table, const std::string& column) {
      if (ids.empty()) return int64_t{0};
      return Integer(cluster_->Query(absl::StrCat(
          "SELECT count(DISTINCT ", column, ") FROM ", table, " WHERE ", column,
          " IN ('", absl::StrJoin(ids, "','"), "')")));
    };
    stored.lost +=
        acked.runs.size() - stored_of(acked.runs, "benchmark_runs", "run_id");
    stored.lost +=
        acked.plans.size() - stored_of(acked.plans, "placements", "plan_id");
    stored.duplicated += Integer(cluster_->Query(
        "SELECT count(*) - count(DISTINCT run_id) FROM benchmark_runs"));
    stored.duplicated += Integer(cluster_->Query(
        "SELECT count(*) - count(DISTINCT plan_id) FROM placements"));
    return stored;
  }

  // Both replicas serve again, without a restart (the same processes), and
  // plan from evidence that includes every run stored, the ones committed
  // on the new primary by the other replica too: each replica's snapshot
  // followed the switch (its listener reconnected to the new primary, then
  // it re-read).
  void CheckReplicasServe() const {
    for (const auto& replica : replicas_) {
      EXPECT_TRUE(replica->WaitForHealth(true, absl::Seconds(10)))
          << replica->LogTail();
      v1::UploadBenchmarkRunRequest upload;
      *upload.mutable_run() = SucceededRun(kPool, kSku);
      v1::UploadBenchmarkRunResponse ack;
      EXPECT_TRUE(v1::TelemetryService::NewStub(replica->channel())
                      ->UploadBenchmarkRun(Deadline().get(), upload, &ack)
                      .ok())
          << replica->LogTail();
      EXPECT_EQ(kill(replica->pid(), 0), 0);
    }
    const int64_t runs_stored =
        Integer(cluster_->Query("SELECT count(*) FROM benchmark_runs"));
    for (const auto& replica : replicas_) {
      testing::ApiClient client(replica->channel());
      v1::PlacePlanRequest plan;
      *plan.mutable_recipe() = SucceededRun(kPool, kSku).recipe();
      plan.set_total_steps(1000);
      client.PlanUntil(plan, testing::Measured(kPool, runs_stored),
                       absl::Seconds(15));
    }
  }

  // The fault under load, then the assertions of the issue and the
  // figures. `what` names the case in the output.
  void FailOverUnderLoad(const std::string& what,
                         const std::string& fault_command) {
    CallLog log;
    Acknowledged acked;
    Switch fault;
    RunThroughFault(what, fault_command, log, acked, fault);
    if (HasFatalFailure()) return;

    const std::vector<Call> calls = log.Calls();
    const Window window = ErrorWindow(calls, fault.fault);
    int64_t failed_after_healthy = 0;
    for (const Call& c : calls) {
      failed_after_healthy +=
          c.code != grpc::StatusCode::OK && c.end > fault.fault + fault.healthy;
    }
    // Clients saw only codes they retry.
    std::string refusals;
    for (const auto& [code, n] : acked.refusals) {
      EXPECT_TRUE(Retryable(code)) << "code " << code << " seen " << n
                                   << "x, first: " << acked.first_message[code];
      absl::StrAppend(&refusals, " code ", code, ": ", n);
    }
    // Nothing acknowledged is lost; nothing is stored twice.
    const Stored stored = CheckStored(acked);
    EXPECT_EQ(stored.lost, 0);
    EXPECT_EQ(stored.duplicated, 0);
    EXPECT_GT(stored.samples, 0);
    EXPECT_GT(acked.runs.size(), 0u);
    EXPECT_GT(acked.plans.size(), 0u);
    CheckReplicasServe();

    std::cout << absl::StrFormat(
        "%s: primary %s -> %s; acknowledged %d samples, %d uploads, %d plan "
        "records: lost %d, stored twice %d; %d plans answered without their "
        "record (said so)\n"
        "%s: client-visible error window %.1f s (from the fault to the end of "
        "the last failed call; %d failed calls:%s), longest time without an "
        "acknowledged write %.1f s; the last failure: %s\n"
        "%s: new primary seen after %.1f s, synchronous standby back after "
        "%.1f s (as Patroni's REST API reports them, polled); %d calls "
        "failed after that\n"
        "%s: acknowledged writes/s before %.0f, after %.0f\n",
        what, fault.old_primary, fault.new_primary, stored.samples,
        acked.runs.size(), acked.plans.size(), stored.lost, stored.duplicated,
        acked.plans_not_recorded, what,
        absl::ToDoubleSeconds(window.failed_span), window.failed_calls,
        refusals.empty() ? " none" : refusals,
        absl::ToDoubleSeconds(window.write_gap), window.last_failure, what,
        absl::ToDoubleSeconds(fault.promoted),
        absl::ToDoubleSeconds(fault.healthy), failed_after_healthy, what,
        WritesPerSecond(calls, fault.load_start + absl::Seconds(1),
                        fault.fault),
        WritesPerSecond(calls, fault.load_end - absl::Seconds(3),
                        fault.load_end));
  }

  static std::string* skip_reason_;
  static std::string* setup_error_;
  static PatroniCluster* cluster_;
  std::vector<std::unique_ptr<PlacementdProcess>> replicas_;
};

std::string* FailoverTest::skip_reason_ = nullptr;
std::string* FailoverTest::setup_error_ = nullptr;
PatroniCluster* FailoverTest::cluster_ = nullptr;

TEST_F(FailoverTest, KillNineOfThePrimaryLosesNothingAcknowledged) {
  FailOverUnderLoad("kill -9 of the primary's postmaster", "kill-primary");
}

TEST_F(FailoverTest, SwitchoverLosesNothingAcknowledged) {
  FailOverUnderLoad("switchover", "switchover");
}

// The price of an acknowledged write being on both nodes: the same upload
// load with synchronous replication (strict) and with asynchronous
// replication, from one client (each commit's latency) and from eight
// (commits shared by concurrent writers). Printed, not asserted: it
// depends on the machine.
TEST_F(FailoverTest, SynchronousReplicationCost) {
  auto uploads_per_second = [&](int clients_count) {
    std::atomic<bool> stop{false};
    std::atomic<int64_t> acknowledged{0};
    std::vector<std::thread> clients;
    for (int c = 0; c < clients_count; ++c) {
      clients.emplace_back([&, c] {
        auto telemetry =
            v1::TelemetryService::NewStub(replicas_[c % 2]->channel());
        while (!stop) {
          v1::UploadBenchmarkRunRequest upload;
          *upload.mutable_run() = SucceededRun(kPool, kSku);
          v1::UploadBenchmarkRunResponse ack;
          if (telemetry->UploadBenchmarkRun(Deadline(5).get(), upload, &ack)
                  .ok()) {
            ++acknowledged;
          }
        }
      });
    }
    absl::SleepFor(absl::Seconds(1));  // warm up
    const int64_t from = acknowledged.load();
    absl::SleepFor(absl::Seconds(4));
    const int64_t n = acknowledged.load() - from;
    stop = true;
    for (std::thread& t : clients) t.join();
    return n / 4.0;
  };
  const double synchronous_1 = uploads_per_second(1);
  const double synchronous_8 = uploads_per_second(8);
  ASSERT_EQ(cluster_->Run("sync", nullptr, "off"), 0);
  const double asynchronous_1 = uploads_per_second(1);
  const double asynchronous_8 = uploads_per_second(8);
  ASSERT_EQ(cluster_->Run("sync", nullptr, "on"), 0);
  EXPECT_GT(synchronous_1, 0);
  EXPECT_GT(asynchronous_1, 0);
  EXPECT_GT(synchronous_8, 0);
  EXPECT_GT(asynchronous_8, 0);
  for (const auto& [clients, synchronous, asynchronous] :
       {std::tuple(1, synchronous_1, asynchronous_1),
        std::tuple(8, synchronous_8, asynchronous_8)}) {
    std::cout << absl::StrFormat(
        "uploads/s, %d client(s) on 2 replicas: synchronous replication "
        "%.0f, asynchronous %.0f: synchronous/asynchronous = %.2f\n",
        clients, synchronous, asynchronous,
        asynchronous > 0 ? synchronous / asynchronous : 0);
  }
}

}  // namespace
}  // namespace placement
