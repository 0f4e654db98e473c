#ifndef PLACEMENT_STORAGE_SCHEMA_REQUIREMENT_H_
#define PLACEMENT_STORAGE_SCHEMA_REQUIREMENT_H_

#include <pqxx/pqxx>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace placement::storage {

// The answer of a call whose table or column the schema does not have yet
// (a binary serves a window of schema versions, docs/RELIABILITY.md):
// FAILED_PRECONDITION naming `what` and the schema `version` that adds it.
// Not UNAVAILABLE: a client retries that for ever, and no retry helps until
// someone runs `placementd migrate up`. A list of such things answers this
// too, rather than an empty page that would read as "there are none".
absl::Status SchemaLacks(absl::string_view what, int version);

// Whether the schema's `table` has `column` (one a migration added, which
// a binary serving older schemas too must ask about before it writes it).
// Throws what libpqxx throws; call only inside DbSession::Run.
bool HasColumn(pqxx::transaction_base& txn, const std::string& table,
               const std::string& column);

}  // namespace placement::storage

#endif  // PLACEMENT_STORAGE_SCHEMA_REQUIREMENT_H_
