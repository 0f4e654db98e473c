#ifndef PLACEMENT_SERVICES_API_TOKEN_CONVERT_H_
#define PLACEMENT_SERVICES_API_TOKEN_CONVERT_H_

#include <optional>

#include "placement/v1/catalog.pb.h"
#include "services/auth/auth.h"
#include "storage/token_store.h"

namespace placement::services {

v1::Role RoleToProto(Role role);
// nullopt for ROLE_UNSPECIFIED and numbers the enum does not declare.
std::optional<Role> RoleFromProto(v1::Role role);

// A stored token as the API shows it (never its secret or hash).
v1::ApiToken TokenToProto(const storage::TokenRecord& token);

}  // namespace placement::services

#endif  // PLACEMENT_SERVICES_API_TOKEN_CONVERT_H_
