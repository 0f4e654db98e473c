#ifndef PLACEMENT_STORAGE_POOL_STATE_STORE_H_
#define PLACEMENT_STORAGE_POOL_STATE_STORE_H_

// pool_states (migration 0024): each pool's last reported state and what
// its reports taught. Written by PoolStateService.ReportPoolState (the whole
// row, under its lock) and by uploads that carry a submission time (their
// wait appended); read by the planner's snapshot (the rows changed since
// its last read). Every statement first asks whether the schema has the
// table (HasPoolStates): before 0024 the snapshot has no state, a report is
// UNAVAILABLE and an upload's wait stays in its bytes.

#include <functional>
#include <map>
#include <optional>
#include <pqxx/pqxx>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "core/queue/queue_history.h"
#include "core/queue/run_time_model.h"
#include "storage/session/db_session.h"
#include "storage/session/transaction_horizon.h"

namespace placement::storage {

struct PoolStateRecord {
  std::string pool_name;
  // The last report; unset before the first (a row may hold only uploaded
  // waits).
  std::optional<absl::Time> observed;
  absl::Time received = absl::InfinitePast();  // the database's clock
  std::string fingerprint;                     // SHA-256 of `report`
  std::string report;  // serialized placement.v1.PoolState as reported
  core::PlannedRunTimes planned;
  core::QueueHistory history;
  // The plans' start forecasts of the placed jobs still waiting: checked by
  // the next report (ReplacePoolState) for those that started, and read by
  // the snapshot as checks already known to lie above a floor
  // (core::StartCalibration).
  std::vector<core::StartPrediction> predictions;
};

bool HasPoolStates(pqxx::transaction_base& txn);

// Every row, by pool name; none before 0024. Throws
// what libpqxx throws: call only inside DbSession::Run.
std::vector<PoolStateRecord> ReadPoolStates(pqxx::transaction_base& txn);
// Only those written by transactions `since` did not see.
std::vector<PoolStateRecord> ReadPoolStatesChangedSince(
    pqxx::transaction_base& txn, const TransactionHorizon& since);

// What the caller decided about a report, given the pool's row as it was
// (locked until the transaction ends).
struct PoolStateDecision {
  // Set: store this row (its received time is the transaction's). Unset:
  // nothing is written (a duplicate); `status` OK.
  std::optional<PoolStateRecord> store;
  absl::Status status;  // not OK: refused, nothing written
};

// The pool's capacity as the catalog has it now, and its row.
struct PoolStateContext {
  int node_count = 0;
  int gpus_per_node = 0;
  std::optional<PoolStateRecord> previous;
  absl::Time now;  // the transaction's start, by the database's clock
  // The stored responses (serialized placement.v1.PlacePlanResponse) of
  // plans by id, read in the same transaction; unknown ids are left out.
  std::function<std::map<std::string, std::string>(
      const std::vector<std::string>& plan_ids)>
      plan_responses;
};

struct PoolStateWritten {
  absl::Time received;
  int64_t evidence_version = 0;  // the transaction's id (0: a duplicate)
  bool duplicate = false;
};

// Replaces `pool_name`'s row with what `decide` returns, in one
// transaction holding the row's lock: NOT_FOUND for an unknown pool,
// UNAVAILABLE before migration 0024, the decision's status when it
// refuses (nothing written).
absl::StatusOr<PoolStateWritten> ReplacePoolState(
    DbSession& session, const std::string& pool_name,
    const std::function<PoolStateDecision(const PoolStateContext&)>& decide);

// Appends an uploaded run's wait to its pool's waits (the newest
// core::kMaxHistoryWaits kept), inside the caller's transaction; nothing
// before 0024.
void AppendUploadedWait(pqxx::transaction_base& txn,
                        const std::string& pool_name, double wait_s);

}  // namespace placement::storage

#endif  // PLACEMENT_STORAGE_POOL_STATE_STORE_H_
