#include "tests/support/in_process_server.h"

#include <cstdlib>
#include <iostream>

#include "absl/time/clock.h"

namespace placement::testing {

InProcessServer::InProcessServer()
    : InProcessServer([](services::ServerOptions&) {}) {}

InProcessServer::InProcessServer(
    const std::function<void(services::ServerOptions&)>& configure) {
  db_.Migrate();
  services::ServerOptions options;
  options.listen_address = "127.0.0.1:0";
  options.metrics_address = "";
  options.database_url = db_.url();
  options.db_workers = 4;
  options.auth_enabled = false;
  // The fleet model keeps its first fit unless `configure` asks for
  // re-fits: what a plan says must not depend on how long the test has run.
  options.fleet_refit_interval = absl::Hours(24);
  configure(options);
  server_ = std::make_unique<services::PlacementServer>(options);
  if (absl::Status status = server_->Start(); !status.ok()) {
    std::cerr << "cannot start the in-process server: " << status << "\n";
    std::abort();
  }
  channel_ = grpc::CreateChannel("127.0.0.1:" + std::to_string(server_->port()),
                                 grpc::InsecureChannelCredentials());
  // Ready when the pools, evidence and tokens are in memory.
  for (int i = 0; i < 500 && server_->evidence().Current() == nullptr; ++i) {
    absl::SleepFor(absl::Milliseconds(10));
  }
}

InProcessServer::~InProcessServer() { server_->Shutdown(absl::Seconds(5)); }

}  // namespace placement::testing
