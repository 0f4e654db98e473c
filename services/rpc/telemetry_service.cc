#include "services/rpc/telemetry_service.h"

#include <optional>
#include <utility>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "common/proto_bytes.h"
#include "common/proto_time.h"
#include "core/recipe.h"
#include "core/units.h"
#include "services/api/catalog_convert.h"
#include "services/api/enum_validation.h"
#include "services/api/grpc_status.h"
#include "services/api/page_token.h"
#include "services/api/recipe_convert.h"
#include "services/api/run_convert.h"
#include "services/api/run_validation.h"
#include "services/api/telemetry_convert.h"
#include "services/api/text_validation.h"
#include "services/auth/team_access.h"
#include "services/rpc/admit.h"
#include "services/rpc/db_call.h"
#include "services/rpc/sample_stream_reactor.h"
#include "storage/stores/eval_store.h"
#include "storage/stores/pool_store.h"
#include "storage/stores/sample_store.h"
#include "storage/stores/sku_store.h"

namespace placement::services {
namespace {

// Run page tokens carry the last row's (accept time, run id).
std::string RunCursorKey(const storage::RunSummary& run) {
  return TimeIdKeyText(run.accept_time, run.run_id);
}

absl::StatusOr<storage::RunCursor> RunCursorFromKey(const std::string& key) {
  if (key.empty()) return storage::RunCursor{};
  absl::StatusOr<TimeIdKey> last = ParseTimeIdKey(key);
  if (!last.ok()) return last.status();
  return storage::RunCursor{last->time, last->id};
}

// An eval's place in the listing: its ordinal in the run's evals, then
// after a ':' its run's time and id (TimeIdKeyText).
std::string EvalCursorKey(const storage::StoredEval& stored) {
  return absl::StrCat(stored.ordinal, ":",
                      TimeIdKeyText(stored.eval.recorded, stored.eval.run_id));
}

absl::StatusOr<storage::EvalCursor> EvalCursorFromKey(const std::string& key) {
  if (key.empty()) return storage::EvalCursor{};
  const std::pair<std::string, std::string> parts =
      absl::StrSplit(key, absl::MaxSplits(':', 1));
  int ordinal = 0;
  if (!absl::SimpleAtoi(parts.first, &ordinal) || ordinal < 0) {
    return core::InvalidArgumentWithViolations(
        {{"page_token", "is not a page token returned by this service"}});
  }
  absl::StatusOr<TimeIdKey> last = ParseTimeIdKey(parts.second);
  if (!last.ok()) return last.status();
  return storage::EvalCursor{last->time, last->id, ordinal};
}

}  // namespace

grpc::ServerUnaryReactor* TelemetryService::UploadBenchmarkRun(
    grpc::CallbackServerContext* context,
    const v1::UploadBenchmarkRunRequest* request,
    v1::UploadBenchmarkRunResponse* response) {
  if (absl::Status admitted = Admit(auth_, *context, *request);
      !admitted.ok()) {
    return FinishNow(context, ToGrpcStatus(admitted));
  }
  if (!request->has_run()) {
    return FinishNow(context, InvalidArgument({{"run", "is required"}}));
  }
  // Converted once: validated here and on the worker, then stored.
  UploadedRun converted = UploadedRunFromProto(request->run());
  core::FieldViolations violations =
      ValidateRunFields(request->run(), converted, absl::Now());
  if (!violations.empty()) {
    return FinishNow(context, InvalidArgument(violations));
  }
  return FinishOnDbWorker(
      context, workers_,
      [this, request, response, converted = std::move(converted),
       caller = auth_.Caller(*context)](
          storage::DbSession& session) mutable -> absl::Status {
        const v1::BenchmarkRun& run = request->run();
        absl::StatusOr<std::vector<core::GpuSku>> skus =
            storage::ListSkus(session);
        if (!skus.ok()) return skus.status();
        absl::StatusOr<storage::PoolRecord> pool =
            storage::GetPool(session, run.pool());
        if (!pool.ok() && pool.status().code() != absl::StatusCode::kNotFound) {
          return pool.status();
        }
        core::FieldViolations violations = ValidateRunAgainstCatalog(
            run, converted, pool.ok() ? &pool->pool : nullptr, *skus);
        if (!violations.empty()) {
          return core::InvalidArgumentWithViolations(violations);
        }
        // A bound caller's run is its team's unless it names one; then
        // the pool's team, as before. It must be one of the caller's.
        if (converted.run.team.empty()) converted.run.team = OnlyTeam(caller);
        storage::RunToStore to_store = RunToStoreFromProto(
            run, std::move(converted), pool->pool, pool->pool.sku_id, *skus);
        const std::string what = absl::StrCat("run ", to_store.run.run_id);
        if (absl::Status s = CheckTeam(caller, to_store.run.team, what);
            !s.ok()) {
          return s;
        }
        // It may name only a plan of a team the caller reaches: a plan's
        // bake-off counts the runs that name it.
        to_store.may_name_plan = [caller, plan_id = to_store.plan_id](
                                     const std::string& plan_team) {
          return CheckTeam(caller, plan_team, absl::StrCat("plan ", plan_id));
        };
        absl::StatusOr<storage::RunAck> ack =
            storage::InsertRun(session, to_store);
        if (!ack.ok()) return ack.status();
        AckToProto(*ack, response);
        if (on_run_stored_) on_run_stored_(*ack);
        return absl::OkStatus();
      });
}

// A stream refused before it starts.
class RefusedSampleStream
    : public grpc::ServerReadReactor<v1::StreamStepSamplesRequest> {
 public:
  explicit RefusedSampleStream(const grpc::Status& status) { Finish(status); }
  void OnDone() override { delete this; }
};

grpc::ServerReadReactor<v1::StreamStepSamplesRequest>*
TelemetryService::StreamStepSamples(grpc::CallbackServerContext* context,
                                    v1::StreamStepSamplesResponse* response) {
  if (absl::Status denied = Admit(auth_, *context); !denied.ok()) {
    return new RefusedSampleStream(ToGrpcStatus(denied));
  }
  if (context->deadline() == std::chrono::system_clock::time_point::max()) {
    return new RefusedSampleStream(ToGrpcStatus(absl::InvalidArgumentError(
        "StreamStepSamples needs a call deadline: an upload without one "
        "could hold a stream open forever")));
  }
  return NewSampleStream(workers_, response, streams_, auth_.Caller(*context));
}

grpc::ServerUnaryReactor* TelemetryService::GetSampleProgress(
    grpc::CallbackServerContext* context,
    const v1::GetSampleProgressRequest* request,
    v1::GetSampleProgressResponse* response) {
  if (absl::Status admitted = Admit(auth_, *context, *request);
      !admitted.ok()) {
    return FinishNow(context, ToGrpcStatus(admitted));
  }
  if (!IsUuid(request->run_id())) {
    return FinishNow(context, InvalidArgument({{"run_id", "must be a UUID"}}));
  }
  return FinishOnDbWorker(
      context, workers_,
      [response, run_id = absl::AsciiStrToLower(request->run_id()),
       caller = auth_.Caller(*context)](
          storage::DbSession& session) -> absl::Status {
        absl::StatusOr<storage::SampleProgress> progress =
            storage::GetSampleProgress(session, run_id);
        if (!progress.ok()) return progress.status();
        if (progress->team.has_value()) {
          if (absl::Status s = CheckTeam(caller, *progress->team,
                                         absl::StrCat("run ", run_id));
              !s.ok()) {
            return s;
          }
        }
        SampleProgressToProto(run_id, *progress, response);
        return absl::OkStatus();
      });
}

grpc::ServerUnaryReactor* TelemetryService::GetBenchmarkRun(
    grpc::CallbackServerContext* context,
    const v1::GetBenchmarkRunRequest* request,
    v1::GetBenchmarkRunResponse* response) {
  if (absl::Status admitted = Admit(auth_, *context, *request);
      !admitted.ok()) {
    return FinishNow(context, ToGrpcStatus(admitted));
  }
  if (!IsUuid(request->run_id())) {
    return FinishNow(context, InvalidArgument({{"run_id", "must be a UUID"}}));
  }
  return FinishOnDbWorker(
      context, workers_,
      [response, run_id = absl::AsciiStrToLower(request->run_id()),
       caller = auth_.Caller(*context)](
          storage::DbSession& session) -> absl::Status {
        absl::StatusOr<storage::StoredRun> stored =
            storage::GetRun(session, run_id);
        if (!stored.ok()) return stored.status();
        if (absl::Status s =
                CheckTeam(caller, stored->team, absl::StrCat("run ", run_id));
            !s.ok()) {
          return s;
        }
        return StoredRunToProto(*stored, response);
      });
}

grpc::ServerUnaryReactor* TelemetryService::ListBenchmarkRuns(
    grpc::CallbackServerContext* context,
    const v1::ListBenchmarkRunsRequest* request,
    v1::ListBenchmarkRunsResponse* response) {
  if (absl::Status admitted = Admit(auth_, *context, *request);
      !admitted.ok()) {
    return FinishNow(context, ToGrpcStatus(admitted));
  }
  absl::StatusOr<PageRequest> page =
      ParsePageRequest(request->page_size(), request->page_token());
  if (!page.ok()) return FinishNow(context, ToGrpcStatus(page.status()));
  absl::StatusOr<storage::RunCursor> cursor = RunCursorFromKey(page->after);
  if (!cursor.ok()) return FinishNow(context, ToGrpcStatus(cursor.status()));
  storage::RunFilter filter{request->pool(), request->sku(),
                            request->recipe_key(),
                            TeamsOfListing(auth_.Caller(*context))};
  return FinishOnDbWorker(
      context, workers_,
      [response, filter, cursor = *cursor,
       page_size = page->size](storage::DbSession& session) -> absl::Status {
        absl::StatusOr<storage::RunPage> page =
            storage::ListRuns(session, filter, cursor, page_size);
        if (!page.ok()) return page.status();
        for (const storage::RunSummary& s : page->runs) {
          RunSummaryToProto(s, response->add_runs());
        }
        if (page->more) {
          response->set_next_page_token(
              EncodePageToken(RunCursorKey(page->runs.back())));
        }
        return absl::OkStatus();
      });
}

grpc::ServerUnaryReactor* TelemetryService::ListEvalResults(
    grpc::CallbackServerContext* context,
    const v1::ListEvalResultsRequest* request,
    v1::ListEvalResultsResponse* response) {
  if (absl::Status admitted = Admit(auth_, *context, *request);
      !admitted.ok()) {
    return FinishNow(context, ToGrpcStatus(admitted));
  }
  absl::StatusOr<PageRequest> page =
      ParsePageRequest(request->page_size(), request->page_token());
  if (!page.ok()) return FinishNow(context, ToGrpcStatus(page.status()));
  absl::StatusOr<storage::EvalCursor> cursor = EvalCursorFromKey(page->after);
  if (!cursor.ok()) return FinishNow(context, ToGrpcStatus(cursor.status()));
  storage::EvalFilter filter{request->recipe_key(), request->serving_sku(),
                             PrecisionFromProto(request->serving_precision()),
                             TeamsOfListing(auth_.Caller(*context))};
  return FinishOnDbWorker(
      context, workers_,
      [response, filter, cursor = *cursor,
       page_size = page->size](storage::DbSession& session) -> absl::Status {
        absl::StatusOr<storage::EvalPage> page =
            storage::ListEvals(session, filter, cursor, page_size);
        if (!page.ok()) return page.status();
        for (const storage::StoredEval& e : page->evals) {
          StoredEvalToProto(e, response->add_evals());
        }
        if (page->more) {
          response->set_next_page_token(
              EncodePageToken(EvalCursorKey(page->evals.back())));
        }
        return absl::OkStatus();
      });
}

}  // namespace placement::services
