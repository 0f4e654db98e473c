#ifndef PLACEMENT_SERVICES_RPC_SAMPLE_STREAM_REACTOR_H_
#define PLACEMENT_SERVICES_RPC_SAMPLE_STREAM_REACTOR_H_

// The reactor of TelemetryService.StreamStepSamples, once the call is
// authorised and has a deadline. Its contract:
// - every message is validated (declared enums, the batch's fields, one
//   run id and one team per stream) before it is stored; a refused message
//   finishes the stream with INVALID_ARGUMENT once the messages before it
//   are committed, so a client resumes right after them;
// - messages are stored in order, one transaction at a time; those that
//   arrive meanwhile go together into the next (at most kMaxWaitingSamples
//   waiting, then reading pauses and gRPC's flow control holds the sender);
// - nothing is acknowledged before its commit: the response (the counts of
//   stored, duplicate and conflicting samples) comes after the last one;
// - a run of a team the caller does not reach is refused
//   (services/auth/team_access.h);
// - a full database work queue finishes the stream with RESOURCE_EXHAUSTED,
//   and a stream idle longer than the registry's timeout with
//   DEADLINE_EXCEEDED; both say to resume from GetSampleProgress.

#include <grpcpp/grpcpp.h>

#include <optional>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_set.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "placement/v1/telemetry.pb.h"
#include "services/auth/principal.h"
#include "storage/session/db_workers.h"

namespace placement::services {

class SampleStreamReactor;

// Test only: when set, runs on the database worker that resumes a paused
// sample stream read, after it decided to read and before the read is
// issued, so that a test can race a concurrent finish there. Null (the
// default) outside tests.
using StreamResumeHook = void (*)();
void SetStreamResumeHookForTesting(StreamResumeHook hook);

// The open sample streams, and a reaper that closes those idle for longer
// than the timeout.
class SampleStreamRegistry {
 public:
  explicit SampleStreamRegistry(absl::Duration idle_timeout);
  ~SampleStreamRegistry();

  void Add(SampleStreamReactor* stream);
  void Remove(SampleStreamReactor* stream);

 private:
  void Reap();

  const absl::Duration idle_timeout_;
  absl::Mutex mu_;
  absl::flat_hash_set<SampleStreamReactor*> streams_ ABSL_GUARDED_BY(mu_);
  absl::Notification stop_;
  std::thread reaper_;
};

// A stream of `caller` (nullopt with auth off), registered with `registry`
// until gRPC is done with it; it deletes itself. `response` is filled
// before the stream finishes OK.
grpc::ServerReadReactor<v1::StreamStepSamplesRequest>* NewSampleStream(
    storage::DbWorkers& workers, v1::StreamStepSamplesResponse* response,
    SampleStreamRegistry& registry, std::optional<Principal> caller);

}  // namespace placement::services

#endif  // PLACEMENT_SERVICES_RPC_SAMPLE_STREAM_REACTOR_H_
