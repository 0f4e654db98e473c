#ifndef PLACEMENT_SERVICES_CONSOLE_ROUTES_H_
#define PLACEMENT_SERVICES_CONSOLE_ROUTES_H_

// The console's fixed table of paths. A path is found by exact comparison
// (nothing is decoded, joined or looked up on disk), so a traversal or any
// other unknown path is simply not found, and every answer is counted under
// a label from this table: an unknown path costs no state of its own.

#include <string>
#include <vector>

#include "absl/strings/string_view.h"

namespace placement::services::console {

enum class PageId {
  kPools,
  kPool,
  kPlans,
  kPlan,
  kAccuracy,
  kCost,
  kCostCsv,
  kStandards,
};

enum class RouteKind {
  kHome,    // "/": to the first page the caller may read
  kLogin,   // GET: the form; POST: checks the token, sets the cookie
  kLogout,  // POST: clears the cookie
  kAsset,   // a stylesheet or script compiled into placementd
  kPage,    // a page of data, behind a token
};

struct Route {
  RouteKind kind;
  const char* path;
  // The metrics label (placement_console_requests_total{page=...}).
  const char* label;
  PageId page = PageId::kPools;  // kPage only
  // kPage: the RPC whose role rule (services::MethodRules) admits a caller
  // to the page, because the page shows what that RPC answers.
  const char* reads_as = "";
  // kPage: its name in the navigation; empty for pages reached by a link.
  const char* nav_title = "";
};

// Every route, the pages in navigation order.
const std::vector<Route>& Routes();

// The route of `path` compared exactly; null for any other path.
const Route* FindRoute(absl::string_view path);

// The route of a page (every PageId has one).
const Route& RouteOf(PageId page);

// The label unknown paths are counted under.
inline constexpr char kUnknownLabel[] = "unknown";

}  // namespace placement::services::console

#endif  // PLACEMENT_SERVICES_CONSOLE_ROUTES_H_
