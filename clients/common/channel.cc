#include "clients/common/channel.h"

namespace placement::clients {

std::shared_ptr<grpc::Channel> MakeChannel(const std::string& server) {
  return grpc::CreateChannel(server, grpc::InsecureChannelCredentials());
}

std::unique_ptr<grpc::ClientContext> ContextWithDeadline(
    std::chrono::milliseconds timeout) {
  auto context = std::make_unique<grpc::ClientContext>();
  context->set_deadline(std::chrono::system_clock::now() + timeout);
  return context;
}

}  // namespace placement::clients
