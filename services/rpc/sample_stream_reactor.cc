#include "services/rpc/sample_stream_reactor.h"

#include <algorithm>
#include <atomic>
#include <optional>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "services/api/enum_validation.h"
#include "services/api/grpc_status.h"
#include "services/api/run_validation.h"
#include "services/api/telemetry_convert.h"
#include "services/api/text_validation.h"
#include "services/auth/team_access.h"
#include "storage/stores/sample_store.h"

namespace placement::services {
namespace {

// While a transaction of a stream is being written, the stream reads on and
// gathers the messages that arrive into the next transaction, until it holds
// this many samples; then it waits for the commit (and gRPC's flow control
// holds the sender). A transaction thus takes at most this plus one message
// (10,000) samples, about 3.5 MiB of COPY data and a fraction of a second of
// the database's time, and a stream holds at most two of them in memory.
constexpr size_t kMaxWaitingSamples = 20'000;

std::atomic<StreamResumeHook> stream_resume_hook{nullptr};

void RunStreamResumeHook() {
  if (StreamResumeHook hook = stream_resume_hook.load(); hook != nullptr) {
    hook();
  }
}

}  // namespace

void SetStreamResumeHookForTesting(StreamResumeHook hook) {
  stream_resume_hook.store(hook);
}

// Reads a stream of sample batches and stores them in order, one
// transaction at a time; the messages that arrive while a transaction is
// written are read (and converted) meanwhile and go to the database
// together in the next one, so that the database and the stream's parsing
// overlap and a fast sender pays one commit for many messages, not one
// each. Nothing is acknowledged before its commit: the response comes after
// the last one, and a stream cut before it has committed whole messages
// only (a resumed stream finds them by GetSampleProgress; a re-sent step is
// stored once). Three threads may touch it (gRPC's, a database
// worker's, and the idle reaper's), so every call into gRPC is decided
// under its mutex: the decision to finish is taken once (`finishing_`), a
// read is issued only before it, and a finish decided while another thread
// is issuing a read is left to that thread, which calls Finish right after
// its StartRead. So nothing reads after Finish, when gRPC may already have
// freed the call. gRPC itself (StartRead, Finish) is called with no lock
// held, since it may run a reaction inline.
//
// Lifetime: gRPC calls OnDone only after Finish; a read being issued and a
// batch with a database worker hold the reactor (`holds_`), so that OnDone
// meanwhile leaves the delete to the holder.
class SampleStreamReactor
    : public grpc::ServerReadReactor<v1::StreamStepSamplesRequest> {
 public:
  SampleStreamReactor(storage::DbWorkers& workers,
                      v1::StreamStepSamplesResponse* response,
                      SampleStreamRegistry& registry,
                      std::optional<Principal> caller)
      : workers_(workers),
        response_(response),
        registry_(registry),
        caller_(std::move(caller)) {
    registry_.Add(this);
    ReadNext();
  }

  void OnReadDone(bool ok) override {
    {
      absl::MutexLock lock(&mu_);
      reading_ = false;
      if (finishing_) return;  // closed while the read was pending
    }
    if (!ok) {  // the client finished sending, or the call ended
      bool finish_now;
      {
        absl::MutexLock lock(&mu_);
        client_done_ = true;
        finish_now = !appending_;  // else the last append finishes
      }
      if (finish_now) FinishWithCounts();
      return;
    }
    const std::string run_id = absl::AsciiStrToLower(request_.run_id());
    if (core::FieldViolations violations = MessageViolations(run_id);
        !violations.empty()) {
      Refuse(violations);
      return;
    }
    // Set once, before the first append: the workers only read them.
    if (run_id_.empty()) {
      run_id_ = run_id;
      if (absl::Status s = DecideAccess(); !s.ok()) {
        FinishOnce(ToGrpcStatus(s));
        return;
      }
    }
    if (request_.samples().empty()) {
      ReadNext();
      return;
    }
    Store(SampleRowsFromProto(request_));
  }

  void OnDone() override {
    registry_.Remove(this);
    bool last;
    {
      absl::MutexLock lock(&mu_);
      done_ = true;
      last = holds_ == 0;
    }
    if (last) delete this;
  }

  // Whether the stream has waited for the client longer than `timeout`; if
  // so it is marked finished and the caller must call FinishIdle(), with no
  // lock held (called by the registry's reaper, never after OnDone).
  bool TakeIfIdle(absl::Time now, absl::Duration timeout) {
    absl::MutexLock lock(&mu_);
    if (!reading_ || finishing_ || holds_ > 0 ||
        now - waiting_since_ < timeout) {
      return false;
    }
    finishing_ = true;
    return true;
  }

  // Finishes a stream TakeIfIdle() took: no read is being issued (it has no
  // holds) and none will be (it is finishing), so this Finish is the last
  // call into gRPC.
  void FinishIdle(absl::Duration timeout) {
    Finish(ToGrpcStatus(absl::DeadlineExceededError(
        absl::StrCat("no samples for ", absl::FormatDuration(timeout),
                     ": idle stream closed; resume from GetSampleProgress"))));
  }

 private:
  // What is wrong with the message just read (`run_id`: its run id,
  // lowercased): undeclared enums, the batch's fields, a run id or team
  // other than the stream's.
  core::FieldViolations MessageViolations(const std::string& run_id) const {
    core::FieldViolations violations = UndeclaredEnumValues(request_);
    if (violations.empty()) {
      violations = ValidateSampleBatch(request_, absl::Now());
    }
    if (violations.empty() && !run_id_.empty() && run_id != run_id_) {
      violations.push_back(
          {"run_id", "must be the same in every message of a stream"});
    }
    if (violations.empty()) violations = TeamViolations();
    return violations;
  }

  // Refuses the message just read: at once, or, while a batch before it is
  // with a worker, once that commits (the client resumes after it).
  void Refuse(const core::FieldViolations& violations) {
    {
      // The batches before this one are committed before the error is
      // answered: the client resumes after them.
      absl::MutexLock lock(&mu_);
      if (appending_) {
        refused_ = InvalidArgument(violations);
        return;
      }
    }
    FinishOnce(InvalidArgument(violations));
  }

  // Hands the message's `rows` to a worker, or, while one is writing, adds
  // them to those waiting for the next transaction; reads on unless the
  // waiting samples are full (the worker then reads on once it takes them).
  void Store(std::vector<storage::StepSampleRow> rows) {
    std::vector<storage::StepSampleRow> rows_to_append;
    {
      absl::MutexLock lock(&mu_);
      if (appending_) {  // the next transaction takes these
        if (!waiting_.has_value()) {
          waiting_ = std::move(rows);
        } else {
          waiting_->insert(waiting_->end(), rows.begin(), rows.end());
        }
        if (waiting_->size() >= kMaxWaitingSamples) {
          read_paused_ = true;  // the worker reads on once it takes them
          return;
        }
      } else {
        appending_ = true;
        rows_to_append.swap(rows);
      }
    }
    if (!rows_to_append.empty() && !Append(std::move(rows_to_append))) return;
    ReadNext();
  }

  // Issues the next read unless the stream is finishing; a finish decided
  // while the read is issued is called here, after it. `resumed`: by the
  // worker that took the samples a paused stream was waiting on.
  void ReadNext(bool resumed = false) {
    {
      absl::MutexLock lock(&mu_);
      if (finishing_) return;
      reading_ = true;
      starting_read_ = true;
      waiting_since_ = absl::Now();
      ++holds_;  // the reaper leaves a stream alone while its read starts
    }
    if (resumed) RunStreamResumeHook();
    StartRead(&request_);
    std::optional<grpc::Status> finish;
    {
      absl::MutexLock lock(&mu_);
      starting_read_ = false;
      finish.swap(deferred_finish_);
    }
    if (finish.has_value()) Finish(*finish);
    Release();
  }

  // Hands `rows` to a database worker; false (the stream finished) when the
  // work queue is full.
  bool Append(std::vector<storage::StepSampleRow> rows) {
    {
      absl::MutexLock lock(&mu_);
      ++holds_;  // released by the worker, or below
    }
    const bool queued = workers_.TrySubmit(
        [this, rows = std::move(rows)](storage::DbSession& session) mutable {
          Appended(storage::AppendSamples(session, run_id_, std::move(rows),
                                          access_));
          Release();
        });
    if (!queued) {
      FinishOnce(ToGrpcStatus(absl::ResourceExhaustedError(
          "the server's database work queue is full; resume the stream from "
          "GetSampleProgress with backoff")));
      Release();
    }
    return queued;
  }

  // On the worker, once a transaction is committed (or failed): the samples
  // waiting, if any, go to the database in the next one (and the stream
  // reads on if it had paused for them); else the stream finishes if the
  // client is done or a message was refused.
  void Appended(const absl::StatusOr<storage::AppendResult>& appended) {
    if (!appended.ok()) {
      FinishOnce(ToGrpcStatus(appended.status()));
      return;
    }
    stored_ += appended->stored;
    duplicates_ += appended->duplicates;
    conflicting_ += appended->conflicting;
    committed_through_step_ = appended->progress.committed_through_step;
    std::optional<std::vector<storage::StepSampleRow>> next;
    std::optional<grpc::Status> refused;
    bool finish = false;
    bool read_on = false;
    {
      absl::MutexLock lock(&mu_);
      next.swap(waiting_);
      if (next.has_value()) {
        read_on = read_paused_;
        read_paused_ = false;
      } else {
        // A refusal is answered once what came before it is committed.
        appending_ = false;
        refused.swap(refused_);
        finish = client_done_;
      }
    }
    if (next.has_value()) {
      if (Append(*std::move(next)) && read_on) ReadNext(/*resumed=*/true);
    } else if (refused.has_value()) {
      FinishOnce(*refused);
    } else if (finish) {
      FinishWithCounts();
    }
  }

  void FinishWithCounts() { FinishOnce(grpc::Status::OK, /*counts=*/true); }

  // The shape of the message's team: one line, at most an id's length, and
  // the first message's in every later one that names one.
  core::FieldViolations TeamViolations() const {
    const std::string& team = request_.team();
    if (team.empty()) return {};
    if (std::string why = RefusedCharacter(team, /*one_line=*/true);
        !why.empty()) {
      return {{"team", why}};
    }
    if (team.size() > kMaxIdLength) {
      return {{"team", absl::StrCat("at most ", kMaxIdLength, " characters")}};
    }
    if (!run_id_.empty() && team != access_.team) {
      return {{"team", "must be the same in every message of a stream"}};
    }
    return {};
  }

  // Whose samples these are, from the first message: a team of the
  // caller's (services/auth/team_access.h); a stream or run of another team
  // is refused by the first append.
  absl::Status DecideAccess() {
    const std::string what = absl::StrCat("run ", run_id_, "'s samples");
    absl::StatusOr<std::string> team =
        TeamOfRequest(caller_, request_.team(), what);
    if (!team.ok()) return team.status();
    access_.team = *std::move(team);
    if (!TeamsOfListing(caller_).empty()) {  // bound: check the stream's
      access_.may_append = [caller = caller_, what](const std::string& team) {
        return CheckTeam(caller, team, what);
      };
    }
    return absl::OkStatus();
  }

  void Release() {
    bool last;
    {
      absl::MutexLock lock(&mu_);
      --holds_;
      last = done_ && holds_ == 0;
    }
    if (last) delete this;
  }

  // The one decision to finish: the first caller wins, and calls Finish
  // unless a read is being issued, whose ReadNext() then calls it. With
  // `counts`, the response is filled first (only the winner may touch it:
  // gRPC reads it once Finish is called).
  void FinishOnce(const grpc::Status& status, bool counts = false) {
    {
      absl::MutexLock lock(&mu_);
      if (finishing_) return;
      finishing_ = true;
      if (counts) {
        response_->set_run_id(run_id_);
        response_->set_committed_through_step(committed_through_step_);
        response_->set_samples_stored(stored_);
        response_->set_samples_duplicate(duplicates_);
        response_->set_samples_conflicting(conflicting_);
      }
      if (starting_read_) {
        deferred_finish_ = status;
        return;
      }
    }
    Finish(status);
  }

  storage::DbWorkers& workers_;
  v1::StreamStepSamplesResponse* const response_;
  SampleStreamRegistry& registry_;
  const std::optional<Principal> caller_;
  v1::StreamStepSamplesRequest request_;
  std::string run_id_;
  storage::StreamAccess access_;  // set with run_id_
  int64_t committed_through_step_ = -1;
  int64_t stored_ = 0;
  int64_t duplicates_ = 0;
  int64_t conflicting_ = 0;
  absl::Mutex mu_;
  bool finishing_ ABSL_GUARDED_BY(mu_) = false;  // Finish called or due
  bool reading_ ABSL_GUARDED_BY(mu_) = false;
  // A ReadNext() is between its decision and the end of its StartRead.
  bool starting_read_ ABSL_GUARDED_BY(mu_) = false;
  // A finish decided while `starting_read_`: that ReadNext() calls it.
  std::optional<grpc::Status> deferred_finish_ ABSL_GUARDED_BY(mu_);
  absl::Time waiting_since_ ABSL_GUARDED_BY(mu_);
  // ReadNext()s between lock and return, and batches with a worker.
  int holds_ ABSL_GUARDED_BY(mu_) = 0;
  bool appending_ ABSL_GUARDED_BY(mu_) = false;  // a batch is with a worker
  // Read while the transaction before was being written: the next to append.
  std::optional<std::vector<storage::StepSampleRow>> waiting_
      ABSL_GUARDED_BY(mu_);
  // No read is pending because `waiting_` is full.
  bool read_paused_ ABSL_GUARDED_BY(mu_) = false;
  bool client_done_ ABSL_GUARDED_BY(mu_) = false;  // no more reads
  // A message refused while samples before it were being written or waiting:
  // answered once they are committed.
  std::optional<grpc::Status> refused_ ABSL_GUARDED_BY(mu_);
  bool done_ ABSL_GUARDED_BY(mu_) = false;  // OnDone ran
};

SampleStreamRegistry::SampleStreamRegistry(absl::Duration idle_timeout)
    : idle_timeout_(idle_timeout), reaper_([this] { Reap(); }) {}

SampleStreamRegistry::~SampleStreamRegistry() {
  stop_.Notify();
  reaper_.join();
}

void SampleStreamRegistry::Add(SampleStreamReactor* stream) {
  absl::MutexLock lock(&mu_);
  streams_.insert(stream);
}

void SampleStreamRegistry::Remove(SampleStreamReactor* stream) {
  absl::MutexLock lock(&mu_);
  streams_.erase(stream);
}

void SampleStreamRegistry::Reap() {
  const absl::Duration period =
      std::clamp(idle_timeout_ / 4, absl::Milliseconds(50), absl::Seconds(5));
  while (!stop_.WaitForNotificationWithTimeout(period)) {
    const absl::Time now = absl::Now();
    std::vector<SampleStreamReactor*> idle;
    {
      // Holding the lock keeps every listed stream alive (OnDone waits); a
      // stream taken stays alive until it is finished, below.
      absl::MutexLock lock(&mu_);
      for (SampleStreamReactor* stream : streams_) {
        if (stream->TakeIfIdle(now, idle_timeout_)) idle.push_back(stream);
      }
    }
    for (SampleStreamReactor* stream : idle) stream->FinishIdle(idle_timeout_);
  }
}

grpc::ServerReadReactor<v1::StreamStepSamplesRequest>* NewSampleStream(
    storage::DbWorkers& workers, v1::StreamStepSamplesResponse* response,
    SampleStreamRegistry& registry, std::optional<Principal> caller) {
  return new SampleStreamReactor(workers, response, registry,
                                 std::move(caller));
}

}  // namespace placement::services
