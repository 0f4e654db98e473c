// A sample stream whose read was paused for flow control and is resumed by a
// database worker while another worker's failed transaction finishes the
// call: the read must not be issued on the finished (and freed) call. Run
// under ASan, a read issued after the finish reports a heap-use-after-free.
#include <atomic>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "placement/v1/telemetry.grpc.pb.h"
#include "services/rpc/telemetry_service.h"
#include "tests/support/fixtures.h"
#include "tests/support/in_process_server.h"

namespace placement {
namespace {

using ::placement::testing::Deadline;
using ::placement::testing::InProcessServer;
using ::placement::testing::NewUuid;

// Set by the client once the stream's status came back.
absl::Notification* client_has_status = nullptr;
std::atomic<int> resumes{0};

// Holds the resuming worker until the call is over (then a little longer,
// so that gRPC has released it), or for two seconds if it never ends.
void HoldResumedRead() {
  ++resumes;
  if (client_has_status->WaitForNotificationWithTimeout(absl::Seconds(2))) {
    absl::SleepFor(absl::Milliseconds(300));
  }
}

// Samples `first`..`last`, one a second, all in the past.
v1::StreamStepSamplesRequest Samples(const std::string& run_id, int64_t first,
                                     int64_t last) {
  v1::StreamStepSamplesRequest request;
  request.set_run_id(run_id);
  const int64_t start = absl::ToUnixSeconds(absl::Now()) - 86400;
  for (int64_t step = first; step <= last; ++step) {
    v1::StepSample* s = request.add_samples();
    s->set_step(step);
    s->mutable_time()->set_seconds(start + step);
    s->set_step_time_seconds(0.5);
    s->set_memory_allocated_gb(30.25);
    s->set_memory_reserved_gb(32);
    s->set_tokens(8192);
  }
  return request;
}

TEST(SampleStreamFinishRaceTest,
     FailedTransactionWhileAWorkerResumesTheReadAnswersTheError) {
  InProcessServer server;
  auto telemetry = v1::TelemetryService::NewStub(server.channel());
  const std::string run_id = NewUuid();
  // The stream's first transaction is slow, so that the next two messages
  // (20,000 samples) wait and the stream stops reading; the transaction that
  // takes them fails, on another worker, while the first worker resumes the
  // read.
  server.db().Execute(absl::StrCat(
      "CREATE FUNCTION race_stream() RETURNS trigger LANGUAGE plpgsql AS $$ "
      "BEGIN "
      "  IF NEW.run_id = '",
      run_id,
      "' THEN "
      "    IF TG_OP = 'INSERT' THEN PERFORM pg_sleep(1.5); END IF; "
      "    IF NEW.max_step >= 20000 THEN "
      "      RAISE EXCEPTION 'refused by the test'; "
      "    END IF; "
      "  END IF; "
      "  RETURN NEW; "
      "END $$; "
      "CREATE TRIGGER race_stream BEFORE INSERT OR UPDATE ON sample_streams "
      "FOR EACH ROW EXECUTE FUNCTION race_stream();"));

  absl::Notification has_status;
  client_has_status = &has_status;
  services::SetStreamResumeHookForTesting(&HoldResumedRead);
  auto context = Deadline(30);
  v1::StreamStepSamplesResponse response;
  auto writer = telemetry->StreamStepSamples(context.get(), &response);
  ASSERT_TRUE(writer->Write(Samples(run_id, 0, 9'999)));
  ASSERT_TRUE(writer->Write(Samples(run_id, 10'000, 19'999)));
  ASSERT_TRUE(writer->Write(Samples(run_id, 20'000, 29'999)));
  writer->WritesDone();
  const grpc::Status status = writer->Finish();
  has_status.Notify();
  // The server's workers are idle once the stream is answered.
  absl::SleepFor(absl::Milliseconds(500));
  services::SetStreamResumeHookForTesting(nullptr);

  EXPECT_EQ(resumes.load(), 1) << "the read was not paused and resumed";
  EXPECT_FALSE(status.ok());
  EXPECT_NE(status.error_message().find("refused by the test"),
            std::string::npos)
      << status.error_message();
  // The first transaction is committed; the failed one left nothing.
  EXPECT_EQ(server.db().QueryValue(absl::StrCat(
                "SELECT count(*) || '/' || max(step) FROM step_samples "
                "WHERE run_id = '",
                run_id, "'")),
            "10000/9999");
}

}  // namespace
}  // namespace placement
