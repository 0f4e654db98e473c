// PlacementServer's shutdown against /metrics scrapes: a scrape may arrive at
// any moment of it, and must never read what the shutdown has destroyed
// (under AddressSanitizer a use after free aborts this test).

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
#include "tests/support/metrics_scrape.h"

namespace placement {
namespace {

using ::placement::testing::InProcessServer;

TEST(ServerShutdownTest, MetricsScrapedThroughoutTheShutdownReadNothingFreed) {
  InProcessServer server([](services::ServerOptions& options) {
    options.metrics_address = "127.0.0.1:0";
  });
  const int port = server.server().metrics_port();
  ASSERT_NE(port, 0);
  ASSERT_TRUE(absl::StrContains(testing::ScrapeMetrics(port),
                                "placement_db_workers_busy"));

  std::atomic<bool> stop{false};
  std::atomic<int> answered{0};
  std::vector<std::thread> scrapers;
  for (int i = 0; i < 2; ++i) {
    scrapers.emplace_back([&] {
      while (!stop.load()) {
        if (absl::StrContains(testing::ScrapeMetrics(port),
                              "placement_db_connections_open")) {
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
  EXPECT_EQ(testing::ScrapeMetrics(port), "");
}

}  // namespace
}  // namespace placement
