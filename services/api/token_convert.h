#ifndef PLACEMENT_SERVICES_API_TOKEN_CONVERT_H_
#define PLACEMENT_SERVICES_API_TOKEN_CONVERT_H_

#include <optional>
#include <string>
#include <vector>

#include "core/field_violation.h"
#include "placement/v1/catalog.pb.h"
#include "services/auth/principal.h"
#include "storage/records/token_records.h"

namespace placement::services {

v1::Role RoleToProto(Role role);
// nullopt for ROLE_UNSPECIFIED and numbers the enum does not declare.
std::optional<Role> RoleFromProto(v1::Role role);

// A stored token as the API shows it (never its secret or hash).
v1::ApiToken TokenToProto(const storage::TokenRecord& token);

// At most this many teams a token.
inline constexpr int kMaxTokenTeams = 32;

// The teams a token is to be bound to, in name order, each once; a
// violation (field `teams`) for more than kMaxTokenTeams or an empty or
// over-long name (the characters are Admit's to check).
std::vector<std::string> TokenTeamsFromProto(
    const google::protobuf::RepeatedPtrField<std::string>& teams,
    core::FieldViolations* violations);

}  // namespace placement::services

#endif  // PLACEMENT_SERVICES_API_TOKEN_CONVERT_H_
