#include "services/console/access.h"

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "services/auth/auth.h"

namespace placement::services::console {

absl::string_view MethodShortName(absl::string_view method) {
  const size_t slash = method.rfind('/');
  return slash == absl::string_view::npos ? method : method.substr(slash + 1);
}

Viewer Viewer::Unauthenticated() { return Viewer(std::nullopt); }

Viewer Viewer::Of(Principal principal) { return Viewer(std::move(principal)); }

bool Viewer::MayRead(absl::string_view method) const {
  if (!principal_.has_value()) return true;
  if (!RoleMayCall(principal_->role, method)) return false;
  // As the Authorizer: a method that acts on the whole fleet is refused to
  // a token bound to teams (none of the pages reads as one today).
  if (principal_->teams.empty()) return true;
  for (const MethodRule& rule : MethodRules()) {
    if (rule.method == method) return !rule.fleet;
  }
  return false;
}

std::string Viewer::Describe() const {
  if (!principal_.has_value())
    return "anyone (placementd runs with --auth=false)";
  return absl::StrCat(principal_->name, " (", RoleName(principal_->role), ")");
}

std::string SessionCookie(absl::string_view token) {
  return absl::StrCat(
      kSessionCookieName, "=", token,
      "; Path=/; HttpOnly; SameSite=Strict; Max-Age=", kSessionCookieSeconds);
}

std::string ClearedSessionCookie() {
  return absl::StrCat(kSessionCookieName,
                      "=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0");
}

std::string PresentedToken(const HttpRequest& request) {
  absl::string_view header = request.authorization;
  if (!header.empty()) {
    // "Bearer <token>", the scheme case-insensitive (RFC 9110); anything
    // else presents no token.
    if (header.size() > 7 &&
        absl::EqualsIgnoreCase(header.substr(0, 7), "bearer ")) {
      return std::string(absl::StripAsciiWhitespace(header.substr(7)));
    }
    return "";
  }
  for (absl::string_view pair : absl::StrSplit(request.cookie, ';')) {
    pair = absl::StripAsciiWhitespace(pair);
    if (absl::ConsumePrefix(&pair, kSessionCookieName) &&
        absl::ConsumePrefix(&pair, "=")) {
      return std::string(pair);
    }
  }
  return "";
}

absl::StatusOr<Viewer> Authenticate(absl::string_view token,
                                    const TokenDirectory& tokens,
                                    bool auth_enabled) {
  if (!auth_enabled) return Viewer::Unauthenticated();
  if (token.empty()) {
    return absl::UnauthenticatedError(
        "no token: send 'Authorization: Bearer <token>' or sign in at /login");
  }
  absl::StatusOr<Principal> principal =
      tokens.FindToken(TokenSecretHash(token));
  if (absl::IsNotFound(principal.status())) {
    return absl::UnauthenticatedError("unknown or revoked token");
  }
  if (!principal.ok()) return principal.status();
  return Viewer::Of(*std::move(principal));
}

}  // namespace placement::services::console
