#include "storage/stores/sample_store.h"

#include <algorithm>
#include <map>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "storage/wire/binary_copy.h"
#include "storage/wire/pq_values.h"

namespace placement::storage {
namespace {

// Registers the run's stream on its first batch and locks its progress row
// in one round trip: appends to one run serialize here. The no-op update is
// what takes the lock (and returns the row) when the stream exists. Also
// returns whether this inserted it (a row this transaction inserted has no
// xmax), its team and whether the schema has that column (migration 0023;
// read through to_jsonb, so that the statement runs on older schemas too).
constexpr char kLockStream[] = R"sql(
INSERT INTO sample_streams AS s (run_id, partition_time)
VALUES ($1::uuid, to_timestamp($2::float8 / 1e6))
ON CONFLICT (run_id) DO UPDATE SET partition_time = s.partition_time
RETURNING (extract(epoch FROM partition_time) * 1e6)::bigint, max_step,
          committed_through_step, samples, s.xmax = 0,
          coalesce(to_jsonb(s) ->> 'team', ''), to_jsonb(s) ? 'team')sql";

// The team of a run uploaded before its first batch of samples.
constexpr char kSelectRunTeam[] =
    "SELECT team FROM benchmark_runs WHERE run_id = $1::uuid";

// A new stream's team (only on a schema with the column).
constexpr char kClaimStream[] =
    "UPDATE sample_streams SET team = $2 WHERE run_id = $1::uuid";

// samples_dropped_at (migration 0018) is read through to_jsonb so that the
// statement also runs on schema 17, where it is NULL.
constexpr char kSelectProgress[] = R"sql(
SELECT (extract(epoch FROM partition_time) * 1e6)::bigint, max_step,
       committed_through_step, samples,
       (extract(epoch FROM (to_jsonb(s) ->> 'samples_dropped_at')::timestamptz)
        * 1e6)::bigint,
       coalesce(to_jsonb(s) ->> 'team', '')
FROM sample_streams s WHERE run_id = $1::uuid)sql";

constexpr char kExistingSteps[] = R"sql(
SELECT step, step_time_s, memory_allocated_gb, memory_reserved_gb, tokens, loss
FROM step_samples
WHERE run_id = $1::uuid AND partition_time = to_timestamp($2::float8 / 1e6)
  AND step = ANY($3::bigint[]))sql";

constexpr char kStepsAfter[] = R"sql(
SELECT step FROM step_samples
WHERE run_id = $1::uuid AND partition_time = to_timestamp($2::float8 / 1e6)
  AND step > $3
ORDER BY step LIMIT 100000)sql";

constexpr char kUpdateStream[] = R"sql(
UPDATE sample_streams
SET max_step = $2, committed_through_step = $3, samples = $4, updated_at = now()
WHERE run_id = $1::uuid)sql";

// Binary: the server stores the values as they come instead of parsing
// their text (see BinaryCopy).
constexpr char kCopySamples[] =
    "COPY step_samples (run_id, partition_time, step, sample_time, "
    "step_time_s, memory_allocated_gb, memory_reserved_gb, tokens, loss) "
    "FROM STDIN WITH (FORMAT binary)";
constexpr int16_t kCopyColumns = 9;

constexpr char kEnsurePartitions[] =
    "SELECT placement_ensure_sample_partitions(to_timestamp($1::float8 / "
    "1e6), $2)";

double DoubleField(const PGresult* result, int row, int column) {
  double value = 0;
  (void)absl::SimpleAtod(PQgetvalue(result, row, column), &value);
  return value;
}

// Whether two samples of one step say the same (a re-send, not a conflict).
// The time is left out: it is when the sender saw the step, not what it
// measured.
bool SameMeasurement(const StepSampleRow& a, const StepSampleRow& b) {
  return a.step_time_s == b.step_time_s &&
         a.memory_allocated_gb == b.memory_allocated_gb &&
         a.memory_reserved_gb == b.memory_reserved_gb && a.tokens == b.tokens &&
         a.loss == b.loss;
}

std::string Micros(absl::Time time) {
  return std::to_string(absl::ToUnixMicros(time));
}

// Walks `steps` (ascending) from `committed`, returning the last step of the
// contiguous run that starts at committed + 1.
int64_t AdvanceContiguous(int64_t committed,
                          const std::vector<int64_t>& steps) {
  for (int64_t step : steps) {
    if (step <= committed) continue;
    if (step != committed + 1) break;
    committed = step;
  }
  return committed;
}

// Sorts `samples` by step and drops repeats inside the batch: the first one
// counts; one that says something else is a conflict.
std::vector<StepSampleRow> SortedUnique(std::vector<StepSampleRow> samples,
                                        AppendResult& result) {
  std::stable_sort(samples.begin(), samples.end(),
                   [](const StepSampleRow& a, const StepSampleRow& b) {
                     return a.step < b.step;
                   });
  std::vector<StepSampleRow> unique;
  unique.reserve(samples.size());
  for (StepSampleRow& s : samples) {
    if (!unique.empty() && unique.back().step == s.step) {
      ++result.duplicates;
      if (!SameMeasurement(unique.back(), s)) ++result.conflicting;
      continue;
    }
    unique.push_back(std::move(s));
  }
  return unique;
}

// The run's stream, registered on its first batch and locked: where its
// samples are partitioned, and its progress so far.
struct LockedStream {
  absl::Time partition_time;
  std::string partition_micros;
  SampleProgress progress;
};

bool BoolField(const PGresult* result, int row, int column) {
  return PQgetvalue(result, row, column)[0] == 't';
}

// Whose stream it is: a stream this batch opens takes `access.team` (if it
// is of a run already uploaded, only a caller that may add to that run's
// team opens it); one that exists goes on only for a caller that may add
// to its team.
absl::Status CheckStreamTeam(PqConnection& c, const std::string& run_id,
                             const PGresult* locked,
                             const StreamAccess& access) {
  const bool opened_now = BoolField(locked, 0, 4);
  const std::string team = PQgetvalue(locked, 0, 5);
  const bool has_team_column = BoolField(locked, 0, 6);
  if (!opened_now) {
    return access.may_append ? access.may_append(team) : absl::OkStatus();
  }
  if (access.may_append) {
    absl::StatusOr<PqResult> run = c.Exec(kSelectRunTeam, {run_id.c_str()});
    if (!run.ok()) return run.status();
    if (PQntuples(run->get()) > 0) {
      if (absl::Status s = access.may_append(PQgetvalue(run->get(), 0, 0));
          !s.ok()) {
        return s;
      }
    }
  }
  if (access.team.empty() || !has_team_column) return absl::OkStatus();
  return c.Exec(kClaimStream, {run_id.c_str(), access.team.c_str()}).status();
}

absl::StatusOr<LockedStream> LockStream(PqConnection& c,
                                        const std::string& run_id,
                                        absl::Time first_time,
                                        const StreamAccess& access) {
  const std::string first_micros = Micros(first_time);
  absl::StatusOr<PqResult> locked =
      c.Exec(kLockStream, {run_id.c_str(), first_micros.c_str()});
  if (!locked.ok()) return locked.status();
  if (absl::Status s = CheckStreamTeam(c, run_id, locked->get(), access);
      !s.ok()) {
    return s;
  }
  LockedStream stream;
  stream.partition_time = absl::FromUnixMicros(Int64Field(locked->get(), 0, 0));
  stream.partition_micros = Micros(stream.partition_time);
  stream.progress = SampleProgress{
      Int64Field(locked->get(), 0, 2), Int64Field(locked->get(), 0, 1),
      Int64Field(locked->get(), 0, 3), std::nullopt, std::nullopt};
  return stream;
}

// The stored samples of the batch's steps: only steps at or below the
// highest stored step may be stored already.
absl::StatusOr<std::map<int64_t, StepSampleRow>> ReadStoredSteps(
    PqConnection& c, const std::string& run_id, const LockedStream& stream,
    const std::vector<StepSampleRow>& samples) {
  std::vector<int64_t> maybe_stored;
  for (const StepSampleRow& s : samples) {
    if (s.step > stream.progress.max_step) break;
    maybe_stored.push_back(s.step);
  }
  std::map<int64_t, StepSampleRow> stored_steps;
  if (maybe_stored.empty()) return stored_steps;
  const std::string steps =
      absl::StrCat("{", absl::StrJoin(maybe_stored, ","), "}");
  absl::StatusOr<PqResult> existing =
      c.Exec(kExistingSteps,
             {run_id.c_str(), stream.partition_micros.c_str(), steps.c_str()});
  if (!existing.ok()) return existing.status();
  const PGresult* rows = existing->get();
  for (int i = 0; i < PQntuples(rows); ++i) {
    StepSampleRow stored;
    stored.step = Int64Field(rows, i, 0);
    stored.step_time_s = DoubleField(rows, i, 1);
    stored.memory_allocated_gb = DoubleField(rows, i, 2);
    stored.memory_reserved_gb = DoubleField(rows, i, 3);
    stored.tokens = Int64Field(rows, i, 4);
    if (!PQgetisnull(rows, i, 5)) stored.loss = DoubleField(rows, i, 5);
    stored_steps.emplace(stored.step, stored);
  }
  return stored_steps;
}

// Copies the samples whose step is not stored yet (a stored one counts as a
// duplicate, or a conflict when it says something else); returns the new
// steps, ascending.
absl::StatusOr<std::vector<int64_t>> CopyNewSamples(
    PqConnection& c, const std::string& run_id, absl::Time partition_time,
    const std::vector<StepSampleRow>& samples,
    const std::map<int64_t, StepSampleRow>& stored_steps,
    AppendResult& result) {
  BinaryCopy copy;
  copy.Reserve(32 + samples.size() * 118);  // 118 bytes a row
  std::vector<int64_t> new_steps;
  new_steps.reserve(samples.size());
  for (const StepSampleRow& s : samples) {
    if (auto stored = stored_steps.find(s.step); stored != stored_steps.end()) {
      ++result.duplicates;
      if (!SameMeasurement(stored->second, s)) ++result.conflicting;
      continue;
    }
    copy.StartRow(kCopyColumns);
    if (!copy.AddUuid(run_id)) {
      return absl::InvalidArgumentError("run_id is not a UUID");
    }
    copy.AddTimestamp(partition_time);
    copy.AddInt64(s.step);
    copy.AddTimestamp(s.time);
    copy.AddDouble(s.step_time_s);
    copy.AddDouble(s.memory_allocated_gb);
    copy.AddDouble(s.memory_reserved_gb);
    copy.AddInt64(s.tokens);
    if (s.loss.has_value()) {
      copy.AddDouble(*s.loss);
    } else {
      copy.AddNull();
    }
    new_steps.push_back(s.step);
  }
  if (!new_steps.empty()) {
    absl::StatusOr<int64_t> copied =
        c.CopyIn(kCopySamples, std::move(copy).Finish());
    if (!copied.ok()) return copied.status();
  }
  return new_steps;
}

// Moves the stream's progress past `new_steps` (ascending) and stores it.
absl::Status AdvanceProgress(PqConnection& c, const std::string& run_id,
                             const std::string& partition_micros,
                             const std::vector<int64_t>& new_steps,
                             SampleProgress& progress) {
  const bool had_gaps = progress.committed_through_step < progress.max_step;
  if (!new_steps.empty()) {
    progress.max_step = std::max(progress.max_step, new_steps.back());
  }
  if (!had_gaps) {
    progress.committed_through_step =
        AdvanceContiguous(progress.committed_through_step, new_steps);
  } else if (!new_steps.empty()) {
    // Earlier gaps: walk the stored steps past the contiguous prefix.
    const std::string after = std::to_string(progress.committed_through_step);
    absl::StatusOr<PqResult> later = c.Exec(
        kStepsAfter, {run_id.c_str(), partition_micros.c_str(), after.c_str()});
    if (!later.ok()) return later.status();
    std::vector<int64_t> steps;
    for (int i = 0; i < PQntuples(later->get()); ++i) {
      steps.push_back(Int64Field(later->get(), i, 0));
    }
    progress.committed_through_step =
        AdvanceContiguous(progress.committed_through_step, steps);
  }
  progress.samples += static_cast<int64_t>(new_steps.size());

  const std::string max_step = std::to_string(progress.max_step);
  const std::string committed = std::to_string(progress.committed_through_step);
  const std::string count = std::to_string(progress.samples);
  absl::StatusOr<PqResult> updated = c.Exec(
      kUpdateStream,
      {run_id.c_str(), max_step.c_str(), committed.c_str(), count.c_str()});
  return updated.status();
}

}  // namespace

absl::StatusOr<AppendResult> AppendSamples(DbSession& session,
                                           const std::string& run_id,
                                           std::vector<StepSampleRow> samples,
                                           const StreamAccess& access) {
  AppendResult result;
  samples = SortedUnique(std::move(samples), result);
  absl::Time first_time = absl::InfiniteFuture();
  for (const StepSampleRow& s : samples)
    first_time = std::min(first_time, s.time);
  if (samples.empty()) first_time = absl::Now();

  return session.RunRaw([&](PqConnection& c) -> absl::StatusOr<AppendResult> {
    PqTransaction txn(c);
    if (absl::Status s = txn.Begin(); !s.ok()) return s;
    absl::StatusOr<LockedStream> stream =
        LockStream(c, run_id, first_time, access);
    if (!stream.ok()) return stream.status();
    absl::StatusOr<std::map<int64_t, StepSampleRow>> stored_steps =
        ReadStoredSteps(c, run_id, *stream, samples);
    if (!stored_steps.ok()) return stored_steps.status();
    absl::StatusOr<std::vector<int64_t>> new_steps = CopyNewSamples(
        c, run_id, stream->partition_time, samples, *stored_steps, result);
    if (!new_steps.ok()) return new_steps.status();
    result.stored = static_cast<int64_t>(new_steps->size());
    if (absl::Status s = AdvanceProgress(c, run_id, stream->partition_micros,
                                         *new_steps, stream->progress);
        !s.ok()) {
      return s;
    }
    if (absl::Status s = txn.Commit(); !s.ok()) return s;
    result.progress = stream->progress;
    return result;
  });
}

absl::StatusOr<SampleProgress> GetSampleProgress(DbSession& session,
                                                 const std::string& run_id) {
  return session.RunRaw([&](PqConnection& c) -> absl::StatusOr<SampleProgress> {
    absl::StatusOr<PqResult> row = c.Exec(kSelectProgress, {run_id.c_str()});
    if (!row.ok()) return row.status();
    if (PQntuples(row->get()) == 0) return SampleProgress{};  // none yet
    SampleProgress progress{Int64Field(row->get(), 0, 2),
                            Int64Field(row->get(), 0, 1),
                            Int64Field(row->get(), 0, 3), std::nullopt,
                            std::string(PQgetvalue(row->get(), 0, 5))};
    if (!PQgetisnull(row->get(), 0, 4)) {
      progress.samples_dropped_at =
          absl::FromUnixMicros(Int64Field(row->get(), 0, 4));
    }
    return progress;
  });
}

absl::StatusOr<int> EnsureSamplePartitions(DbSession& session, absl::Time from,
                                           int months) {
  return session.RunRaw([&](PqConnection& c) -> absl::StatusOr<int> {
    const std::string from_micros = Micros(from);
    const std::string count = std::to_string(months);
    absl::StatusOr<PqResult> created =
        c.Exec(kEnsurePartitions, {from_micros.c_str(), count.c_str()});
    if (!created.ok()) return created.status();
    return static_cast<int>(Int64Field(created->get(), 0, 0));
  });
}

}  // namespace placement::storage
