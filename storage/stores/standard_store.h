#ifndef PLACEMENT_STORAGE_STANDARD_STORE_H_
#define PLACEMENT_STORAGE_STANDARD_STORE_H_

// Standards (migration 0021): written, read, listed and retired by the
// standards RPCs; the active ones read whole by every catalog read (the
// planner's snapshot). Every statement first asks whether the schema has
// the table (HasStandards): before 0021 the snapshot has none and the RPCs
// get FAILED_PRECONDITION (SchemaLacks).

#include <optional>
#include <pqxx/pqxx>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "storage/records/standard_records.h"
#include "storage/session/db_session.h"

namespace placement::storage {

bool HasStandards(pqxx::transaction_base& txn);

// The active standards, by id (none before 0021). Throws what libpqxx
// throws; call only inside DbSession::Run.
std::vector<StandardRecord> ReadActiveStandards(pqxx::transaction_base& txn);

// Stores `record` (its created time is the database's now). Idempotent on
// its request_id: when a standard already holds it, that standard is
// returned if its fingerprint is the same, ALREADY_EXISTS if not.
absl::StatusOr<StandardRecord> InsertStandard(DbSession& session,
                                              const StandardRecord& record);

// The standard `request_id` wrote, if any (a retry of a committed write
// answers it before the proof is judged again).
absl::StatusOr<std::optional<StandardRecord>> FindStandardByRequestId(
    DbSession& session, const std::string& request_id);

// NOT_FOUND when no standard has that id.
absl::StatusOr<StandardRecord> GetStandard(DbSession& session,
                                           const std::string& standard_id);

// Newest first (created time, then id, descending). With `teams`, only the
// standards of those teams and the fleet-wide ones (team '').
absl::StatusOr<StandardPage> ListStandards(
    DbSession& session, const StandardCursor& after, int page_size,
    bool include_retired, const std::vector<std::string>& teams);

// Retires an active standard now; a retired one is returned unchanged.
// NOT_FOUND when no standard has that id.
absl::StatusOr<StandardRecord> RetireStandard(DbSession& session,
                                              const std::string& standard_id,
                                              const std::string& retired_by,
                                              const std::string& reason);

}  // namespace placement::storage

#endif  // PLACEMENT_STORAGE_STANDARD_STORE_H_
