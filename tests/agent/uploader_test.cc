// FlushSpool against an in-process TelemetryService that answers as told:
// only a refusal of the run itself (INVALID_ARGUMENT, ALREADY_EXISTS) moves
// it to rejected/; a revoked token, a server fault or an old server keeps
// every run spooled and says so; a run missing a sample line is skipped and
// the runs after it still go; samples resume by step number.
#include "clients/agent/uploader.h"

#include <grpcpp/grpcpp.h>
#include <stdlib.h>

#include <filesystem>
#include <map>
#include <mutex>
#include <set>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "clients/agent/spool.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "placement/v1/telemetry.grpc.pb.h"

namespace placement::agent {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::UnorderedElementsAre;

// Run ids that ListSpooledRuns sorts in the order of `n`.
std::string RunId(int n) {
  return absl::StrFormat("00000000-0000-4000-8000-%012d", n);
}

// Stores samples by step (committed: the steps from 0 without a gap) and
// answers each call of a run with the error it was told, if any.
class FakeTelemetry : public v1::TelemetryService::Service {
 public:
  void AnswerUpload(const std::string& run_id, grpc::Status status) {
    std::lock_guard<std::mutex> lock(mu_);
    if (status.ok()) {
      upload_answers_.erase(run_id);
    } else {
      upload_answers_[run_id] = std::move(status);
    }
  }
  void AnswerProgress(const std::string& run_id, grpc::Status status) {
    std::lock_guard<std::mutex> lock(mu_);
    if (status.ok()) {
      progress_answers_.erase(run_id);
    } else {
      progress_answers_[run_id] = std::move(status);
    }
  }
  void Store(const std::string& run_id, int64_t step) {
    std::lock_guard<std::mutex> lock(mu_);
    steps_[run_id].insert(step);
  }
  int64_t Committed(const std::string& run_id) {
    std::lock_guard<std::mutex> lock(mu_);
    return CommittedLocked(run_id);
  }
  std::set<std::string> uploaded() {
    std::lock_guard<std::mutex> lock(mu_);
    return uploaded_;
  }

  grpc::Status GetSampleProgress(
      grpc::ServerContext*, const v1::GetSampleProgressRequest* request,
      v1::GetSampleProgressResponse* response) override {
    std::lock_guard<std::mutex> lock(mu_);
    if (auto it = progress_answers_.find(request->run_id());
        it != progress_answers_.end()) {
      return it->second;
    }
    response->set_run_id(request->run_id());
    response->set_committed_through_step(CommittedLocked(request->run_id()));
    return grpc::Status::OK;
  }

  grpc::Status StreamStepSamples(
      grpc::ServerContext*,
      grpc::ServerReader<v1::StreamStepSamplesRequest>* reader,
      v1::StreamStepSamplesResponse* response) override {
    v1::StreamStepSamplesRequest batch;
    std::string run_id;
    while (reader->Read(&batch)) {
      std::lock_guard<std::mutex> lock(mu_);
      run_id = batch.run_id();
      for (const v1::StepSample& s : batch.samples()) {
        steps_[run_id].insert(s.step());
      }
    }
    std::lock_guard<std::mutex> lock(mu_);
    response->set_committed_through_step(CommittedLocked(run_id));
    return grpc::Status::OK;
  }

  grpc::Status UploadBenchmarkRun(
      grpc::ServerContext*, const v1::UploadBenchmarkRunRequest* request,
      v1::UploadBenchmarkRunResponse* response) override {
    std::lock_guard<std::mutex> lock(mu_);
    if (auto it = upload_answers_.find(request->run().run_id());
        it != upload_answers_.end()) {
      return it->second;
    }
    uploaded_.insert(request->run().run_id());
    response->set_run_id(request->run().run_id());
    return grpc::Status::OK;
  }

 private:
  int64_t CommittedLocked(const std::string& run_id) {
    int64_t committed = -1;
    const std::set<int64_t>& steps = steps_[run_id];
    while (steps.count(committed + 1) > 0) ++committed;
    return committed;
  }

  std::mutex mu_;
  std::map<std::string, grpc::Status> upload_answers_;
  std::map<std::string, grpc::Status> progress_answers_;
  std::map<std::string, std::set<int64_t>> steps_;
  std::set<std::string> uploaded_;
};

class FlushTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/placement-flush-test-XXXXXX";
    spool_ = mkdtemp(tmpl);
    grpc::ServerBuilder builder;
    int port = 0;
    builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(),
                             &port);
    builder.RegisterService(&service_);
    server_ = builder.BuildAndStart();
    ASSERT_NE(port, 0);
    absl::StatusOr<Connection> connection =
        Connection::Make(absl::StrCat("127.0.0.1:", port), "", "");
    ASSERT_TRUE(connection.ok());
    Backoff backoff;
    backoff.attempts = 2;
    backoff.initial = absl::Milliseconds(10);
    uploader_ = std::make_unique<Uploader>(*connection, backoff);
  }
  void TearDown() override {
    server_->Shutdown(std::chrono::system_clock::now() +
                      std::chrono::seconds(2));
    fs::remove_all(spool_);
  }

  // Spools a finished run with samples of `steps`.
  void Spool(const std::string& run_id, const std::vector<int64_t>& steps) {
    auto run = SpoolRun::Create(spool_, run_id);
    ASSERT_TRUE(run.ok()) << run.status();
    std::vector<v1::StepSample> samples;
    for (int64_t step : steps) {
      v1::StepSample s;
      s.set_step(step);
      s.set_step_time_seconds(0.5);
      samples.push_back(s);
    }
    ASSERT_TRUE((*run)->AppendSamples(samples).ok());
    v1::BenchmarkRun summary;
    summary.set_run_id(run_id);
    ASSERT_TRUE((*run)->WriteRun(summary).ok());
  }

  bool Rejected(const std::string& run_id) const {
    return fs::exists(spool_ + "/rejected/" + run_id);
  }

  std::string spool_;
  FakeTelemetry service_;
  std::unique_ptr<grpc::Server> server_;
  std::unique_ptr<Uploader> uploader_;
};

TEST_F(FlushTest, OnlyARefusalOfTheRunRejectsIt) {
  const std::vector<std::pair<grpc::StatusCode, bool>> answers = {
      {grpc::StatusCode::UNAUTHENTICATED, false},
      {grpc::StatusCode::PERMISSION_DENIED, false},
      {grpc::StatusCode::INTERNAL, false},
      {grpc::StatusCode::UNIMPLEMENTED, false},
      {grpc::StatusCode::INVALID_ARGUMENT, true},
      {grpc::StatusCode::ALREADY_EXISTS, true},
  };
  for (size_t i = 0; i < answers.size(); ++i) {
    Spool(RunId(static_cast<int>(i)), {0, 1, 2});
    service_.AnswerUpload(RunId(static_cast<int>(i)),
                          grpc::Status(answers[i].first, "no"));
  }
  // A token refused at the first call of a run, before any sample.
  Spool(RunId(10), {0, 1});
  service_.AnswerProgress(
      RunId(10), grpc::Status(grpc::StatusCode::UNAUTHENTICATED, "bad token"));
  Spool(RunId(11), {0, 1});  // fine: the flush goes on to it

  std::ostringstream log;
  const FlushReport report = uploader_->FlushSpool(spool_, log);
  EXPECT_EQ(report.kept, 5) << log.str();
  EXPECT_EQ(report.rejected, 2) << log.str();
  EXPECT_EQ(report.uploaded, 1) << log.str();
  EXPECT_EQ(report.left, 0);
  EXPECT_EQ(report.exit_code(), 4);
  for (size_t i = 0; i < answers.size(); ++i) {
    const std::string id = RunId(static_cast<int>(i));
    EXPECT_EQ(Rejected(id), answers[i].second) << id;
    EXPECT_EQ(report.runs.at(id),
              answers[i].second ? RunFate::kRejected : RunFate::kKept);
  }
  EXPECT_FALSE(Rejected(RunId(10)));
  EXPECT_EQ(report.runs.at(RunId(11)), RunFate::kUploaded);
  EXPECT_THAT(
      ListSpooledRuns(spool_),
      UnorderedElementsAre(RunId(0), RunId(1), RunId(2), RunId(3), RunId(10)));
  // The log names the code, and says the run is kept.
  EXPECT_THAT(log.str(), HasSubstr("UNAUTHENTICATED"));
  EXPECT_THAT(log.str(), HasSubstr("PERMISSION_DENIED"));
  EXPECT_THAT(log.str(), HasSubstr("UNIMPLEMENTED"));
  EXPECT_THAT(log.str(), HasSubstr(absl::StrCat(
                             "run ", RunId(0), ": summary kept in the spool")));

  // Once the service takes them, a flush uploads the kept runs.
  for (int i : {0, 1, 2, 3}) service_.AnswerUpload(RunId(i), grpc::Status::OK);
  service_.AnswerProgress(RunId(10), grpc::Status::OK);
  std::ostringstream again;
  const FlushReport second = uploader_->FlushSpool(spool_, again);
  EXPECT_EQ(second.uploaded, 5) << again.str();
  EXPECT_EQ(second.exit_code(), 0);
  EXPECT_TRUE(ListSpooledRuns(spool_).empty());
}

TEST_F(FlushTest, ARunMissingASampleIsSkippedAndTheOthersGo) {
  Spool(RunId(1), {0, 1, 3, 4});  // the line of step 2 is lost
  Spool(RunId(2), {0, 1, 2});
  std::ostringstream log;
  const FlushReport report = uploader_->FlushSpool(spool_, log);
  EXPECT_EQ(report.runs.at(RunId(1)), RunFate::kKept) << log.str();
  EXPECT_EQ(report.runs.at(RunId(2)), RunFate::kUploaded) << log.str();
  EXPECT_EQ(report.left, 0);
  EXPECT_EQ(report.exit_code(), 4);
  EXPECT_THAT(log.str(), HasSubstr("step 2 is missing"));
  EXPECT_THAT(ListSpooledRuns(spool_), UnorderedElementsAre(RunId(1)));
  EXPECT_FALSE(Rejected(RunId(1)));
}

TEST_F(FlushTest, SamplesResumeAfterTheCommittedStepNumber) {
  // The service has steps 0-2; the spool lost the line of step 1 (sent
  // while the run was live). Resuming by position would skip step 3.
  for (int64_t step : {0, 1, 2}) service_.Store(RunId(1), step);
  Spool(RunId(1), {0, 2, 3, 4});
  std::ostringstream log;
  const FlushReport report = uploader_->FlushSpool(spool_, log);
  EXPECT_EQ(report.runs.at(RunId(1)), RunFate::kUploaded) << log.str();
  EXPECT_EQ(service_.Committed(RunId(1)), 4);
  EXPECT_TRUE(ListSpooledRuns(spool_).empty());
}

TEST_F(FlushTest, AnUnreachableServiceLeavesEveryRun) {
  Spool(RunId(1), {0});
  Spool(RunId(2), {0});
  service_.AnswerProgress(RunId(1),
                          grpc::Status(grpc::StatusCode::UNAVAILABLE, "down"));
  std::ostringstream log;
  const FlushReport report = uploader_->FlushSpool(spool_, log);
  EXPECT_EQ(report.left, 2) << log.str();
  EXPECT_EQ(report.exit_code(), 3);
  EXPECT_EQ(ListSpooledRuns(spool_).size(), 2u);
}

}  // namespace
}  // namespace placement::agent
