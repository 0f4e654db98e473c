#ifndef PLACEMENT_CLIENTS_COMMON_CHANNEL_H_
#define PLACEMENT_CLIENTS_COMMON_CHANNEL_H_

#include <grpcpp/grpcpp.h>

#include <chrono>
#include <memory>
#include <string>

#include "absl/status/statusor.h"

namespace placement::clients {

// Every call from our clients carries a deadline: this one unless the client
// sets another with SetDefaultCallTimeout.
inline constexpr std::chrono::seconds kDefaultCallTimeout{15};

// How our clients reach the service: a bearer token for every call, and TLS
// when a CA is given (with a client certificate for mutual TLS).
struct ClientSecurity {
  std::string token;
  std::string ca_file;
  std::string client_cert_file;
  std::string client_key_file;
};

// `security` with each empty TLS file taken from the environment:
// $PLACEMENT_CA_FILE, $PLACEMENT_CLIENT_CERT, $PLACEMENT_CLIENT_KEY (flags
// win).
ClientSecurity WithEnvironmentTls(ClientSecurity security);

// Sets the security used by MakeChannel and ContextWithDeadline (after
// WithEnvironmentTls).
void ConfigureClientSecurity(ClientSecurity security);

// The token to use: `token_file` when given, else $PLACEMENT_TOKEN, else the
// file $PLACEMENT_TOKEN_FILE, else ~/.config/placement/token if it exists;
// empty when none. NOT_FOUND when a named file cannot be read.
absl::StatusOr<std::string> FindToken(const std::string& token_file);

// Where the quick start keeps the first admin token.
std::string DefaultTokenFile();

// The server to call: `flag` when given, else $PLACEMENT_SERVER, else
// 127.0.0.1:50051 (placementd's default --listen).
std::string ServerAddress(const std::string& flag);

// A channel to `server` ("host:port"): TLS when a CA is configured.
std::shared_ptr<grpc::Channel> MakeChannel(const std::string& server);

// The deadline ContextWithDeadline gives a call when none is named
// (kDefaultCallTimeout until set).
void SetDefaultCallTimeout(std::chrono::milliseconds timeout);
std::chrono::milliseconds DefaultCallTimeout();

// A client context whose deadline is `timeout` from now, carrying the token.
std::unique_ptr<grpc::ClientContext> ContextWithDeadline(
    std::chrono::milliseconds timeout = DefaultCallTimeout());

}  // namespace placement::clients

#endif  // PLACEMENT_CLIENTS_COMMON_CHANNEL_H_
