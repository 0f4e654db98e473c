#include "storage/session/transaction_horizon.h"

#include <algorithm>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"

namespace placement::storage {

bool TransactionHorizon::Includes(int64_t xid) const {
  if (xid < xmin) return true;
  if (xid >= xmax) return false;
  return std::find(in_progress.begin(), in_progress.end(), xid) ==
         in_progress.end();
}

std::string TransactionHorizon::ToText() const {
  return absl::StrCat(xmin, ":", xmax, ":", absl::StrJoin(in_progress, ","));
}

absl::StatusOr<TransactionHorizon> TransactionHorizon::Parse(
    absl::string_view text) {
  const std::vector<absl::string_view> parts = absl::StrSplit(text, ':');
  TransactionHorizon horizon;
  if (parts.size() != 3 || !absl::SimpleAtoi(parts[0], &horizon.xmin) ||
      !absl::SimpleAtoi(parts[1], &horizon.xmax)) {
    return absl::DataLossError(
        absl::StrCat("unexpected pg_snapshot text '", text, "'"));
  }
  for (absl::string_view id :
       absl::StrSplit(parts[2], ',', absl::SkipEmpty())) {
    int64_t xid = 0;
    if (!absl::SimpleAtoi(id, &xid)) {
      return absl::DataLossError(
          absl::StrCat("unexpected pg_snapshot text '", text, "'"));
    }
    horizon.in_progress.push_back(xid);
  }
  return horizon;
}

absl::StatusOr<TransactionHorizon> ReadHorizon(pqxx::transaction_base& txn) {
  const pqxx::result rows = txn.exec("SELECT pg_current_snapshot()::text");
  return TransactionHorizon::Parse(rows[0][0].as<std::string>());
}

absl::StatusOr<TransactionHorizon> ReadTransactionHorizon(DbSession& session) {
  return session.Run(
      [&](pqxx::connection_base& c) -> absl::StatusOr<TransactionHorizon> {
        pqxx::read_transaction txn(c);
        return ReadHorizon(txn);
      });
}

}  // namespace placement::storage
