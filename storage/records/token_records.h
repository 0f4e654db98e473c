#ifndef PLACEMENT_STORAGE_TOKEN_RECORDS_H_
#define PLACEMENT_STORAGE_TOKEN_RECORDS_H_

// What storage/stores/token_store.h reads and writes, without its database
// headers, for the code that converts it.

#include <optional>
#include <string>
#include <vector>

#include "absl/time/time.h"

namespace placement::storage {

struct TokenRecord {
  std::string token_id;
  std::string name;
  std::string role;         // AGENT, PLANNER, FINANCE, ADMIN
  std::string secret_hash;  // 32 bytes: SHA-256 of the secret
  absl::Time created_at;
  std::optional<absl::Time> revoked_at;
  // The teams it is bound to, in name order (migration 0023); empty:
  // unbound. Read as empty on an older schema.
  std::vector<std::string> teams;
};

}  // namespace placement::storage

#endif  // PLACEMENT_STORAGE_TOKEN_RECORDS_H_
