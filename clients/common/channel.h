#ifndef PLACEMENT_CLIENTS_COMMON_CHANNEL_H_
#define PLACEMENT_CLIENTS_COMMON_CHANNEL_H_

#include <chrono>
#include <memory>
#include <string>

#include <grpcpp/grpcpp.h>

namespace placement::clients {

// Every call from our clients carries a deadline.
inline constexpr std::chrono::seconds kDefaultCallTimeout{15};

// A channel to `server` ("host:port").
std::shared_ptr<grpc::Channel> MakeChannel(const std::string& server);

// A client context whose deadline is `timeout` from now.
std::unique_ptr<grpc::ClientContext> ContextWithDeadline(
    std::chrono::milliseconds timeout = kDefaultCallTimeout);

}  // namespace placement::clients

#endif  // PLACEMENT_CLIENTS_COMMON_CHANNEL_H_
