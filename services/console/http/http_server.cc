#include "services/console/http/http_server.h"

#include <atomic>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/strand.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <chrono>
#include <optional>
#include <thread>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "services/console/http/security_headers.h"

namespace placement::services::console {

namespace beast = boost::beast;
namespace http = boost::beast::http;
namespace net = boost::asio;
using tcp = boost::asio::ip::tcp;

struct HttpServer::Impl {
  Impl(HttpServerOptions options, Handler handler)
      : options(std::move(options)),
        handler(std::move(handler)),
        io(this->options.threads),
        acceptor(net::make_strand(io)) {}

  void Accept();

  const HttpServerOptions options;
  const Handler handler;
  net::io_context io;
  tcp::acceptor acceptor;
  std::vector<std::thread> threads;
  std::atomic<int> connections{0};
  bool stopped = false;
};

namespace {

std::chrono::steady_clock::duration Chrono(absl::Duration d) {
  return absl::ToChronoNanoseconds(d);
}

std::string Header(const http::request<http::string_body>& request,
                   http::field field) {
  auto it = request.find(field);
  return it == request.end() ? std::string() : std::string(it->value());
}

// One connection: read a request, hand it to the handler, write the
// answer, again while the client keeps the connection alive.
class Session : public std::enable_shared_from_this<Session> {
 public:
  Session(tcp::socket socket, HttpServer::Impl& server)
      : stream_(std::move(socket)),
        // The buffer cannot grow past what the parser accepts.
        buffer_(server.options.max_header_bytes +
                server.options.max_body_bytes + 1024),
        server_(server) {
    server_.connections.fetch_add(1);
  }
  ~Session() { server_.connections.fetch_sub(1); }

  void Start() {
    net::dispatch(
        stream_.get_executor(),
        beast::bind_front_handler(&Session::Read, shared_from_this()));
  }

 private:
  void Read() {
    parser_.emplace();
    parser_->header_limit(
        static_cast<std::uint32_t>(server_.options.max_header_bytes));
    parser_->body_limit(server_.options.max_body_bytes);
    stream_.expires_after(Chrono(served_ == 0 ? server_.options.read_timeout
                                              : server_.options.idle_timeout));
    http::async_read(
        stream_, buffer_, *parser_,
        beast::bind_front_handler(&Session::OnRead, shared_from_this()));
  }

  void OnRead(beast::error_code ec, std::size_t /*bytes*/) {
    if (ec == http::error::end_of_stream || ec == beast::error::timeout ||
        ec == net::error::operation_aborted || ec == net::error::eof ||
        ec == net::error::connection_reset) {
      return Close();
    }
    if (ec) {
      // The parser refused the request: say why, then close (what follows
      // on the connection cannot be framed).
      HttpResponse refusal;
      refusal.content_type = "text/plain; charset=utf-8";
      if (ec == http::error::header_limit) {
        refusal.status = 431;
        refusal.body = "request line and headers too large\n";
      } else if (ec == http::error::body_limit) {
        refusal.status = 413;
        refusal.body = "request body too large\n";
      } else {
        refusal.status = 400;
        refusal.body = "malformed HTTP request\n";
      }
      return Write(std::move(refusal), /*keep_alive=*/false);
    }
    const http::request<http::string_body>& in = parser_->get();
    HttpRequest request;
    request.method = std::string(in.method_string());
    request.target = std::string(in.target());
    request.authorization = Header(in, http::field::authorization);
    request.cookie = Header(in, http::field::cookie);
    request.origin = Header(in, http::field::origin);
    request.host = Header(in, http::field::host);
    request.content_type = Header(in, http::field::content_type);
    request.body = in.body();
    const bool keep_alive =
        in.keep_alive() &&
        ++served_ < server_.options.max_requests_per_connection;
    // Not read again until answered: no timer runs while the handler works
    // (its own deadline bounds it).
    stream_.expires_never();
    auto self = shared_from_this();
    server_.handler(request, [self, keep_alive](HttpResponse response) {
      net::post(self->stream_.get_executor(),
                [self, keep_alive, response = std::move(response)]() mutable {
                  self->Write(std::move(response), keep_alive);
                });
    });
  }

  void Write(HttpResponse response, bool keep_alive) {
    auto out = std::make_shared<http::response<http::string_body>>(
        static_cast<http::status>(response.status), 11);
    out->set(http::field::content_type, response.content_type);
    for (const auto& [name, value] : SecureHeaders(response)) {
      out->set(name, value);
    }
    for (const auto& [name, value] : response.headers) {
      out->insert(name, value);
    }
    out->body() = std::move(response.body);
    out->keep_alive(keep_alive);
    out->prepare_payload();
    stream_.expires_after(Chrono(server_.options.write_timeout));
    http::async_write(stream_, *out,
                      [self = shared_from_this(), out, keep_alive](
                          beast::error_code ec, std::size_t) {
                        if (ec || !keep_alive) return self->Close();
                        self->Read();
                      });
  }

  void Close() {
    beast::error_code ignored;
    stream_.socket().shutdown(tcp::socket::shutdown_send, ignored);
    stream_.socket().close(ignored);
  }

  beast::tcp_stream stream_;
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
  HttpServer::Impl& server_;
  int served_ = 0;
};

}  // namespace

void HttpServer::Impl::Accept() {
  acceptor.async_accept(
      net::make_strand(io), [this](beast::error_code ec, tcp::socket socket) {
        if (ec == net::error::operation_aborted || !acceptor.is_open()) return;
        if (!ec) {
          if (connections.load() >= options.max_connections) {
            beast::error_code ignored;
            socket.close(ignored);  // over the bound: refused at once
          } else {
            std::make_shared<Session>(std::move(socket), *this)->Start();
          }
        }
        Accept();
      });
}

HttpServer::HttpServer(HttpServerOptions options, Handler handler)
    : impl_(std::make_unique<Impl>(std::move(options), std::move(handler))) {}

HttpServer::~HttpServer() { Stop(); }

absl::Status HttpServer::Start() {
  const std::string& address = impl_->options.address;
  const size_t colon = address.rfind(':');
  int port = 0;
  if (colon == std::string::npos ||
      !absl::SimpleAtoi(address.substr(colon + 1), &port) || port < 0 ||
      port > 65535) {
    return absl::InvalidArgumentError(
        absl::StrCat("console address '", address, "' is not host:port"));
  }
  std::string host = address.substr(0, colon);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  beast::error_code ec;
  tcp::resolver resolver(impl_->io);
  auto endpoints =
      resolver.resolve(host, std::to_string(port), tcp::resolver::passive, ec);
  if (ec || endpoints.empty()) {
    return absl::UnavailableError(absl::StrCat(
        "cannot resolve the console address ", address, ": ", ec.message()));
  }
  const tcp::endpoint endpoint = endpoints.begin()->endpoint();
  tcp::acceptor& acceptor = impl_->acceptor;
  acceptor.open(endpoint.protocol(), ec);
  if (!ec) acceptor.set_option(net::socket_base::reuse_address(true), ec);
  if (!ec) acceptor.bind(endpoint, ec);
  if (!ec) acceptor.listen(net::socket_base::max_listen_connections, ec);
  if (ec) {
    return absl::UnavailableError(absl::StrCat("cannot serve the console on ",
                                               address, ": ", ec.message()));
  }
  port_ = acceptor.local_endpoint().port();
  impl_->Accept();
  for (int i = 0; i < std::max(1, impl_->options.threads); ++i) {
    impl_->threads.emplace_back([this] { impl_->io.run(); });
  }
  return absl::OkStatus();
}

int HttpServer::connections() const { return impl_->connections.load(); }

void HttpServer::StopAccepting() {
  net::post(impl_->acceptor.get_executor(), [impl = impl_.get()] {
    beast::error_code ignored;
    impl->acceptor.close(ignored);
  });
}

void HttpServer::Stop() {
  if (impl_ == nullptr || impl_->stopped) return;
  impl_->stopped = true;
  StopAccepting();
  impl_->io.stop();
  for (std::thread& t : impl_->threads) t.join();
  impl_->threads.clear();
}

}  // namespace placement::services::console
