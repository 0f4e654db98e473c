#ifndef PLACEMENT_TESTS_SUPPORT_IN_PROCESS_SERVER_H_
#define PLACEMENT_TESTS_SUPPORT_IN_PROCESS_SERVER_H_

#include <grpcpp/grpcpp.h>

#include <functional>
#include <memory>
#include <string>

#include "services/server/placement_server.h"
#include "tests/support/test_database.h"

namespace placement::testing {

// A migrated test database and a PlacementServer on a free loopback port in
// this process (so the sanitizers see the server's code too).
class InProcessServer {
 public:
  // Auth off (the auth tests turn it on through `configure`).
  InProcessServer();
  // With options adjusted by `configure` (auth off unless it turns it on).
  explicit InProcessServer(
      const std::function<void(services::ServerOptions&)>& configure);
  ~InProcessServer();

  const TestDatabase& db() const { return db_; }
  std::shared_ptr<grpc::Channel> channel() const { return channel_; }
  services::PlacementServer& server() { return *server_; }

 private:
  TestDatabase db_;
  std::unique_ptr<services::PlacementServer> server_;
  std::shared_ptr<grpc::Channel> channel_;
};

}  // namespace placement::testing

#endif  // PLACEMENT_TESTS_SUPPORT_IN_PROCESS_SERVER_H_
