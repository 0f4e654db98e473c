#ifndef PLACEMENT_SERVICES_CONSOLE_HTTP_SECURITY_HEADERS_H_
#define PLACEMENT_SERVICES_CONSOLE_HTTP_SECURITY_HEADERS_H_

#include <string>
#include <utility>
#include <vector>

#include "services/console/http/http_message.h"

namespace placement::services::console {

// The Content-Security-Policy of every console response: scripts, styles,
// images and forms from the console's own origin only, no inline script or
// style (every script and style is a file placementd serves), no plug-ins,
// no framing, no connection elsewhere.
inline constexpr char kContentSecurityPolicy[] =
    "default-src 'none'; script-src 'self'; style-src 'self'; "
    "img-src 'self'; connect-src 'self'; form-action 'self'; "
    "base-uri 'none'; frame-ancestors 'none'";

// The headers every response carries, whatever its status: the policy
// above, no MIME sniffing, no referrer to other origins, no framing, and
// caching as `response.cacheable` says (no-store otherwise).
std::vector<std::pair<std::string, std::string>> SecureHeaders(
    const HttpResponse& response);

}  // namespace placement::services::console

#endif  // PLACEMENT_SERVICES_CONSOLE_HTTP_SECURITY_HEADERS_H_
