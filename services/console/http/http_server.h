#ifndef PLACEMENT_SERVICES_CONSOLE_HTTP_HTTP_SERVER_H_
#define PLACEMENT_SERVICES_CONSOLE_HTTP_HTTP_SERVER_H_

// The console's HTTP/1.1 server, on Boost.Beast (docs/CONSOLE.md says why
// Beast): a few threads running one io_context, each connection on its own
// strand. Bounded like the API: connections at once, the bytes of a
// request's line and headers and of its body (the parser refuses beyond
// them, so a connection's buffer never grows past them), the time to read a
// request and to write an answer, and requests per connection. A request
// the parser refuses is answered 400, 413 or 431 and the connection closed;
// one that takes too long is closed. Every answer carries SecureHeaders().
// This is the only file that includes Beast.

#include <functional>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "services/console/http/http_message.h"

namespace placement::services::console {

struct HttpServerOptions {
  std::string address = "127.0.0.1:8080";  // host:port; port 0: any free
  int threads = 2;
  int max_connections = 128;           // beyond them, a new one is closed
  size_t max_header_bytes = 16 << 10;  // request line and headers
  size_t max_body_bytes = 4 << 10;     // the sign-in form's
  absl::Duration read_timeout = absl::Seconds(10);  // one whole request
  absl::Duration idle_timeout = absl::Seconds(30);  // between requests
  absl::Duration write_timeout = absl::Seconds(30);
  int max_requests_per_connection = 1000;
};

class HttpServer {
 public:
  // Answers a request by calling the second argument exactly once, from
  // any thread, at once or later.
  using Respond = std::function<void(HttpResponse)>;
  using Handler = std::function<void(const HttpRequest&, Respond)>;

  HttpServer(HttpServerOptions options, Handler handler);
  ~HttpServer();  // Stop()

  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // Binds and starts the threads. UNAVAILABLE when the address cannot be
  // bound or resolved.
  absl::Status Start();
  int port() const { return port_; }
  // How many connections are open now.
  int connections() const;

  // Closes the listening socket: no new connection.
  void StopAccepting();
  // Closes every connection and joins the threads. Every Respond the
  // handler still holds must have been called (or destroyed) before.
  void Stop();

  // The Beast side, defined in http_server.cc (named here so that its
  // connections may refer to it).
  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
  int port_ = 0;
};

}  // namespace placement::services::console

#endif  // PLACEMENT_SERVICES_CONSOLE_HTTP_HTTP_SERVER_H_
