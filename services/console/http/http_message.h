#ifndef PLACEMENT_SERVICES_CONSOLE_HTTP_HTTP_MESSAGE_H_
#define PLACEMENT_SERVICES_CONSOLE_HTTP_HTTP_MESSAGE_H_

// An HTTP request and response as the console sees them: plain values, no
// HTTP library's types, so that everything but the server itself
// (http_server.h) is built and tested without sockets.

#include <string>
#include <utility>
#include <vector>

namespace placement::services::console {

struct HttpRequest {
  std::string method;  // "GET", "HEAD", "POST", ...
  // The request target as sent: the path and the query ("/pool?name=a").
  std::string target;
  // The headers the console reads ("" when absent). Bounded by the
  // server's header limit.
  std::string authorization;
  std::string cookie;
  std::string origin;
  std::string host;
  std::string content_type;
  std::string body;  // bounded by the server's body limit
};

struct HttpResponse {
  int status = 200;
  std::string content_type = "text/html; charset=utf-8";
  std::string body;
  // Further headers (Location, Set-Cookie, Retry-After, ...). The security
  // headers every response carries are added by SecureHeaders().
  std::vector<std::pair<std::string, std::string>> headers;
  // Static assets may be cached by the browser; every other answer says
  // no-store (pages hold data a token was needed for).
  bool cacheable = false;
};

}  // namespace placement::services::console

#endif  // PLACEMENT_SERVICES_CONSOLE_HTTP_HTTP_MESSAGE_H_
