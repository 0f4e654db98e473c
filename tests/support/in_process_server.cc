#include "tests/support/in_process_server.h"

#include <cstdlib>
#include <iostream>

namespace placement::testing {

InProcessServer::InProcessServer() {
  db_.Migrate();
  services::ServerOptions options;
  options.listen_address = "127.0.0.1:0";
  options.metrics_address = "";
  options.database_url = db_.url();
  options.db_workers = 4;
  server_ = std::make_unique<services::PlacementServer>(options);
  if (absl::Status status = server_->Start(); !status.ok()) {
    std::cerr << "cannot start the in-process server: " << status << "\n";
    std::abort();
  }
  channel_ = grpc::CreateChannel(
      "127.0.0.1:" + std::to_string(server_->port()),
      grpc::InsecureChannelCredentials());
}

InProcessServer::~InProcessServer() { server_->Shutdown(absl::Seconds(5)); }

}  // namespace placement::testing
