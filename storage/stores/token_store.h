#ifndef PLACEMENT_STORAGE_TOKEN_STORE_H_
#define PLACEMENT_STORAGE_TOKEN_STORE_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "storage/records/token_records.h"
#include "storage/session/db_session.h"
#include "storage/session/transaction_horizon.h"

namespace placement::storage {

// Stores a new token (the caller made the id and hashed the secret).
// FAILED_PRECONDITION for a token bound to teams on a schema before 0023.
absl::Status InsertToken(DbSession& session, const TokenRecord& token);

// Marks a token revoked; NOT_FOUND when there is none with that id. Revoking
// twice keeps the first time.
absl::StatusOr<TokenRecord> RevokeToken(DbSession& session,
                                        const std::string& token_id);

// Every token, newest first (revoked ones too).
absl::StatusOr<std::vector<TokenRecord>> ListTokens(DbSession& session);
// The same inside the caller's transaction `txn` (for reads that must see
// one point in time, see ReadCatalog); throws what libpqxx throws, so call it
// only inside DbSession::Run.
std::vector<TokenRecord> ReadTokens(pqxx::transaction_base& txn);
// Only the rows inserted or updated by transactions `since` did not see
// (migration 0009), inside the caller's transaction.
std::vector<TokenRecord> ReadTokensChangedSince(
    pqxx::transaction_base& txn, const TransactionHorizon& since);

// Where a page of tokens starts: after the token created at `created_at`
// with id `token_id` in ListTokens' order (a key, not a position, so that a
// token created or revoked between pages shifts nothing).
struct TokenCursor {
  absl::Time created_at = absl::InfiniteFuture();
  std::string token_id;  // empty: from the start
};

// Up to `limit` tokens after `after`, newest first, and whether more follow.
struct TokenPage {
  std::vector<TokenRecord> tokens;
  bool more = false;
};
absl::StatusOr<TokenPage> ListTokensPage(DbSession& session,
                                         const TokenCursor& after, int limit);

}  // namespace placement::storage

#endif  // PLACEMENT_STORAGE_TOKEN_STORE_H_
