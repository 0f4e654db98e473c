#include "services/console/http/security_headers.h"

namespace placement::services::console {

std::vector<std::pair<std::string, std::string>> SecureHeaders(
    const HttpResponse& response) {
  std::vector<std::pair<std::string, std::string>> headers = {
      {"Content-Security-Policy", kContentSecurityPolicy},
      {"X-Content-Type-Options", "nosniff"},
      // same-origin, not no-referrer: with no-referrer a browser sends
      // "Origin: null" on the sign-in form, and the origin check refuses it.
      {"Referrer-Policy", "same-origin"},
      {"X-Frame-Options", "DENY"},
      {"Cross-Origin-Opener-Policy", "same-origin"},
      {"Cross-Origin-Resource-Policy", "same-origin"},
  };
  // Assets change only with the binary; an hour keeps a page's reloads
  // from asking again. Pages and errors are never stored: they hold what a
  // token was needed to read.
  headers.emplace_back("Cache-Control", response.cacheable
                                            ? "private, max-age=3600"
                                            : "no-store");
  return headers;
}

}  // namespace placement::services::console
