// PlacementServer's shutdown against /metrics scrapes: a scrape may arrive at
// any moment of it, and must never read what the shutdown has destroyed
// (under AddressSanitizer a use after free aborts this test).
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <atomic>
#include <iostream>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "tests/support/in_process_server.h"

namespace placement {
namespace {

using ::placement::testing::InProcessServer;

// GET /metrics over a plain socket; "" when the server does not answer
// (a connection the stopping server accepted but will not serve is given
// up after a second).
std::string Scrape(int port) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return "";
  timeval timeout{};
  timeout.tv_sec = 1;
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof(timeout));
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<uint16_t>(port));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  std::string response;
  if (connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) ==
      0) {
    const std::string request =
        "GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n";
    if (send(fd, request.data(), request.size(), MSG_NOSIGNAL) ==
        static_cast<ssize_t>(request.size())) {
      char buffer[16384];
      ssize_t n;
      while ((n = recv(fd, buffer, sizeof(buffer), 0)) > 0) {
        response.append(buffer, static_cast<size_t>(n));
      }
    }
  }
  close(fd);
  return response;
}

TEST(ServerShutdownTest, MetricsScrapedThroughoutTheShutdownReadNothingFreed) {
  InProcessServer server([](services::ServerOptions& options) {
    options.metrics_address = "127.0.0.1:0";
  });
  const int port = server.server().metrics_port();
  ASSERT_NE(port, 0);
  ASSERT_TRUE(absl::StrContains(Scrape(port), "placement_db_workers_busy"));

  std::atomic<bool> stop{false};
  std::atomic<int> answered{0};
  std::vector<std::thread> scrapers;
  for (int i = 0; i < 2; ++i) {
    scrapers.emplace_back([&] {
      while (!stop.load()) {
        if (absl::StrContains(Scrape(port), "placement_db_connections_open")) {
          answered.fetch_add(1);
        }
      }
    });
  }
  while (answered.load() < 5) absl::SleepFor(absl::Milliseconds(1));
  const absl::Time start = absl::Now();
  server.server().Shutdown(absl::Seconds(1));
  std::cout << "shutdown took " << absl::Now() - start << " with "
            << answered.load() << " scrapes answered\n";
  stop.store(true);
  for (std::thread& t : scrapers) t.join();
  // Stopped: /metrics is gone with the server.
  EXPECT_EQ(Scrape(port), "");
}

}  // namespace
}  // namespace placement
