#include "clients/common/channel.h"

#include <cstdlib>
#include <fstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "common/read_file.h"

namespace placement::clients {
namespace {

ClientSecurity& Security() {
  static auto* const security = new ClientSecurity;
  return *security;
}

std::chrono::milliseconds& CallTimeout() {
  static std::chrono::milliseconds timeout = kDefaultCallTimeout;
  return timeout;
}

}  // namespace

std::string ServerAddress(const std::string& flag) {
  if (!flag.empty()) return flag;
  const char* env = std::getenv("PLACEMENT_SERVER");
  return env != nullptr && *env != '\0' ? env : "127.0.0.1:50051";
}

void SetDefaultCallTimeout(std::chrono::milliseconds timeout) {
  CallTimeout() = timeout;
}

std::chrono::milliseconds DefaultCallTimeout() { return CallTimeout(); }

ClientSecurity WithEnvironmentTls(ClientSecurity security) {
  for (auto [field, variable] :
       {std::pair{&security.ca_file, "PLACEMENT_CA_FILE"},
        std::pair{&security.client_cert_file, "PLACEMENT_CLIENT_CERT"},
        std::pair{&security.client_key_file, "PLACEMENT_CLIENT_KEY"}}) {
    const char* value = std::getenv(variable);
    if (field->empty() && value != nullptr) *field = value;
  }
  return security;
}

void ConfigureClientSecurity(ClientSecurity security) {
  Security() = WithEnvironmentTls(std::move(security));
}

std::string DefaultTokenFile() {
  const char* home = std::getenv("HOME");
  return absl::StrCat(home != nullptr ? home : "", "/.config/placement/token");
}

absl::StatusOr<std::string> FindToken(const std::string& token_file) {
  std::string path = token_file;
  if (path.empty()) {
    if (const char* token = std::getenv("PLACEMENT_TOKEN");
        token != nullptr && *token != '\0') {
      return std::string(token);
    }
    if (const char* file = std::getenv("PLACEMENT_TOKEN_FILE");
        file != nullptr && *file != '\0') {
      path = file;
    }
  }
  if (path.empty()) {
    path = DefaultTokenFile();
    if (!std::ifstream(path)) return std::string();  // no token anywhere
  }
  absl::StatusOr<std::string> text = common::ReadFile(path);
  if (!text.ok()) return text.status();
  const absl::string_view token = absl::StripAsciiWhitespace(*text);
  if (token.empty()) {
    // Said here: sent without a token, the call would only be refused as
    // "missing authorization".
    return absl::InvalidArgumentError(
        absl::StrCat("token file ", path,
                     " is empty: it must hold a bearer token "
                     "(placementd tokens create --role ... --name ...)"));
  }
  return std::string(token);
}

std::shared_ptr<grpc::Channel> MakeChannel(const std::string& server) {
  const ClientSecurity& security = Security();
  if (security.ca_file.empty()) {
    return grpc::CreateChannel(server, grpc::InsecureChannelCredentials());
  }
  grpc::SslCredentialsOptions ssl;
  ssl.pem_root_certs = common::ReadFile(security.ca_file).value_or("");
  if (!security.client_cert_file.empty()) {
    ssl.pem_cert_chain =
        common::ReadFile(security.client_cert_file).value_or("");
    ssl.pem_private_key =
        common::ReadFile(security.client_key_file).value_or("");
  }
  return grpc::CreateChannel(server, grpc::SslCredentials(ssl));
}

std::unique_ptr<grpc::ClientContext> ContextWithDeadline(
    std::chrono::milliseconds timeout) {
  auto context = std::make_unique<grpc::ClientContext>();
  context->set_deadline(std::chrono::system_clock::now() + timeout);
  if (!Security().token.empty()) {
    context->AddMetadata("authorization",
                         absl::StrCat("Bearer ", Security().token));
  }
  return context;
}

}  // namespace placement::clients
