#ifndef PLACEMENT_SERVICES_AUTH_TOKEN_DIRECTORY_H_
#define PLACEMENT_SERVICES_AUTH_TOKEN_DIRECTORY_H_

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "services/auth/principal.h"

namespace placement::services {

// Where the Authorizer looks tokens up: the API tokens this replica knows,
// by the SHA-256 of their secret (TokenSecretHash). auth/ owns this
// interface so that it needs nothing of whoever keeps the tokens (the
// evidence cache's snapshot, services/plan/).
class TokenDirectory {
 public:
  virtual ~TokenDirectory() = default;

  // The principal of the unrevoked token whose secret hashes to
  // `secret_hash`. NOT_FOUND for a token that is unknown or revoked (a
  // revocation counts from the directory's next re-read), UNAVAILABLE
  // before the tokens are loaded.
  virtual absl::StatusOr<Principal> FindToken(
      absl::string_view secret_hash) const = 0;
};

}  // namespace placement::services

#endif  // PLACEMENT_SERVICES_AUTH_TOKEN_DIRECTORY_H_
