#ifndef PLACEMENT_SERVICES_CONSOLE_ACCESS_H_
#define PLACEMENT_SERVICES_CONSOLE_ACCESS_H_

// Who is looking, and what they may see: the console takes the API's tokens
// and decides by the API's one role table (services::MethodRules). A page,
// or a section of one, shows what an RPC answers and is shown to exactly
// the roles that may call that RPC.

#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "services/auth/principal.h"
#include "services/auth/token_directory.h"
#include "services/console/http/http_message.h"

namespace placement::services::console {

// The RPCs the console's pages and sections read as (each is in
// MethodRules(); a test checks it).
namespace reads_as {
inline constexpr char kListPools[] = "/placement.v1.CatalogService/ListPools";
inline constexpr char kGetPool[] = "/placement.v1.CatalogService/GetPool";
inline constexpr char kGetCostReport[] =
    "/placement.v1.CostService/GetCostReport";
inline constexpr char kListBenchmarkRuns[] =
    "/placement.v1.TelemetryService/ListBenchmarkRuns";
inline constexpr char kGetPlan[] = "/placement.v1.PlacementService/GetPlan";
inline constexpr char kGetBakeOffStatus[] =
    "/placement.v1.PlacementService/GetBakeOffStatus";
inline constexpr char kGetPlanAccuracy[] =
    "/placement.v1.PlacementService/GetPlanAccuracy";
inline constexpr char kListStandards[] =
    "/placement.v1.PlacementService/ListStandards";
}  // namespace reads_as

// The short name of a method ("GetCostReport"), for what a page says.
absl::string_view MethodShortName(absl::string_view method);

// The caller of one request.
class Viewer {
 public:
  // placementd runs with --auth=false: every page is open.
  static Viewer Unauthenticated();
  static Viewer Of(Principal principal);

  // Whether the role table lets this caller call `method` (and, for a
  // token bound to teams, whether `method` is not one of the fleet's).
  bool MayRead(absl::string_view method) const;
  // "name (PLANNER)", or "anyone (auth is off)".
  std::string Describe() const;
  const std::optional<Principal>& principal() const { return principal_; }

 private:
  explicit Viewer(std::optional<Principal> principal)
      : principal_(std::move(principal)) {}
  std::optional<Principal> principal_;  // nullopt: auth is off
};

// The cookie a browser keeps its token in after /login: HttpOnly (no script
// reads it), SameSite=Strict (no other site's page sends it), Path=/.
inline constexpr char kSessionCookieName[] = "placement_console";
inline constexpr int kSessionCookieSeconds = 12 * 3600;
std::string SessionCookie(absl::string_view token);
std::string ClearedSessionCookie();

// The token a request presents: the Authorization header's bearer token,
// else the session cookie's; "" when it presents none. A token is taken
// from nowhere else (never from the URL: query.h refuses one there).
std::string PresentedToken(const HttpRequest& request);

// Resolves `token` against the replica's tokens as the gRPC Authorizer
// does (its SHA-256 looked up): UNAUTHENTICATED for none, an unknown or a
// revoked token; UNAVAILABLE before the tokens are loaded. With auth off,
// every caller is Viewer::Unauthenticated().
absl::StatusOr<Viewer> Authenticate(absl::string_view token,
                                    const TokenDirectory& tokens,
                                    bool auth_enabled);

}  // namespace placement::services::console

#endif  // PLACEMENT_SERVICES_CONSOLE_ACCESS_H_
