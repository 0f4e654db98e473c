#ifndef PLACEMENT_STORAGE_TRANSACTION_HORIZON_H_
#define PLACEMENT_STORAGE_TRANSACTION_HORIZON_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "storage/session/db_session.h"

namespace placement::storage {

// Which committed transactions a read sees: PostgreSQL's pg_snapshot
// (xmin:xmax:xip) taken at one moment. A transaction id that it includes
// committed before that moment, so every later read sees its writes too.
// Evidence versions are such ids (the transaction that stored a run), which
// makes "has this replica's evidence caught up with that upload?" exact
// without a shared counter that every upload would have to lock.
struct TransactionHorizon {
  int64_t xmin = 0;                  // every id below it is finished
  int64_t xmax = 0;                  // no id at or above it is finished
  std::vector<int64_t> in_progress;  // ids between them not yet finished

  // Whether the committed transaction `xid` is visible at this horizon.
  bool Includes(int64_t xid) const;

  // pg_snapshot's text form ("100:104:100,102"), and its parser.
  std::string ToText() const;
  static absl::StatusOr<TransactionHorizon> Parse(absl::string_view text);
};

// The condition that selects rows written by a transaction a read at
// horizon $1 (its ToText()) did not see, $2 being its xmin: a row's
// change_xid (migration 0009) at or above xmin and not visible then. Only
// the index range change_xid >= xmin is scanned.
#define PLACEMENT_CHANGED_SINCE(column)                      \
  " " column " >= $2 AND NOT pg_visible_in_snapshot(" column \
  "::text::xid8, $1::pg_snapshot) "

// pg_current_snapshot() inside `txn`: in a REPEATABLE READ transaction, read
// first, the snapshot every later statement of it uses.
absl::StatusOr<TransactionHorizon> ReadHorizon(pqxx::transaction_base& txn);

// pg_current_snapshot() on `session`, in a transaction of its own: reads
// started after this call see at least what it includes.
absl::StatusOr<TransactionHorizon> ReadTransactionHorizon(DbSession& session);

}  // namespace placement::storage

#endif  // PLACEMENT_STORAGE_TRANSACTION_HORIZON_H_
