#ifndef PLACEMENT_STORAGE_TOKEN_STORE_H_
#define PLACEMENT_STORAGE_TOKEN_STORE_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "storage/db_session.h"

namespace placement::storage {

struct TokenRecord {
  std::string token_id;
  std::string name;
  std::string role;         // AGENT, PLANNER, FINANCE, ADMIN
  std::string secret_hash;  // 32 bytes: SHA-256 of the secret
  absl::Time created_at;
  std::optional<absl::Time> revoked_at;
};

// Stores a new token (the caller made the id and hashed the secret).
absl::Status InsertToken(DbSession& session, const TokenRecord& token);

// Marks a token revoked; NOT_FOUND when there is none with that id. Revoking
// twice keeps the first time.
absl::StatusOr<TokenRecord> RevokeToken(DbSession& session,
                                        const std::string& token_id);

// Every token, newest first (revoked ones too).
absl::StatusOr<std::vector<TokenRecord>> ListTokens(DbSession& session);

}  // namespace placement::storage

#endif  // PLACEMENT_STORAGE_TOKEN_STORE_H_
